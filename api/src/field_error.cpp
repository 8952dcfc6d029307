#include <csiop/api/field_error.hpp>

#include <utility>

namespace csiop::api {
namespace {

// Values print the way Go's %#v / %q print them in API server messages:
// strings quoted, numbers and booleans bare, anything else as JSON. Bytes that are not UTF-8
// print as U+FFFD (a message only quotes them; the loader has refused them as input).
std::string formatValue(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace

std::string FieldError::message() const {
  std::string out = field + ": ";
  switch (type) {
  case ErrorType::Required:
    out += "Required value";
    if (!detail.empty()) {
      out += ": " + detail;
    }
    break;
  case ErrorType::Invalid:
    out += "Invalid value: " + formatValue(value);
    if (!detail.empty()) {
      out += ": " + detail;
    }
    break;
  case ErrorType::Unsupported: {
    out += "Unsupported value: " + formatValue(value) + ": supported values: ";
    for (std::size_t i = 0; i < supported.size(); ++i) {
      out += (i ? ", " : "") + Json(supported[i]).dump();
    }
    break;
  }
  case ErrorType::Duplicate:
    out += "Duplicate value: " + formatValue(value);
    break;
  case ErrorType::Forbidden:
    out += "Forbidden: " + detail;
    break;
  case ErrorType::TooLong:
  case ErrorType::TooMany:
    out += (type == ErrorType::TooLong ? "Too long: " : "Too many: ") + detail;
    break;
  }
  return out;
}

FieldError required(std::string field, std::string detail) {
  return {ErrorType::Required, std::move(field), nullptr, std::move(detail), {}};
}

FieldError invalid(std::string field, Json value, std::string detail) {
  return {ErrorType::Invalid, std::move(field), std::move(value), std::move(detail), {}};
}

FieldError unsupported(std::string field, Json value, std::vector<std::string> supported) {
  return {ErrorType::Unsupported, std::move(field), std::move(value), {}, std::move(supported)};
}

FieldError duplicate(std::string field, Json value) {
  return {ErrorType::Duplicate, std::move(field), std::move(value), {}, {}};
}

FieldError forbidden(std::string field, std::string detail) {
  return {ErrorType::Forbidden, std::move(field), nullptr, std::move(detail), {}};
}

FieldError tooLong(std::string field, Json value, std::size_t max) {
  return {ErrorType::TooLong,
          std::move(field),
          std::move(value),
          "may not be more than " + std::to_string(max) + " bytes",
          {}};
}

FieldError tooMany(std::string field, std::size_t actual, std::size_t max) {
  return {ErrorType::TooMany,
          std::move(field),
          nullptr,
          std::to_string(actual) + ": must have at most " + std::to_string(max) + " items",
          {}};
}

std::string joinMessages(const ErrorList& errors) {
  std::string out;
  for (const auto& e : errors) {
    out += e.message();
    out += '\n';
  }
  return out;
}

} // namespace csiop::api
