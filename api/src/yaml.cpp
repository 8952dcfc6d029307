#include <csiop/api/yaml.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <csiop/api/object_builder.hpp>

#include "document_path.hpp"

namespace csiop::api {
namespace {

std::string where(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

bool isOctal(char c) {
  return c >= '0' && c <= '7';
}

bool isHex(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// s[i..] while `in` holds; returns how many.
template <class Pred> std::size_t skip(std::string_view s, std::size_t& i, Pred in) {
  const std::size_t from = i;
  while (i < s.size() && in(s[i])) {
    ++i;
  }
  return i - from;
}

void skipSign(std::string_view s, std::size_t& i) {
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    ++i;
  }
}

// The core schema's patterns, each a scan of its own (a regular expression engine that
// backtracks took the whole stack on a 200,000-digit scalar).

// [-+]?[0-9]+
bool isDecimalInt(std::string_view s) {
  std::size_t i = 0;
  skipSign(s, i);
  return skip(s, i, isDigit) > 0 && i == s.size();
}

// 0o[0-7]+ and 0x[0-9a-fA-F]+
template <class Pred> bool isPrefixedInt(std::string_view s, std::string_view prefix, Pred in) {
  std::size_t i = prefix.size();
  return s.starts_with(prefix) && skip(s, i, in) > 0 && i == s.size();
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool isFloat(std::string_view s) {
  std::size_t i = 0;
  skipSign(s, i);
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (skip(s, i, isDigit) == 0) {
      return false;
    }
  } else {
    if (skip(s, i, isDigit) == 0) {
      return false;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      skip(s, i, isDigit);
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    skipSign(s, i);
    if (skip(s, i, isDigit) == 0) {
      return false;
    }
  }
  return i == s.size();
}

// [-+]?\.(inf|Inf|INF) and \.(nan|NaN|NAN)
bool isNonFinite(std::string_view s) {
  static const std::set<std::string, std::less<>> kWords = {".inf",  ".Inf",  ".INF",  "+.inf",
                                                            "+.Inf", "+.INF", "-.inf", "-.Inf",
                                                            "-.INF", ".nan",  ".NaN",  ".NAN"};
  return kWords.contains(s);
}

// A number beyond a double's range stays the string it is, as Go's YAML reader (kubectl's)
// leaves it: its ParseFloat fails with ErrRange.
Json floating(const std::string& s) {
  const double d = std::strtod(s.c_str(), nullptr);
  return std::isinf(d) ? Json(s) : Json(d);
}

// `digits` (s without its prefix) in `base`: a signed or unsigned 64-bit integer; beyond them a
// decimal is a double, and octal or hexadecimal the string (Go reads neither as a float).
Json integer(const std::string& s, const char* digits, int base) {
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
  return base == 10 ? floating(s) : Json(s);
}

} // namespace

Json resolvePlainScalar(const std::string& s) {
  // Only scalars starting like a null, a boolean or a number can be one; most
  // (names, paths, images) are settled here.
  static const std::string_view kMaybeTyped = "~nNtTfF0123456789+-.";
  if (!s.empty() && kMaybeTyped.find(s.front()) == std::string_view::npos) {
    return s;
  }
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    return nullptr;
  }
  if (s == "true" || s == "True" || s == "TRUE") {
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    return false;
  }
  if (isDecimalInt(s)) {
    return integer(s, s.c_str(), 10);
  }
  if (isPrefixedInt(s, "0o", isOctal)) {
    return integer(s, s.c_str() + 2, 8);
  }
  if (isPrefixedInt(s, "0x", isHex)) {
    return integer(s, s.c_str() + 2, 16);
  }
  if (isFloat(s)) {
    return floating(s);
  }
  if (isNonFinite(s)) {
    // JSON has no representation for these; the API server rejects them too.
    throw YamlError("non-finite number \"" + s + "\" is not allowed");
  }
  return s;
}

namespace {

// yaml-cpp's parse events of one document to Json, built bottom-up as parseJson builds (no
// YAML::Node graph in between: it took 100 MiB for 100,000 keys, and yaml-cpp's LoadAll, which
// builds it, loops forever allocating on a stream such as ","). An anchored value is kept with
// its size and height, so that an alias copies it only within the limits.
class DocumentBuilder final : public YAML::EventHandler {
public:
  explicit DocumentBuilder(const YamlLimits& limits) : limits_(limits) {}

