#include <csiop/driverdeployment/registration_problems.hpp>

#include <algorithm>
#include <set>

namespace csiop::driverdeployment {
namespace {

bool lists(const CachedCSINode& csiNode, const std::string& driver) {
  return std::find(csiNode.drivers.begin(), csiNode.drivers.end(), driver) != csiNode.drivers.end();
}

std::string restartedMessage(const CachedPod& pod, const CachedPod::RestartedContainer& registrar) {
  std::string out = "the registrar of plugin pod " + pod.name + " restarted " +
                    std::to_string(registrar.restarts) +
                    (registrar.restarts == 1 ? " time" : " times") + "; its last run ended";
  if (registrar.finished != api::WallTime{}) {
    out += " at " + api::formatRfc3339(registrar.finished);
  }
  out += " with exit code " + std::to_string(registrar.exitCode);
  if (!registrar.reason.empty()) {
    out += " (" + registrar.reason + ")";
  }
  if (!registrar.message.empty()) {
    out += ": " + printableLine(registrar.message, CachedPod::kMaxTerminationMessage);
  }
  return out;
}

} // namespace

std::string printableLine(std::string_view text, std::size_t max) {
  std::string out;
  bool lineBreak = false;
  for (const char ch : text) {
    if (ch == '\n' || ch == '\r') {
      lineBreak = !out.empty();
      continue;
    }
    if (lineBreak) {
      out += " / ";
      lineBreak = false;
    }
    const auto byte = static_cast<unsigned char>(ch);
    out += byte >= 0x20 && byte <= 0x7E ? ch : (ch == '\t' ? ' ' : '?');
    if (out.size() >= max) {
      break;
    }
  }
  if (out.size() > max) {
    out.erase(max);
  }
  return out;
}

RegistrationProblems
registrationProblems(const std::vector<const CachedPod*>& pluginPods,
                     const std::function<const CachedCSINode*(const std::string&)>& csiNodeOf,
                     const std::string& driver, api::WallTime now, std::chrono::seconds grace) {
  RegistrationProblems out;
  std::vector<const CachedPod*> pods;
  for (const CachedPod* pod : pluginPods) {
    if (!pod->deleting && !pod->nodeName.empty()) {
      pods.push_back(pod);
    }
  }
  // One report per node: during a rollout a node can have its old pod and its new one.
  std::sort(pods.begin(), pods.end(), [](const CachedPod* a, const CachedPod* b) {
    return a->nodeName != b->nodeName ? a->nodeName < b->nodeName : a->created > b->created;
  });
  std::set<std::string> seen;
  for (const CachedPod* pod : pods) {
    if (!seen.insert(pod->nodeName).second) {
      continue; // the node's newest pod tells its story
    }
    const CachedCSINode* csiNode = csiNodeOf(pod->nodeName);
    if (csiNode != nullptr && lists(*csiNode, driver)) {
      continue;
    }
    UnregisteredNode node{pod->nodeName, pod->namespace_, pod->name, pod->uid, {}, {}, false, 0};
    if (const auto* registrar = pod->restartedContainer(kRegistrarContainer);
        registrar != nullptr && !registrar->init) {
      node.reason = registration::kRegistrarRestarting;
      node.message = restartedMessage(*pod, *registrar);
      node.previousLog = true;
      node.restarts = registrar->restarts;
      out.nodes.push_back(std::move(node));
      continue;
    }
    if (!pod->ready) {
      continue; // podProblems says why the pod does not run
    }
    if (pod->readySince != api::WallTime{} && now - pod->readySince < grace) {
      const api::WallTime due = pod->readySince + grace;
      out.recheckAt = out.recheckAt ? std::min(*out.recheckAt, due) : due;
      continue;
    }
    // A time, not a span: the message stays the same from pass to pass (no status write).
    const std::string readyFor = pod->readySince == api::WallTime{}
                                     ? std::string()
                                     : " since " + api::formatRfc3339(pod->readySince);
    if (csiNode == nullptr) {
      node.reason = registration::kNoCSINode;
      node.message = "plugin pod " + pod->name + " has been Ready" + readyFor +
                     ", and the node has no CSINode: the kubelet makes it when its CSI plugin "
                     "manager starts, and registers no driver without it";
    } else {
      node.reason = registration::kNotRegistered;
      node.message =
          "plugin pod " + pod->name + " has been Ready" + readyFor +
          ", and the kubelet has not registered the driver: it never took the registrar's "
          "socket (the registration directory must be the kubelet's plugins_registry, under "
          "the kubelet's --root-dir: spec.node.kubeletDir)";
    }
    out.nodes.push_back(std::move(node));
  }
  return out;
}

} // namespace csiop::driverdeployment
