// The CSIDriver object, the workloads' Namespace, and the StorageClasses.
#pragma once

#include <vector>

#include "meta.hpp"

namespace csiop::render {

std::vector<Json> renderNamespace(const Effective& effective); // empty when not wanted
Json renderCSIDriver(const Effective& effective, bool v1);
std::vector<Json> renderStorageClasses(const Effective& effective);

} // namespace csiop::render
