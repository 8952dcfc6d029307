// What a driver needs that the operator does not create: APIs (CRDs a cluster admin installs,
// such as external-snapshotter's) and PriorityClasses its pods name. The operator reports what
// is missing in the DriverDeployment's status instead of installing it: a CRD is cluster-wide
// and shared by every driver (and versioned by whoever installs its controller), and a
// PriorityClass ranks the driver against every other workload; both are a cluster admin's
// decision, and creating them would give the operator rights over the whole cluster.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <csiop/api/defaults.hpp>

namespace csiop::render {

struct RequiredApi {
  std::string group; // "" for the core group
  std::string version;
  std::string resource;
  std::string neededBy; // for the message: "the snapshotter", "spec.requiredAPIs"

  [[nodiscard]] std::string str() const; // "snapshot.storage.k8s.io/v1/volumesnapshotclasses"
  [[nodiscard]] std::string apiVersion() const; // "snapshot.storage.k8s.io/v1"
};

// The snapshotter's (VolumeSnapshotClasses and VolumeSnapshotContents: it watches both and
// cannot start without them), spec.volumeSnapshotClasses', and spec.requiredAPIs, each once.
std::vector<RequiredApi> requiredApis(const api::Effective& effective);

struct RequiredPriorityClass {
  std::string name;
  std::string neededBy; // "the node plugin", "the controller"
};

// The PriorityClasses the pods name, but the two every cluster has (system-node-critical,
// system-cluster-critical).
std::vector<RequiredPriorityClass> requiredPriorityClasses(const api::Effective& effective);

// The cluster's PriorityClasses: value by name, and the value of the globalDefault one (what
// a pod that names none gets; 0 when there is none).
struct PriorityClasses {
  std::map<std::string, std::int32_t> values;
  std::int32_t defaultPriority = 0;
};

// Node plugins whose pods would run at no more than the priority of pods that name no
// PriorityClass: on a node that is full such a pod cannot preempt one, stays Pending, and the
// driver is never registered there (sapcc/kubernikus#825). One line per node plugin, for
// PrerequisitesMissing; a class that does not exist is requiredPriorityClasses' to report.
std::vector<std::string> lowPriorityNodePlugins(const api::Effective& effective,
                                                const PriorityClasses& classes);

} // namespace csiop::render
