// Least-privilege RBAC for the sidecars the spec enables.
#pragma once

#include <vector>

#include "meta.hpp"

namespace csiop::render {

// ServiceAccounts, ClusterRoles/Bindings and Roles/Bindings, in that order.
std::vector<Json> renderServiceAccounts(const Effective& effective);
std::vector<Json> renderRbac(const Effective& effective);

} // namespace csiop::render
