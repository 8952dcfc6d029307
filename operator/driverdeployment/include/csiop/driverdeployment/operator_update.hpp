// Telling a change of the spec from a change of the operator. Every workload the operator
// writes carries a stamp (annotations): the DriverDeployment's generation, a digest of the parts
// of its spec that workloads are rendered from, and the version of the operator that rendered
// it. When the workload the operator would write now differs from the one running, the stamps
// say whose change it is:
//   Spec      the spec's digest or the referenced configuration changed: the admin's change;
//   Drift     the running workload was written by this very operator: someone edited it, and
//             it is put back as always;
//   Operator  the same spec and configuration, rendered by another operator version: the
//             operator's own change (new default images, a changed default, a renderer fix),
//             which spec.operatorUpdates rolls out (Automatic) or holds (Manual).
// Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

using api::Json;

struct RenderStamp {
  std::string specGeneration; // "" when absent
  std::string specDigest;
  std::string renderedBy;
  bool operator==(const RenderStamp&) const = default;
};

// The stamp a workload carries (its metadata annotations; empty fields where absent).
RenderStamp stampOf(const Json& workload);
// Sets the stamp's annotations on a workload to be written (an empty field removes none: it is
// simply not set).
void setStamp(Json& workload, const RenderStamp& stamp);

// 32 hex digits over the spec without the fields no workload is rendered from (storage and
// snapshot classes, Services, extra objects, required APIs, aggregated roles, the deletion
// policy, pausing, spec.operatorUpdates, and the rollout's settings but its type), and without
// the other workload's own section: a node plugin's digest leaves out spec.controller (unless
// its sidecars run in the node plugin), the controller's spec.node and spec.windowsNode. A change
// to one of those is never taken for a change of that workload.
enum class WorkloadPart { NodePlugin, Controller };
std::string workloadSpecDigest(const Json& spec, WorkloadPart part);

enum class ChangeOrigin { Spec, Drift, Operator };

struct ChangeFacts {
  RenderStamp live;    // the running workload's stamp
  RenderStamp desired; // the stamp it would be written with now
  std::string liveConfigHash;
  std::string desiredConfigHash;
  // For a workload without a stamp (written before operators stamped them): whether the
  // DriverDeployment's status says its current generation was reconciled already, so that the
  // spec has not changed since an operator last wrote the workload.
  bool generationObserved = false;
};

// Whose change it is that the running workload differs from the one rendered now.
ChangeOrigin changeOrigin(const ChangeFacts& facts);

// What writing `desired` would change in `live`, for an admin, at most `max` lines: the
// containers' images first ("container csi-provisioner: image A -> B", added or removed
// containers), then the first other paths that differ.
std::vector<std::string> describeChange(const Json& live, const Json& desired, std::size_t max);

} // namespace csiop::driverdeployment