  // The document the parser handled last (null when empty), and where it started.
  Json take() { return std::move(document_); }
  [[nodiscard]] const YAML::Mark& start() const { return start_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    start_ = mark;
    document_ = nullptr;
    anchors_.clear(); // an anchor names a node of its own document
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    begin(mark);
    complete(nullptr, mark, anchor, {});
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    begin(mark);
    complete(scalar(mark, tag, value), mark, anchor, {});
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    begin(mark);
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      throw YamlError("alias at " + where(mark) + " refers to a node that contains it");
    }
    const Shape shape = it->second.second;
    count(shape.nodes - 1, mark);
    if (stack_.size() + shape.height > limits_.maxDepth) {
      throw YamlError("document nested deeper than " + std::to_string(limits_.maxDepth) +
                      " levels (" + where(mark) + ")");
    }
    complete(Json(it->second.first), mark, YAML::NullAnchor, shape);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    begin(mark);
    stack_.push_back(frame(false, mark, anchor));
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    begin(mark);
    stack_.push_back(frame(true, mark, anchor));
  }
  void OnMapEnd() override { close(); }

private:
  // A value's nodes (itself included) and how many collections deep it goes.
  struct Shape {
    std::size_t nodes = 1;
    std::size_t height = 0;
  };

  // A sequence or mapping being read.
  struct Frame {
    bool map = false;
    YAML::Mark mark;
    YAML::anchor_t anchor = YAML::NullAnchor;
    Shape shape;
    Json::array_t items;
    ObjectBuilder members;
    bool haveKey = false; // of a mapping: its next value is `pending`'s
    std::size_t pending = ObjectBuilder::npos;
  };

  static Frame frame(bool map, const YAML::Mark& mark, YAML::anchor_t anchor) {
    Frame f;
    f.map = map;
    f.mark = mark;
    f.anchor = anchor;
    return f;
  }

  void count(std::size_t nodes, const YAML::Mark& mark) {
    nodes_ += nodes;
    if (nodes_ > limits_.maxNodes) {
      throw YamlError("document too large: more than " + std::to_string(limits_.maxNodes) +
                      " nodes after alias expansion (" + where(mark) + ")");
    }
  }

  // A node starts at `mark`, inside every collection on the stack.
  void begin(const YAML::Mark& mark) {
    count(1, mark);
    if (stack_.size() > limits_.maxDepth) {
      throw YamlError("document nested deeper than " + std::to_string(limits_.maxDepth) +
                      " levels (" + where(mark) + ")");
    }
    if (!stack_.empty() && !stack_.back().map && stack_.back().items.size() >= limits_.maxItems) {
      throw YamlError(detail::describe("array", path()) + " has more than " +
                      std::to_string(limits_.maxItems) + " items (" + where(mark) + ")");
    }
  }

  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    Json value = f.map ? f.members.build() : Json(std::move(f.items));
    complete(std::move(value), f.mark, f.anchor, f.shape);
  }

  // A value is read whole: it goes into the collection it is in, or is the document.
  void complete(Json value, const YAML::Mark& mark, YAML::anchor_t anchor, const Shape& shape) {
    if (anchor != YAML::NullAnchor) {
      count(shape.nodes, mark); // the copy kept
      anchors_.insert_or_assign(anchor, std::pair{value, shape});
    }
    if (stack_.empty()) {
      document_ = std::move(value);
      return;
    }
    Frame& f = stack_.back();
    f.shape.nodes += shape.nodes;
    f.shape.height = std::max(f.shape.height, shape.height + 1);
    if (!f.map) {
      f.items.push_back(std::move(value));
    } else if (f.haveKey) {
      f.members.value(f.pending) = std::move(value);
      f.haveKey = false;
    } else {
      key(f, value, mark);
    }
  }

