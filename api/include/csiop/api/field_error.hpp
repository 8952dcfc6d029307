// Field errors in the style of k8s.io/apimachinery/pkg/util/validation/field,
// so that messages read exactly like the API server's own.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::api {

enum class ErrorType { Required, Invalid, Unsupported, Duplicate, Forbidden, TooLong, TooMany };

struct FieldError {
  ErrorType type = ErrorType::Invalid;
  std::string field; // e.g. spec.storageClasses[1].name
  Json value;        // the offending value (null when not applicable)
  std::string detail;
  std::vector<std::string> supported; // for Unsupported

  // "spec.csiDriver.fsGroupPolicy: Unsupported value: \"Foo\": supported values: ..."
  [[nodiscard]] std::string message() const;
};

using ErrorList = std::vector<FieldError>;

FieldError required(std::string field, std::string detail = {});
FieldError invalid(std::string field, Json value, std::string detail);
FieldError unsupported(std::string field, Json value, std::vector<std::string> supported);
FieldError duplicate(std::string field, Json value);
FieldError forbidden(std::string field, std::string detail);
FieldError tooLong(std::string field, Json value, std::size_t max);
FieldError tooMany(std::string field, std::size_t actual, std::size_t max);

// All messages, one per line.
std::string joinMessages(const ErrorList& errors);

} // namespace csiop::api
