// From manifest text to validated DriverDeployments: parse (YAML or JSON, one
// or more documents), check the kind, decode, validate. Every problem of every
// document is reported, each prefixed with where it was found.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/api/field_error.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api {

enum class UnknownFields {
  Strict, // an error, like `kubectl apply --validate=strict`
  Warn,   // pruned with a warning, like `--validate=warn`
  Ignore, // pruned silently, like the API server without field validation
};

struct Loaded {
  std::vector<DriverDeployment> objects;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;

  [[nodiscard]] bool ok() const { return errors.empty(); }
};

// A further check of an object whose fields are valid (render::checkRendered: the pods as
// rendered); its errors count as validation errors.
using Check = std::function<ErrorList(const DriverDeployment&)>;

Loaded loadDriverDeployments(std::string_view text, UnknownFields unknown = UnknownFields::Strict,
                             const Check& check = {});

// The same for an already-parsed object (e.g. from an AdmissionReview).
Loaded loadDriverDeployment(const Json& object, UnknownFields unknown = UnknownFields::Strict,
                            const Check& check = {});

} // namespace csiop::api
