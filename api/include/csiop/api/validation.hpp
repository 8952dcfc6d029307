// Validation of a DriverDeployment: everything the CRD schema cannot express
// plus everything it can (so the CLI and the webhook give the same answer as
// the API server, and more). Errors carry Kubernetes-style field paths.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/field_error.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api {

struct Validation {
  ErrorList errors;
  std::vector<std::string> warnings; // valid, but probably not what was meant

  [[nodiscard]] bool ok() const { return errors.empty(); }
};

Validation validate(const DriverDeployment& object);

// validate(updated) plus the rules about changes (driverName is immutable).
Validation validateUpdate(const DriverDeployment& old, const DriverDeployment& updated);

// Limits shared with the CRD schema.
inline constexpr std::size_t kMaxNameLength = 40;
inline constexpr std::size_t kMaxDriverNameLength = 63;
inline constexpr std::size_t kMaxTokenRequests = 16;
inline constexpr std::size_t kMaxStorageClasses = 32;
// Of each kind of companion object (configMaps, services, secretAccess, objects).
inline constexpr std::size_t kMaxCompanions = 64;

} // namespace csiop::api
