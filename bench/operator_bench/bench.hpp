// One benchmark run against a cluster: starts the operator, runs the scenarios, cleans up.
#pragma once

#include <filesystem>

#include "options.hpp"
#include "report.hpp"

namespace csiop::bench {

// clusterStays: the cluster outlives the run (given by --kubeconfig, or --keep-cluster), so the
// CSINode registrations and the namespaces are removed too. Fills `report` as it goes; returns
// the exit code (0: every scenario completed). Throws if the run could not start.
int runBench(const Options& options, const std::filesystem::path& kubeconfig, bool clusterStays,
             Report& report);

} // namespace csiop::bench
