// A child (an object the operator made for a DriverDeployment) as the children's caches keep it.
// A pass reads the metadata of every child (whose it is, who manages it, its generation) and
// the status of the workloads, on every reconcile; it reads the rest (a workload's pod
// template, a role's rules) only to compare it with what it would apply, and only when the
// child changed since the last comparison. So the metadata and status are a JSON tree (the
// head) and the rest is kept as its text (the body): a DaemonSet's status update builds a few
// dozen values, not the whole pod template, and a hundred drivers' children take a fraction of
// the heap their trees took.
#pragma once

#include <cstdint>
#include <string>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

struct CachedChild {
  // What every pass reads: apiVersion, kind, status; of the metadata name, namespace, uid,
  // resourceVersion, generation, deletionTimestamp, ownerReferences, managedFields (cut to
  // runtime::managerSummary) and the operator's own labels and annotations (csiop.dev/...);
  // spec.replicas where the spec has it (a Deployment's or StatefulSet's desired pods).
  api::Json head;
  // Every member but apiVersion, kind and status (spec, rules, subjects, data, parameters, ...;
  // the metadata without resourceVersion and managedFields) as one JSON object's minified text.
  std::string body;
  // A digest of the body: equal for two versions of a child that only its status, its
  // resourceVersion or who wrote it tells apart.
  std::uint64_t content = 0;

  // The child as one object: head and body (parses the body).
  api::Json whole() const;
};

// What a children's cache keeps of a child: `prepared` as the store prepares it, either whole
// or as caches.hpp's childFields() builds it (the body's members as text).
CachedChild decodeChild(api::Json&& prepared);

} // namespace csiop::driverdeployment
