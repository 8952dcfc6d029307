#include <csiop/driverdeployment/node_rollout.hpp>

#include <algorithm>
#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>

namespace csiop::driverdeployment {
namespace {

using api::member;
using api::stringField;

std::string names(const std::vector<std::string>& pods) {
  std::string out;
  for (std::size_t i = 0; i < pods.size() && i < 3; ++i) {
    out += (i == 0 ? "" : ", ") + pods[i];
  }
  return pods.size() > 3 ? out + ", ..." : out;
}

} // namespace

std::map<std::string, NodeVolumeUsers>
volumeUsersByNode(const std::string& driverName, const std::vector<const Json*>& pvs,
                  const std::vector<const CachedPod*>& pods) {
  std::set<std::string> claims; // "namespace/name" bound to a volume of the driver
  for (const Json* pv : pvs) {
    const Json& spec = member(*pv, "spec");
    if (stringField(member(spec, "csi"), "driver") == driverName) {
      const Json& ref = member(spec, "claimRef");
      claims.insert(stringField(ref, "namespace") + "/" + stringField(ref, "name"));
    }
  }
  std::map<std::string, NodeVolumeUsers> out;
  for (const CachedPod* pod : pods) {
    if (pod->nodeName.empty() || pod->terminated()) {
      continue;
    }
    bool uses = false;
    for (const CachedPod::Volume& v : pod->volumes) {
      if (v.csiDriver == driverName) {
        uses = true;
      } else if (!v.claimName.empty()) {
        uses |= claims.contains(pod->namespace_ + "/" + v.claimName);
      } else if (v.ephemeral) {
        uses |= claims.contains(pod->namespace_ + "/" + pod->name + "-" + v.name);
      }
    }
    if (uses) {
      NodeVolumeUsers& u = out[pod->nodeName];
      u.pods.push_back(pod->key());
      if (!pod->drainLeaves) {
        u.blocking.push_back(pod->key());
      }
    }
  }
  return out;
}

std::string currentRevisionHash(const std::vector<const Json*>& revisions,
                                const std::string& dsUid) {
  std::int64_t newest = -1;
  std::string hash;
  for (const Json* r : revisions) {
    const Json& owners = member(member(*r, "metadata"), "ownerReferences");
    const bool owned = owners.is_array() &&
                       std::any_of(owners.begin(), owners.end(),
                                   [&](const Json& o) { return stringField(o, "uid") == dsUid; });
    const Json& revision = member(*r, "revision");
    if (owned && revision.is_number_integer() && revision.get<std::int64_t>() > newest) {
      newest = revision.get<std::int64_t>();
      hash = stringField(member(member(*r, "metadata"), "labels"), "controller-revision-hash");
    }
  }
  return hash;
}

std::int32_t resolveMaxUnavailable(const Json& value, std::int32_t desired) {
  std::int64_t n = 1;
  if (value.is_number_integer()) {
    n = value.get<std::int64_t>();
  } else if (value.is_string()) {
    // "N%" (validated: 1% to 100%, perhaps zero-padded); anything else keeps the default.
    const std::string s = value.get<std::string>();
    std::int64_t percent = 0;
    bool digits = s.size() >= 2 && s.back() == '%';
    for (std::size_t i = 0; digits && i + 1 < s.size(); ++i) {
      digits = s[i] >= '0' && s[i] <= '9';
      percent = std::min<std::int64_t>(percent * 10 + (s[i] - '0'), 100);
    }
    if (digits) {
      n = (percent * desired + 99) / 100;
    }
  }
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(n, 1, 1'000'000));
}

NodeSafety nodeSafety(const std::string& node, const std::map<std::string, NodeVolumeUsers>& users,
                      const std::map<std::string, const Json*>& nodes) {
  const auto usersIt = users.find(node);
  const NodeVolumeUsers none;
  const NodeVolumeUsers& using_ = usersIt == users.end() ? none : usersIt->second;
  const auto nodeIt = nodes.find(node);
  const Json* nodeObject = nodeIt == nodes.end() ? nullptr : nodeIt->second;
  const Flag allowed = nodeObject == nullptr
                           ? Flag::No
                           : flagAnnotation(*nodeObject, kAllowNodePluginUpdateAnnotation);
  const bool cordoned =
      nodeObject != nullptr && api::isTrue(member(*nodeObject, "spec"), "unschedulable");
  NodeSafety out;
  if (using_.pods.empty()) {
    out.why = "no pod on the node uses a volume of the driver";
  } else if (allowed == Flag::Yes) {
    out.why = std::string("the node is annotated ") + kAllowNodePluginUpdateAnnotation + "=true";
  } else if (cordoned && using_.blocking.empty()) {
    out.why = "the node is drained (cordoned; only pods a drain leaves use the driver's volumes)";
  } else {
    std::string message = std::to_string(using_.pods.size()) +
                          (using_.pods.size() == 1 ? " pod uses" : " pods use") +
                          " volumes of the driver (" + names(using_.pods) + ")";
    std::string reason = "VolumesInUse";
    if (allowed == Flag::Invalid) {
      reason = "InvalidAnnotation";
      message = invalidFlagMessage(*nodeObject, kAllowNodePluginUpdateAnnotation, "node " + node) +
                "; " + message;
    }
    out.wait = NodeWait{node, std::move(reason), std::move(message)};
  }
  return out;
}

NodeRolloutPlan planNodeRollout(const NodeRolloutInput& in) {
  NodeRolloutPlan plan;
  if (in.currentHash.empty()) {
    return plan; // the DaemonSet controller has not recorded a revision yet
  }
  std::int32_t unavailable = in.unavailable;
  std::int32_t podsUnavailable = 0;
  std::vector<const CachedPod*> outdated;
  for (const CachedPod* pod : in.pluginPods) {
    if (pod->deleting || !pod->ready) {
      ++podsUnavailable;
    }
    if (pod->revisionHash == in.currentHash) {
      ++plan.updated;
    } else if (!pod->deleting) {
      outdated.push_back(pod);
    }
  }
  unavailable = std::max(unavailable, podsUnavailable);
  plan.outdated = static_cast<std::int32_t>(outdated.size());
  std::sort(outdated.begin(), outdated.end(),
            [](const CachedPod* a, const CachedPod* b) { return a->nodeName < b->nodeName; });
  std::int32_t budget = in.maxUnavailable - unavailable;
  for (const CachedPod* pod : outdated) {
    const std::string& node = pod->nodeName;
    NodeSafety safety = nodeSafety(node, in.users, in.nodes);
    if (safety.wait) {
      plan.waiting.push_back(std::move(*safety.wait));
      continue;
    }
    const std::string& why = safety.why;
    if (budget <= 0) {
      plan.waiting.push_back({node, "MaxUnavailable",
                              "ready to update (" + why + "); waiting for " +
                                  std::to_string(in.maxUnavailable) +
                                  " node(s) at most to be unavailable"});
      continue;
    }
    --budget;
    plan.replace.push_back({pod->name, pod->uid, node, why});
  }
  return plan;
}

} // namespace csiop::driverdeployment
