// Images on the node before its plugin goes: before the operator deletes a node plugin pod (a
// verified rollout, or WhenVolumesUnused), a short-lived pod on that node pulls the images of the
// new revision, with the DaemonSet's pull secrets; the plugin pod is replaced once every one is
// there, so that the node's downtime is the restart, not the pull (piraeus-operator#971: an
// image change restarted the plugin while the new image was still being pulled). A pull that
// fails leaves the old plugin running, and says which image on which node.
//
// The pod runs no code of the images: each container (one per image, regular containers so that
// one failure does not stop the others) has a command that does not exist, so the kubelet pulls
// the image and then fails to start it (StartError): an image whose container got that far, or
// that reports an imageID, is on the node (the way jupyterhub's image puller and che's are
// judged, without their need for a shell in every image). Pods carry the label
// csiop.dev/pre-pull=<DriverDeployment> and an owner reference to it; the reconciler deletes them
// once read, and any that no rollout uses.
//
// Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/node_rollout.hpp>

namespace csiop::driverdeployment {

inline constexpr const char* kPrePullLabel = "csiop.dev/pre-pull";
inline constexpr const char* kPrePullNodeAnnotation = "csiop.dev/pre-pull-node";
inline constexpr const char* kPrePullRevisionAnnotation = "csiop.dev/pre-pull-revision";

struct PrePullTarget {
  std::string owner;    // the DriverDeployment's name
  std::string ownerUid; // and uid
  std::string namespace_;
  std::string node;
  std::string revision;  // the plugin revision whose images are pulled
  api::Json podTemplate; // the DaemonSet's spec.template at that revision
  std::int64_t deadlineSeconds = 300;
};

// "<owner>-pull-<10 hex>" of (node, revision): within a pod's 63-character hostname.
std::string prePullName(const std::string& owner, const std::string& node,
                        const std::string& revision);

// The distinct images of the template's init and regular containers, in order, with the pull
// policy each pull uses: the template's, but Always is IfNotPresent (the plugin's own start
// asks the registry again; the layers are then there).
struct PrePullImage {
  std::string image;
  std::string pullPolicy;
  bool operator==(const PrePullImage&) const = default;
};
std::vector<PrePullImage> prePullImages(const api::Json& podTemplate);

api::Json prePullPod(const PrePullTarget& target);

struct PrePullResult {
  enum class State { Pending, Pulled, Failed };
  State state = State::Pending;
  // Failed: which image and why; Pending: a pull the kubelet is retrying, or why the pod is not
  // scheduled ("" when nothing is wrong yet).
  std::string message;
  api::WallTime started{}; // the pod's creationTimestamp (the epoch: unknown)
};

// A DriverDeployment's pre-pull pods as listed: each pod's uid by name, and what the pods of
// one revision say, by node. Not readable: the list failed (nothing is known of them).
struct PrePulls {
  bool readable = true;
  std::map<std::string, std::string> pods;
  std::map<std::string, PrePullResult> results;
};

// What a pre-pull pod (as read from the API server) says: Pulled once every image is on the
// node; Failed for an image the kubelet will never pull (an invalid name, a Never policy), or
// when the pod ended (its deadline) with an image missing, naming the last pull error.
PrePullResult readPrePull(const api::Json& pod);

// updateStrategy WhenVolumesUnused with the pre-pull: of the replacements its plan allows, those
// whose node has the new images go now; the others wait (PullingImages, or ImagePullFailed: the
// old plugin stays, and the failed pod, which says why, is kept) and their nodes need a pre-pull.
struct PrePullGate {
  std::vector<Replacement> now;
  std::vector<NodeWait> waiting;
  std::set<std::string> pull;
};
PrePullGate gateOnPrePulls(const std::vector<Replacement>& planned, const PrePulls& prePulls);

} // namespace csiop::driverdeployment
