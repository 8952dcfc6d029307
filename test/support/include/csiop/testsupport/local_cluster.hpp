// The local control plane of test/cluster, driven through its scripts: the e2e suites that
// start a cluster of their own and the benchmarks bring it up and down by name.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <csiop/testsupport/process.hpp>

namespace csiop::testsupport {

// `sourceDir`/test/cluster/up --name NAME --nodes N [upArgs...] (it reuses a healthy cluster of
// that name): the kubeconfig, the last line it prints. Throws std::runtime_error naming the
// command, its exit and output if it fails.
std::filesystem::path clusterUp(const std::filesystem::path& sourceDir, const std::string& name,
                                int nodes, const std::vector<std::string>& upArgs = {},
                                const RunOptions& options = {.timeout = std::chrono::minutes(30)});

// `sourceDir`/test/cluster/build: the directory of the control plane's tools (kubectl, helm,
// kwokctl, ...), built on first use. Throws std::runtime_error like clusterUp.
std::filesystem::path clusterBinDir(const std::filesystem::path& sourceDir,
                                    const RunOptions& options = {
                                        .timeout = std::chrono::minutes(30)});

// `sourceDir`/test/cluster/down --name NAME.
RunResult clusterDown(const std::filesystem::path& sourceDir, const std::string& name,
                      const RunOptions& options = {});

} // namespace csiop::testsupport
