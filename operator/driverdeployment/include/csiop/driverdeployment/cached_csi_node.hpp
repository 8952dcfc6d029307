// A CSINode as the CSINode cache keeps it: its name and the drivers it lists, what the status
// counts (nodes.registered) and what a change concerns. There is one per node (5,000 on 5,000
// nodes); as a cut-down JSON tree each took 2 KiB of heap.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

struct CachedCSINode {
  std::string name;
  std::vector<std::string> drivers; // spec.drivers[].name, in order
  bool operator==(const CachedCSINode&) const = default;
};

// What the CSINode cache keeps of a CSINode (whole, or as csiNodeFields() builds it).
CachedCSINode decodeCSINode(const api::Json& csiNode);

} // namespace csiop::driverdeployment
