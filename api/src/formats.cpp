#include <csiop/api/formats.hpp>

#include <regex>

namespace csiop::api::formats {
namespace {

// libstdc++'s std::regex matches recursively, about a stack frame per input
// character: input longer than any valid value is refused before it can
// exhaust the stack (a 30,000-digit quantity did).
constexpr std::size_t kMaxMatchedLength = 1024;

bool matches(std::string_view s, const std::regex& re) {
  return s.size() <= kMaxMatchedLength && std::regex_match(s.begin(), s.end(), re);
}

const char* kLabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";

} // namespace

std::vector<std::string> dns1123Label(std::string_view s) {
  static const std::regex re(kLabelFmt);
  std::vector<std::string> errs;
  if (s.size() > 63) {
    errs.emplace_back("must be no more than 63 characters");
  }
  if (!matches(s, re)) {
    errs.emplace_back("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                      "characters or '-', and must start and end with an alphanumeric character "
                      "(e.g. 'my-name',  or '123-abc', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  }
  return errs;
}

std::vector<std::string> dns1123Subdomain(std::string_view s) {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  std::vector<std::string> errs;
  if (s.size() > 253) {
    errs.emplace_back("must be no more than 253 characters");
  }
  if (!matches(s, re)) {
    errs.emplace_back("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                      "characters, '-' or '.', and must start and end with an alphanumeric "
                      "character (e.g. 'example.com', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  return errs;
}

std::vector<std::string> qualifiedName(std::string_view s) {
  static const std::regex nameRe("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
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
    if (!matches(name, nameRe)) {
      errs.emplace_back("name part must consist of alphanumeric characters, '-', '_' or '.', and "
                        "must start and end with an alphanumeric character (e.g. 'MyName',  or "
                        "'my.name',  or '123-abc', regex used for validation is "
                        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
    }
  }
  return errs;
}

std::vector<std::string> labelValue(std::string_view s) {
  static const std::regex re("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
  std::vector<std::string> errs;
  if (s.size() > 63) {
    errs.emplace_back("must be no more than 63 characters");
  }
  if (!matches(s, re)) {
    errs.emplace_back("a valid label must be an empty string or consist of alphanumeric "
                      "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                      "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errs;
}

std::vector<std::string> portName(std::string_view s) {
  static const std::regex chars("[-a-z0-9]+");
  static const std::regex letter(".*[a-z].*");
  std::vector<std::string> errs;
  if (s.size() > 15) {
    errs.emplace_back("must be no more than 15 characters");
  }
  if (!matches(s, chars)) {
    errs.emplace_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (s.find("--") != std::string_view::npos) {
    errs.emplace_back("must not contain consecutive hyphens");
  }
  if (!s.empty() && (s.front() == '-' || s.back() == '-')) {
    errs.emplace_back("must not begin or end with a hyphen");
  }
  if (!matches(s, letter)) {
    errs.emplace_back("must contain at least one letter (a-z)");
  }
  return errs;
}

bool isQuantity(std::string_view s) {
  static const std::regex re(
      "[+-]?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))"
      "(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?");
  return matches(s, re);
}

std::optional<double> goDuration(std::string_view s) {
  static const std::regex re("([0-9]*(\\.[0-9]*)?)(ns|us|\xC2\xB5s|ms|s|m|h)");
  if (s == "0") {
    return 0.0;
  }
  if (s.empty() || s.size() > kMaxMatchedLength) {
    return std::nullopt;
  }
  double total = 0;
  std::string rest(s);
  std::smatch m;
  while (!rest.empty()) {
    if (!std::regex_search(rest, m, re, std::regex_constants::match_continuous) ||
        m[1].str().empty() || m[1].str() == ".") {
      return std::nullopt;
    }
    double v = 0;
    try {
      v = std::stod(m[1].str());
    } catch (const std::exception&) { // out of range for a double
      return std::nullopt;
    }
    const std::string unit = m[3].str();
    double scale = 1;
    if (unit == "ns") {
      scale = 1e-9;
    } else if (unit == "us" || unit == "\xC2\xB5s") {
      scale = 1e-6;
    } else if (unit == "ms") {
      scale = 1e-3;
    } else if (unit == "m") {
      scale = 60;
    } else if (unit == "h") {
      scale = 3600;
    }
    total += v * scale;
    rest = m.suffix().str();
  }
  return total;
}

} // namespace csiop::api::formats
