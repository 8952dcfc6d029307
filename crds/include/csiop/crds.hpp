// The DriverDeployment CRD (crds/csiop.dev_driverdeployments.yaml), byte for byte.
#pragma once

#include <string_view>

namespace csiop::embedded {

std::string_view crdYaml();

} // namespace csiop::embedded
