#include <csiop/api/yaml.hpp>

#include <cerrno>
#include <cstdlib>
#include <regex>
#include <set>

#include <yaml-cpp/yaml.h>

namespace csiop::api {
namespace {

std::string where(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// YAML 1.2 core schema resolution of a plain (unquoted, untagged) scalar.
Json resolvePlain(const std::string& s) {
  static const std::regex kNull("~|null|Null|NULL|");
  static const std::regex kBool("true|True|TRUE|false|False|FALSE");
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kOct("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  static const std::regex kInf("[-+]?\\.(inf|Inf|INF)");
  static const std::regex kNan("\\.(nan|NaN|NAN)");

  // Only scalars starting like a null, a boolean or a number can be one; most
  // (names, paths, images) are settled here without a regular expression.
  static const std::string_view kMaybeTyped = "~nNtTfF0123456789+-.";
  if (!s.empty() && kMaybeTyped.find(s.front()) == std::string_view::npos) {
    return s;
  }
  if (std::regex_match(s, kNull)) {
    return nullptr;
  }
  if (std::regex_match(s, kBool)) {
    return s[0] == 't' || s[0] == 'T';
  }
  const auto integer = [&](const char* digits, int base) -> Json {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(digits, &end, base);
    if (errno == 0 && *end == '\0') {
      return v;
    }
    errno = 0;
    const unsigned long long u = std::strtoull(digits, &end, base);
    if (errno == 0 && *end == '\0' && digits[0] != '-') {
      return u;
    }
    return std::strtod(s.c_str(), nullptr);
  };
  if (std::regex_match(s, kInt)) {
    return integer(s.c_str(), 10);
  }
  if (std::regex_match(s, kOct)) {
    return integer(s.c_str() + 2, 8);
  }
  if (std::regex_match(s, kHex)) {
    return integer(s.c_str() + 2, 16);
  }
  if (std::regex_match(s, kFloat)) {
    return std::strtod(s.c_str(), nullptr);
  }
  if (std::regex_match(s, kInf) || std::regex_match(s, kNan)) {
    // JSON has no representation for these; the API server rejects them too.
    throw YamlError("non-finite number \"" + s + "\" is not allowed");
  }
  return s;
}

class Converter {
public:
  explicit Converter(const YamlLimits& limits) : limits_(limits) {}

  Json convert(const YAML::Node& node, std::size_t depth) {
    if (++nodes_ > limits_.maxNodes) {
      throw YamlError("document too large: more than " + std::to_string(limits_.maxNodes) +
                      " nodes after alias expansion (" + where(node.Mark()) + ")");
    }
    if (depth > limits_.maxDepth) {
      throw YamlError("document nested deeper than " + std::to_string(limits_.maxDepth) +
                      " levels (" + where(node.Mark()) + ")");
    }
    switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar(node);
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) {
        out.push_back(convert(item, depth + 1));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) {
        const Json key = convert(kv.first, depth + 1);
        std::string name = key.is_string() ? key.get<std::string>() : key.dump();
        if (out.contains(name)) {
          throw YamlError("duplicate key \"" + name + "\" at " + where(kv.first.Mark()));
        }
        out[name] = convert(kv.second, depth + 1);
      }
      return out;
    }
    }
    return nullptr;
  }

private:
  static Json scalar(const YAML::Node& node) {
    const std::string& tag = node.Tag();
    const std::string& value = node.Scalar();
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      return value;
    }
    try {
      if (tag == "?" || tag.empty()) {
        return resolvePlain(value);
      }
      const Json resolved = resolvePlain(value);
      if ((tag == "tag:yaml.org,2002:int" && resolved.is_number_integer()) ||
          (tag == "tag:yaml.org,2002:float" && resolved.is_number()) ||
          (tag == "tag:yaml.org,2002:bool" && resolved.is_boolean()) ||
          (tag == "tag:yaml.org,2002:null" && resolved.is_null())) {
        return resolved;
      }
    } catch (const YamlError& e) {
      throw YamlError(std::string(e.what()) + " (" + where(node.Mark()) + ")");
    }
    throw YamlError("cannot use tag \"" + tag + "\" for value \"" + value + "\" (" +
                    where(node.Mark()) + ")");
  }