  // Members are appended, duplicates found through ObjectBuilder's index: ordered_json's own
  // insert scans every member (20,000 keys took 18 s).
  void key(Frame& f, const Json& key, const YAML::Mark& mark) {
    std::string name = key.is_string() ? key.get<std::string>()
                                       : key.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (f.members.find(name) != ObjectBuilder::npos) {
      throw YamlError("duplicate key \"" + name + "\" at " + where(mark));
    }
    if (f.members.size() >= limits_.maxMembers) {
      throw YamlError(detail::describe("object", path()) + " has more than " +
                      std::to_string(limits_.maxMembers) + " members (" + where(mark) + ")");
    }
    f.pending = f.members.add(std::move(name));
    f.haveKey = true;
  }

  // Where the innermost collection being read is.
  [[nodiscard]] std::vector<detail::PathSegment> path() const {
    std::vector<detail::PathSegment> out;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (!f.map) {
        out.push_back({{}, f.items.size(), false});
      } else {
        out.push_back({f.haveKey ? std::string_view(f.members.key(f.pending)) : "?", 0, true});
      }
    }
    return out;
  }

  static Json scalar(const YAML::Mark& mark, const std::string& tag, const std::string& value) {
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      return value;
    }
    try {
      if (tag == "?" || tag.empty()) {
        return resolvePlainScalar(value);
      }
      const Json resolved = resolvePlainScalar(value);
      if ((tag == "tag:yaml.org,2002:int" && resolved.is_number_integer()) ||
          (tag == "tag:yaml.org,2002:float" && resolved.is_number()) ||
          (tag == "tag:yaml.org,2002:bool" && resolved.is_boolean()) ||
          (tag == "tag:yaml.org,2002:null" && resolved.is_null())) {
        return resolved;
      }
    } catch (const YamlError& e) {
      throw YamlError(std::string(e.what()) + " (" + where(mark) + ")");
    }
    throw YamlError("cannot use tag \"" + tag + "\" for value \"" + value + "\" (" + where(mark) +
                    ")");
  }

  const YamlLimits& limits_;
  std::size_t nodes_ = 0; // over every document
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::pair<Json, Shape>> anchors_;
  Json document_;
  YAML::Mark start_;
};

// --- emitting ---------------------------------------------------------------

// [-+]?[0-9.][0-9a-fA-FxXoObB_.:+eE-]* : what some YAML reader might take for a number (YAML
// 1.1 has sexagesimal 1:30, binary 0b1, underscores 1_000).
bool numberLike(std::string_view s) {
  std::size_t i = 0;
  skipSign(s, i);
  if (i == s.size() || !(isDigit(s[i]) || s[i] == '.')) {
    return false;
  }
  static const std::string_view kAfter = "xXoObB_.:+eE-";
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(),
                     [](char c) { return isHex(c) || kAfter.find(c) != std::string_view::npos; });
}

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
  return numberLike(s);
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
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DocumentBuilder builder(limits);
  std::vector<Json> out;
  try {
    int previous = -1;
    while (parser.HandleNextDocument(builder)) {
      // yaml-cpp 0.7 reports a document at a token that cannot start one (",", "]") without
      // reading it, again and again.
      if (builder.start().pos <= previous) {
        const auto at = static_cast<std::size_t>(builder.start().pos);
        const char c = at < text.size() ? text[at] : ' ';
        throw YamlError("invalid YAML at " + where(builder.start()) + ": unexpected " +
                        (c > ' ' && c < 0x7f ? "'" + std::string(1, c) + "'" : "character"));
      }
      previous = builder.start().pos;
      if (Json doc = builder.take(); !doc.is_null()) {
        out.push_back(std::move(doc));
      }
    }
  } catch (const YAML::Exception& e) {
    throw YamlError("invalid YAML at " + where(e.mark) + ": " + e.msg);
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
