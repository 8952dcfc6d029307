// The local control plane of test/cluster, driven through its scripts.
#pragma once

#include <filesystem>
#include <string>

namespace csiop::bench {

// test/cluster/up --name NAME --nodes N (reuses a healthy cluster of that name); returns the
// kubeconfig path, the last line it prints. Its progress goes to stderr. Throws on failure.
std::filesystem::path clusterUp(const std::filesystem::path& sourceDir, const std::string& name,
                                int nodes);

// test/cluster/down --name NAME. Returns false (after saying so on stderr) if it failed.
bool clusterDown(const std::filesystem::path& sourceDir, const std::string& name);

} // namespace csiop::bench
