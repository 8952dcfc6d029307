#include <csiop/kube/warning_header.hpp>

namespace csiop::kube {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

} // namespace

std::string warningText(std::string_view header) {
  const std::string_view value = trimmed(header);
  // warn-code SP warn-agent SP warn-text [SP warn-date]
  const auto codeEnd = value.find(' ');
  const auto agentEnd = codeEnd == std::string_view::npos ? codeEnd : value.find(' ', codeEnd + 1);
  if (agentEnd == std::string_view::npos || agentEnd + 1 >= value.size() ||
      value[agentEnd + 1] != '"') {
    return std::string(value);
  }
  std::string text;
  for (std::size_t i = agentEnd + 2; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) {
      text += value[++i];
    } else if (value[i] == '"') {
      return text;
    } else {
      text += value[i];
    }
  }
  return std::string(value); // no closing quote
}

} // namespace csiop::kube
