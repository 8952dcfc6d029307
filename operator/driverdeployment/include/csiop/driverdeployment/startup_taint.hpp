// spec.startupTaint: nodes kept from workloads until the driver is registered on them. The
// admin's nodes come up with the taint; the node plugins tolerate it; once a node's CSINode lists
// the driver, the operator removes every taint of the key from that node (and again if a node
// manager puts it back while the driver stays registered).
//
// The removal is a JSON patch that first tests that the node's taints are the ones the operator
// read: a taint another writer added or removed meanwhile makes the API server refuse the patch
// (422), and the next pass, which the node's change queues, reads the new list. Nothing another
// writer did is lost, which a read-modify-write of the list without the test would risk.
//
// Pure: no I/O.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

// The keys of a node's taints (spec.taints[].key), each once: the node cache's index, so that a
// pass reads only the nodes that carry its taint.
std::vector<std::string> taintKeysOf(const api::Json& node);

// The JSON patch that removes every taint of `key` from a node whose spec.taints are `taints`,
// tested against `taints`; an empty array if none has the key.
api::Json releasePatch(const api::Json& taints, const std::string& key);

} // namespace csiop::driverdeployment
