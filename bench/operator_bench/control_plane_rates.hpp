// What the benchmark reports of a test/cluster control plane it ran against (bringing one up
// and down is test/support's: <csiop/testsupport/local_cluster.hpp>).
#pragma once

#include <filesystem>
#include <string>

namespace csiop::bench {

// The client rate flags (--kube-api-qps, --kube-api-burst) that the controller manager and the
// scheduler of a test/cluster cluster were started with, read from the command lines its state
// directory records beside the kubeconfig (run/<component>.argv): "kube-controller-manager
// --kube-api-qps=500 ...; kube-scheduler (defaults)". "" when the kubeconfig is not in one.
std::string controlPlaneRates(const std::filesystem::path& kubeconfig);

} // namespace csiop::bench
