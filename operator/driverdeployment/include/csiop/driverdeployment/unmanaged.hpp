// Children an admin has taken over: csiop.dev/unmanaged on a child stops the operator writing it.
#pragma once

#include <csiop/api/annotations.hpp>
#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

using api::Flag;
using api::flagAnnotation;
using api::invalidFlagMessage;

// Whether the operator manages a child: csiop.dev/unmanaged absent or "false".
// An unknown value counts as unmanaged (nothing is overwritten) and is reported.
inline bool managed(const api::Json& child) {
  return flagAnnotation(child, api::kUnmanagedAnnotation) == Flag::No;
}
// The child as the status lists it.
api::UnmanagedObject unmanagedEntry(const api::Json& child);

} // namespace csiop::driverdeployment
