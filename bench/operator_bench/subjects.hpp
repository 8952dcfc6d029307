// The operators the peer scenario compares (peer.hpp): how each is started, what it is given
// and what it must create, so that one harness measures both the same way. Both get the same
// workload: per custom resource a CSIDriver, a node plugin DaemonSet and a controller
// Deployment of 2 replicas with the provisioner, attacher, resizer and snapshotter sidecars.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <csiop/kube/resource.hpp>
#include <csiop/testsupport/operator_command.hpp>
#include <csiop/testsupport/process.hpp>

#include "workload.hpp"

namespace csiop::bench {

// What one custom resource must lead to.
struct ExpectedWorkload {
  std::string driverName; // the CSIDriver's name
  ObjectKey daemonSet;    // the node plugin
  ObjectKey deployment;   // the controller plugin
};

struct Subject {
  enum class Kind { CsiOperator, CephCsiOperator };
  Kind kind = Kind::CsiOperator;
  std::string title;             // column heading
  kube::ResourceRef resource;    // its custom resource
  std::vector<Json> setup;       // applied (server-side) before it starts: CRDs, namespace, ...
  std::vector<std::string> crds; // CRD names in `setup`, waited for until Established
  std::vector<std::string> argv;
  testsupport::EnvVars env;
  // Texts that one line of its log holds once it is ready; none: ready when GET /readyz on
  // the health port answers 200.
  std::vector<std::string> readyLogLine;
  std::string reconcileMetric;  // counter of finished reconciles
  std::string requestMetric;    // counter of API requests sent
  bool deletesCsiDriver = true; // false: the harness removes it after each measured delete

  std::string crName(const std::string& base) const; // "bench-3" -> the CR's name
  std::string crNamespace() const;                   // "" when cluster-scoped
  Json cr(const std::string& crName) const;
  ExpectedWorkload expected(const std::string& crName) const;
};

using Ports = testsupport::OperatorPorts;

// csi-operator run: DriverDeployments (cluster-scoped), each in a namespace of its own.
Subject csiOperatorSubject(const std::string& binary, const std::filesystem::path& kubeconfig,
                           const Ports& ports);

// ceph-csi-operator (v1.0.x, built from its source): RBD Drivers in one namespace, as its
// users deploy them; `source` is its checkout (its CRDs are read from config/crd/bases). The
// setup holds that namespace and the ServiceAccounts its pods run as, which its Helm chart
// installs (the operator creates none).
Subject cephCsiOperatorSubject(const std::string& binary, const std::filesystem::path& source,
                               const std::filesystem::path& kubeconfig, const Ports& ports);

} // namespace csiop::bench
