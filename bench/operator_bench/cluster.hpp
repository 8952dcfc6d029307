// The local control plane of test/cluster, driven through its scripts.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace csiop::bench {

// test/cluster/up --name NAME --nodes N [upArgs...] (reuses a healthy cluster of that name);
// returns the kubeconfig path, the last line it prints. Its progress goes to stderr. Throws on
// failure.
std::filesystem::path clusterUp(const std::filesystem::path& sourceDir, const std::string& name,
                                int nodes, const std::vector<std::string>& upArgs = {});

// test/cluster/down --name NAME. Returns false (after saying so on stderr) if it failed.
bool clusterDown(const std::filesystem::path& sourceDir, const std::string& name);

// The client rate flags (--kube-api-qps, --kube-api-burst) that the controller manager and the
// scheduler of a test/cluster cluster were started with, read from the command lines its state
// directory records beside the kubeconfig (run/<component>.argv): "kube-controller-manager
// --kube-api-qps=500 ...; kube-scheduler (defaults)". "" when the kubeconfig is not in one.
std::string controlPlaneRates(const std::filesystem::path& kubeconfig);

} // namespace csiop::bench
