#include "utf8.hpp"

namespace csiop::api {
namespace {

// The length of the well-formed sequence at s[i], 0 if there is none.
std::size_t sequenceAt(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char first = byte(i);
  if (first < 0x80) {
    return 1;
  }
  std::size_t length = 0;
  unsigned char low = 0x80; // the range of the second byte
  unsigned char high = 0xBF;
  if (first >= 0xC2 && first <= 0xDF) {
    length = 2;
  } else if (first >= 0xE0 && first <= 0xEF) {
    length = 3;
    low = first == 0xE0 ? 0xA0 : low;   // overlong
    high = first == 0xED ? 0x9F : high; // surrogates
  } else if (first >= 0xF0 && first <= 0xF4) {
    length = 4;
    low = first == 0xF0 ? 0x90 : low;   // overlong
    high = first == 0xF4 ? 0x8F : high; // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + length > s.size() || byte(i + 1) < low || byte(i + 1) > high) {
    return 0;
  }
  for (std::size_t k = 2; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      return 0;
    }
  }
  return length;
}

class Walker {
public:
  explicit Walker(std::size_t max) : max_(max) {}

  void walk(const Json& v) {
    if (errors_.size() >= max_) {
      return;
    }
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (!validUtf8(s)) {
        errors_.push_back(invalid(path_, printableUtf8(s), "must be valid UTF-8"));
      }
    } else if (v.is_object()) {
      for (const auto& [key, member] : v.items()) {
        const bool valid = validUtf8(key);
        if (!valid && errors_.size() < max_) {
          errors_.push_back(invalid(path_.empty() ? "(top level)" : path_, printableUtf8(key),
                                    "keys must be valid UTF-8"));
        }
        const std::size_t size = path_.size();
        path_ += path_.empty() ? "" : ".";
        path_ += valid ? key : printableUtf8(key);
        walk(member);
        path_.resize(size);
      }
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::size_t size = path_.size();
        path_ += "[" + std::to_string(i) + "]";
        walk(v[i]);
        path_.resize(size);
      }
    }
  }

  ErrorList take() { return std::move(errors_); }

private:
  std::size_t max_;
  std::string path_;
  ErrorList errors_;
};

} // namespace

bool validUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = sequenceAt(s, i);
    if (n == 0) {
      return false;
    }
    i += n;
  }
  return true;
}

std::string printableUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = sequenceAt(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

ErrorList utf8Errors(const Json& doc, std::size_t max) {
  Walker w(max);
  w.walk(doc);
  return w.take();
}

} // namespace csiop::api
