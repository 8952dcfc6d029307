#include "registration_stand_in.hpp"

#include "harness.hpp"

namespace csiop::e2e {

namespace {

const std::string kFieldManager = "csiop-test-registration";

bool podReady(const Json& pod) {
  if (pod["metadata"].contains("deletionTimestamp"))
    return false;
  for (const Json& c : pod.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == "Ready")
      return c.value("status", "") == "True";
  }
  return false;
}

// The stand-in's part of the CSINode of `node`: `drivers`, applied server-side with its own
// field manager, so that a driver it no longer lists is dropped and others' entries stay.
std::string csiNodeManifest(const std::string& node, const std::set<std::string>& drivers) {
  Json list = Json::array();
  for (const std::string& d : drivers)
    list.push_back(Json{{"name", d}, {"nodeID", node}});
  const Json csiNode = {{"apiVersion", "storage.k8s.io/v1"},
                        {"kind", "CSINode"},
                        {"metadata", {{"name", node}}},
                        {"spec", {{"drivers", list}}}};
  return csiNode.dump();
}

// One field manager per set of DriverDeployments, so that stand-ins for different ones (one
// stopped while another goes on) each drop only their own entries.
std::string fieldManagerFor(const std::set<std::string>& only) {
  std::string manager = kFieldManager;
  for (const std::string& name : only)
    manager += "-" + name;
  return manager.substr(0, 128);
}

} // namespace

RegistrationStandIn::RegistrationStandIn(std::vector<std::string> nodes, std::set<std::string> only)
    : nodes_(std::move(nodes)), only_(std::move(only)), fieldManager_(fieldManagerFor(only_)) {
  thread_ = std::jthread([this](const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      try {
        registerPlugins();
      } catch (const std::exception&) {
        // The API server was busy or a list changed under us: the next pass tries again.
      }
      for (int i = 0; i < 10 && !stop.stop_requested(); ++i)
        std::this_thread::sleep_for(100ms);
    }
  });
}

RegistrationStandIn::~RegistrationStandIn() {
  thread_.request_stop();
  if (thread_.joinable())
    thread_.join();
  std::map<std::string, Plugins> none;
  for (const std::string& node : nodes_)
    none[node];
  list(none);
}

void RegistrationStandIn::registerPlugins() {
  std::map<std::string, std::string> driverOf; // DriverDeployment -> spec.driverName
  const Json dds = kubectlJson({"get", "driverdeployments"});
  for (const Json& dd : dds["items"]) {
    const std::string name = dd["metadata"].value("name", "");
    if (only_.empty() || only_.contains(name))
      driverOf[name] = dd["spec"].value("driverName", "");
  }
  std::map<std::string, Plugins> wanted;
  for (const std::string& node : nodes_)
    wanted[node];
  const Json pods =
      kubectlJson({"get", "pods", "-A", "-l", "app.kubernetes.io/component=node-plugin"});
  for (const Json& pod : pods["items"]) {
    const auto node = wanted.find(pod["spec"].value("nodeName", ""));
    const auto owner = driverOf.find(
        pod["metadata"].value("labels", Json::object()).value("app.kubernetes.io/instance", ""));
    if (node != wanted.end() && owner != driverOf.end() && podReady(pod))
      node->second[owner->second] = pod["metadata"].value("uid", "");
  }
  list(wanted);
}

void RegistrationStandIn::list(const std::map<std::string, Plugins>& plugins) {
  for (const auto& [node, wanted] : plugins) {
    const auto it = listed_.find(node);
    const Plugins listed = it == listed_.end() ? Plugins{} : it->second;
    if (listed == wanted)
      continue;
    // A driver whose plugin pod changed is dropped first, as its old pod's socket went away.
    Plugins kept;
    for (const auto& [driver, uid] : listed) {
      const auto now = wanted.find(driver);
      if (now != wanted.end() && now->second == uid)
        kept[driver] = uid;
    }
    if (kept != listed && !apply(node, kept))
      continue;
    apply(node, wanted);
  }
}

bool RegistrationStandIn::apply(const std::string& node, const Plugins& plugins) {
  std::set<std::string> drivers;
  for (const auto& entry : plugins)
    drivers.insert(entry.first);
  const bool ok = kubectl({"apply", "--server-side", "--force-conflicts",
                           "--field-manager=" + fieldManager_, "-f", "-"},
                          csiNodeManifest(node, drivers))
                      .ok();
  if (ok)
    listed_[node] = plugins;
  return ok;
}

} // namespace csiop::e2e
