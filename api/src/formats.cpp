#include <csiop/api/formats.hpp>

#include <algorithm>
#include <charconv>

namespace csiop::api::formats {
namespace {

// Longer than any valid value: refused without a look at the characters (as it always was; the
// messages then name the pattern as well as the length).
constexpr std::size_t kMaxMatchedLength = 1024;

bool lowerOrDigit(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool alnum(char c) {
  return lowerOrDigit(c) || (c >= 'A' && c <= 'Z');
}

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// s[i..] while `in` holds; returns how many.
template <class Pred> std::size_t skip(std::string_view s, std::size_t& i, Pred in) {
  const std::size_t from = i;
  while (i < s.size() && in(s[i])) {
    ++i;
  }
  return i - from;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool isLabel(std::string_view s) {
  return !s.empty() && lowerOrDigit(s.front()) && lowerOrDigit(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return lowerOrDigit(c) || c == '-'; });
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*
bool isSubdomain(std::string_view s) {
  for (;;) {
    const std::size_t dot = s.find('.');
    if (!isLabel(s.substr(0, dot))) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    s.remove_prefix(dot + 1);
  }
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool isQualifiedNamePart(std::string_view s) {
  return !s.empty() && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// [0-9]+(\.[0-9]*)?|\.[0-9]+ at s[i..]
bool decimal(std::string_view s, std::size_t& i) {
  if (skip(s, i, digit) > 0) {
    if (i < s.size() && s[i] == '.') {
      ++i;
      skip(s, i, digit);
    }
    return true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    return skip(s, i, digit) > 0;
  }
  return false;
}

bool sign(std::string_view s, std::size_t& i) {
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    ++i;
    return true;
  }
  return false;
}

bool within(std::string_view s) {
  return s.size() <= kMaxMatchedLength;
}

// What time.ParseDuration takes: an int64 of nanoseconds.
constexpr double kMaxGoDurationSeconds = 9223372036.854775807;

} // namespace

std::vector<std::string> dns1123Label(std::string_view s) {
  std::vector<std::string> errs;
  if (s.size() > 63) {
    errs.emplace_back("must be no more than 63 characters");
  }
  if (!within(s) || !isLabel(s)) {
    errs.emplace_back("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                      "characters or '-', and must start and end with an alphanumeric character "
                      "(e.g. 'my-name',  or '123-abc', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  }
  return errs;
}

std::vector<std::string> dns1123Subdomain(std::string_view s) {
  std::vector<std::string> errs;
  if (s.size() > 253) {
    errs.emplace_back("must be no more than 253 characters");
  }
  if (!within(s) || !isSubdomain(s)) {
    errs.emplace_back("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                      "characters, '-' or '.', and must start and end with an alphanumeric "
                      "character (e.g. 'example.com', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  return errs;
}

std::vector<std::string> qualifiedName(std::string_view s) {
  std::vector<std::string> errs;
  std::string_view name = s;
  if (const auto slash = s.find('/'); slash != std::string_view::npos) {
    const auto prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (prefix.empty()) {
      errs.emplace_back("prefix part must be non-empty");
    } else {
      for (auto& e : dns1123Subdomain(prefix)) {
        errs.push_back("prefix part " + e);
      }
    }
  }
  if (name.empty()) {
    errs.emplace_back("name part must be non-empty");
  } else {
    if (name.size() > 63) {
      errs.emplace_back("name part must be no more than 63 characters");
    }
    if (!within(name) || !isQualifiedNamePart(name)) {
      errs.emplace_back("name part must consist of alphanumeric characters, '-', '_' or '.', and "
                        "must start and end with an alphanumeric character (e.g. 'MyName',  or "
                        "'my.name',  or '123-abc', regex used for validation is "
                        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
    }
  }
  return errs;
}

std::vector<std::string> labelValue(std::string_view s) {
  std::vector<std::string> errs;
  if (s.size() > 63) {
    errs.emplace_back("must be no more than 63 characters");
  }
  if (!within(s) || !(s.empty() || isQualifiedNamePart(s))) {
    errs.emplace_back("a valid label must be an empty string or consist of alphanumeric "
                      "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                      "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errs;
}

std::vector<std::string> portName(std::string_view s) {
  std::vector<std::string> errs;
  if (s.size() > 15) {
    errs.emplace_back("must be no more than 15 characters");
  }
  if (!within(s) || s.empty() ||
      !std::all_of(s.begin(), s.end(), [](char c) { return lowerOrDigit(c) || c == '-'; })) {
    errs.emplace_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (s.find("--") != std::string_view::npos) {
    errs.emplace_back("must not contain consecutive hyphens");
  }
  if (!s.empty() && (s.front() == '-' || s.back() == '-')) {
    errs.emplace_back("must not begin or end with a hyphen");
  }
  // .*[a-z].* : a letter, on a single line ('.' matches no line break).
  const bool letter = std::any_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  if (!within(s) || !letter || s.find_first_of("\r\n") != std::string_view::npos) {
    errs.emplace_back("must contain at least one letter (a-z)");
  }
  return errs;
}

// A sign, a decimal, then nothing, a binary or decimal SI suffix, or an exponent:
// [+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))
//   (([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?
bool isQuantity(std::string_view s) {
  if (!within(s)) {
    return false;
  }
  std::size_t i = 0;
  sign(s, i);
  if (!decimal(s, i)) {
    return false;
  }
  const std::string_view suffix = s.substr(i);
  const std::string_view binary = "KMGTPE";
  if (suffix.empty() ||
      (suffix.size() == 2 && suffix[1] == 'i' &&
       binary.find(suffix[0]) != std::string_view::npos) ||
      (suffix.size() == 1 &&
       std::string_view("numkMGTPE").find(suffix[0]) != std::string_view::npos)) {
    return true;
  }
  if (suffix[0] != 'e' && suffix[0] != 'E') {
    return false;
  }
  ++i;
  sign(s, i);
  return decimal(s, i) && i == s.size();
}

// ([0-9]*(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+ or "0"
std::optional<double> goDuration(std::string_view s) {
  if (s == "0") {
    return 0.0;
  }
  if (s.empty() || !within(s)) {
    return std::nullopt;
  }
  double total = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t from = i;
    skip(s, i, digit);
    if (i < s.size() && s[i] == '.') {
      ++i;
      skip(s, i, digit);
    }
    const std::string_view number = s.substr(from, i - from);
    if (number.empty() || number == ".") {
      return std::nullopt;
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || end != number.data() + number.size()) {
      return std::nullopt; // out of range for a double
    }
    const std::string_view rest = s.substr(i);
    double scale = 0;
    std::size_t unit = 2;
    if (rest.starts_with("ns")) {
      scale = 1e-9;
    } else if (rest.starts_with("us")) {
      scale = 1e-6;
    } else if (rest.starts_with("\xC2\xB5s")) {
      scale = 1e-6;
      unit = 3;
    } else if (rest.starts_with("ms")) {
      scale = 1e-3;
    } else if (rest.starts_with("s")) {
      scale = 1;
      unit = 1;
    } else if (rest.starts_with("m")) {
      scale = 60;
      unit = 1;
    } else if (rest.starts_with("h")) {
      scale = 3600;
      unit = 1;
    } else {
      return std::nullopt;
    }
    total += v * scale;
    i += unit;
  }
  if (total > kMaxGoDurationSeconds) {
    return std::nullopt;
  }
  return total;
}

// ^[A-Za-z]:\\([^\\/:*?"<>|\t\n]+\\?)*$ : after "C:\", names separated by single backslashes.
bool windowsAbsolutePath(std::string_view s) {
  if (s.size() < 3 || !letter(s[0]) || s[1] != ':' || s[2] != '\\') {
    return false;
  }
  const std::string_view rest = s.substr(3);
  if (rest.starts_with('\\') || rest.find("\\\\") != std::string_view::npos ||
      rest.find_first_of("/:*?\"<>|\t\n") != std::string_view::npos) {
    return false;
  }
  return s.find("\\..\\") == std::string_view::npos && !s.ends_with("\\..");
}

// ^[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*-v[0-9]+((alpha|beta)[0-9]+)?$ : words, then the version.
bool csiProxyApi(std::string_view s) {
  const std::size_t last = s.rfind('-');
  if (last == std::string_view::npos) {
    return false;
  }
  for (std::string_view words = s.substr(0, last);;) {
    const std::string_view word = words.substr(0, words.find('-'));
    if (word.empty() || !(word[0] >= 'a' && word[0] <= 'z') ||
        !std::all_of(word.begin(), word.end(), lowerOrDigit)) {
      return false;
    }
    if (word.size() == words.size()) {
      break;
    }
    words.remove_prefix(word.size() + 1);
  }
  const std::string_view version = s.substr(last + 1);
  std::size_t i = 1;
  if (!version.starts_with('v') || skip(version, i, digit) == 0) {
    return false;
  }
  if (i == version.size()) {
    return true;
  }
  const std::string_view stage = version.substr(i);
  const std::size_t name = stage.starts_with("alpha") ? 5 : stage.starts_with("beta") ? 4 : 0;
  i += name;
  return name > 0 && skip(version, i, digit) > 0 && i == version.size();
}

} // namespace csiop::api::formats