  const YamlLimits& limits_;
  std::size_t nodes_ = 0;
};

// --- emitting ---------------------------------------------------------------

bool needsQuotes(const std::string& s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ' || s.back() == ':') {
    return true;
  }
  static const std::string kIndicators = "?:,[]{}#&*!|>'\"%@`";
  if (kIndicators.find(s.front()) != std::string::npos) {
    return true;
  }
  if (s.front() == '-' && (s.size() == 1 || s[1] == ' ')) {
    return true;
  }
  for (const unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      return true;
    }
  }
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos) {
    return true;
  }
  // Anything a YAML 1.1 or 1.2 reader resolves to null, a boolean or a number.
  static const std::set<std::string, std::less<>> kReserved = {
      "~",    "null", "Null", "NULL", "true",  "True",  "TRUE",  "false", "False", "FALSE",
      "y",    "Y",    "yes",  "Yes",  "YES",   "n",     "N",     "no",    "No",    "NO",
      "on",   "On",   "ON",   "off",  "Off",   "OFF",   "<<",    "=",     ".inf",  ".Inf",
      ".INF", ".nan", ".NaN", ".NAN", "-.inf", "-.Inf", "-.INF", "+.inf", "+.Inf", "+.INF"};
  if (kReserved.contains(s)) {
    return true;
  }
  static const std::regex kNumberLike("[-+]?[0-9.][0-9a-fA-FxXoObB_.:+eE-]*");
  return std::regex_match(s, kNumberLike);
}

std::string scalarText(const Json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    return needsQuotes(s) ? v.dump(-1, ' ', false, Json::error_handler_t::replace) : s;
  }
  if (v.is_object()) {
    return "{}";
  }
  if (v.is_array()) {
    return "[]";
  }
  return v.dump();
}

bool isInline(const Json& v) {
  return !(v.is_object() || v.is_array()) || v.empty();
}

void emitNode(const Json& v, std::size_t indent, std::string& out);

void emitMap(const Json& obj, std::size_t indent, std::string& out) {
  for (const auto& [k, v] : obj.items()) {
    out.append(indent, ' ');
    out += scalarText(Json(k));
    out += ':';
    if (isInline(v)) {
      out += ' ';
      out += scalarText(v);
      out += '\n';
    } else {
      out += '\n';
      emitNode(v, v.is_array() ? indent : indent + 2, out);
    }
  }
}

void emitSeq(const Json& arr, std::size_t indent, std::string& out) {
  for (const auto& item : arr) {
    if (isInline(item)) {
      out.append(indent, ' ');
      out += "- ";
      out += scalarText(item);
      out += '\n';
    } else if (item.is_object()) {
      std::string nested;
      emitMap(item, indent + 2, nested);
      nested.replace(indent, 2, "- ");
      out += nested;
    } else {
      out.append(indent, ' ');
      out += "-\n";
      emitSeq(item, indent + 2, out);
    }
  }
}

void emitNode(const Json& v, std::size_t indent, std::string& out) {
  if (v.is_object()) {
    emitMap(v, indent, out);
  } else if (v.is_array()) {
    emitSeq(v, indent, out);
  }
}

} // namespace

std::vector<Json> parseYaml(std::string_view text, const YamlLimits& limits) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    throw YamlError("invalid YAML at " + where(e.mark) + ": " + e.msg);
  }
  Converter converter(limits);
  std::vector<Json> out;
  for (const auto& doc : docs) {
    Json j = converter.convert(doc, 0);
    if (!j.is_null()) {
      out.push_back(std::move(j));
    }
  }
  return out;
}

std::string toYaml(const Json& document) {
  if (isInline(document)) {
    return scalarText(document) + "\n";
  }
  std::string out;
  emitNode(document, 0, out);
  return out;
}

std::string toYamlStream(const std::vector<Json>& documents) {
  std::string out;
  for (const auto& doc : documents) {
    out += "---\n";
    out += toYaml(doc);
  }
  return out;
}

} // namespace csiop::api
