// A stand-in for the kubelet's CSI plugin registration on fake (kwok) nodes. kwok plays a
// node's kubelet (a pod bound to it is Running and Ready at once, runs nothing, and goes when
// deleted) but has no plugin registration, so nothing would ever list a driver in the node's
// CSINode. About every second the stand-in lists, in each of its nodes' CSINode, the driver of
// every node plugin pod Ready on that node and not being deleted (the spec.driverName of the
// pod's DriverDeployment, the node's name as its node ID), and drops a driver whose pod is gone
// or going, as the kubelet does when a plugin's registration socket goes away. A driver whose
// pod was replaced between two passes is dropped and listed again, so that the listing is seen
// to appear after the new pod, as the kubelet's would. It writes with its own field manager (one
// per set of DriverDeployments it serves), so it drops only what it listed. It is a stand-in
// because upstream has none: no fake kubelet registers CSI plugins. A real node's registration is
// its kubelet's.
#pragma once

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace csiop::e2e {

class RegistrationStandIn {
public:
  // Registers on `nodes` the drivers of the DriverDeployments `only` names (empty: of all).
  explicit RegistrationStandIn(std::vector<std::string> nodes, std::set<std::string> only = {});
  // Stops, and drops every driver it listed.
  ~RegistrationStandIn();
  RegistrationStandIn(const RegistrationStandIn&) = delete;
  RegistrationStandIn& operator=(const RegistrationStandIn&) = delete;

private:
  // driver -> the uid of its Ready plugin pod, on one node
  using Plugins = std::map<std::string, std::string>;

  // One pass: each node's CSINode lists the drivers of `plugins`.
  void registerPlugins();
  void list(const std::map<std::string, Plugins>& plugins);
  bool apply(const std::string& node, const Plugins& plugins);

  std::vector<std::string> nodes_;
  std::set<std::string> only_;
  std::string fieldManager_;
  std::map<std::string, Plugins> listed_; // by node: what its CSINode lists
  std::jthread thread_;
};

} // namespace csiop::e2e
