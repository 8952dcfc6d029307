// The CRDs the binary carries, byte for byte.
#pragma once

#include <string_view>

namespace csiop::embedded {

// The DriverDeployment CRD (crds/csiop.dev_driverdeployments.yaml).
std::string_view crdYaml();

// The csi.storage.k8s.io/v1alpha1 CSIDriver CRD of Kubernetes 1.12-1.13
// (crds/legacy/csidrivers.csi.storage.k8s.io.yaml), installed only on clusters
// that do not serve storage.k8s.io/v1 CSIDriver.
std::string_view legacyCsiDriverCrdYaml();

} // namespace csiop::embedded
