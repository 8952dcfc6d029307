#include <csiop/driverdeployment/config_hash.hpp>

#include <map>

#include <openssl/evp.h>

#include <csiop/api/json_access.hpp>

namespace csiop::driverdeployment {
namespace {

// key=value lines of an object field, keys sorted, sizes first so that no two contents
// can print alike.
void append(std::string& out, const Json& field) {
  if (!field.is_object()) {
    return;
  }
  std::map<std::string, std::string> sorted;
  for (const auto& [k, v] : field.items()) {
    sorted[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  for (const auto& [k, v] : sorted) {
    out += std::to_string(k.size()) + ":" + k + "=" + std::to_string(v.size()) + ":" + v + "\n";
  }
}

} // namespace

std::string configContentHash(const std::vector<ReadReference>& references) {
  std::string text;
  for (const auto& [ref, object] : references) {
    text += ref.str() + "\n";
    if (!object) {
      text += "absent\n";
      continue;
    }
    text += "data\n";
    append(text, api::member(*object, "data"));
    text += "binaryData\n";
    append(text, api::member(*object, "binaryData"));
  }
  return contentDigest(text);
}

std::string contentDigest(std::string_view text) {
  return sha256Hex(text).substr(0, 32);
}

std::string sha256Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

} // namespace csiop::driverdeployment
