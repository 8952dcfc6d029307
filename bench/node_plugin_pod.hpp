// The node plugin pod of examples/hostpath.yaml as the API server sends it when it runs: the
// rendered DaemonSet's pod template with the metadata (owner label included), managedFields and
// status of a running pod on node kwok-node-17. What the watch benchmarks feed the pod cache
// (watch_event_bench, watch_path/).
#pragma once

#include <csiop/api/types.hpp>

namespace csiop::bench {

api::Json runningNodePluginPod();

} // namespace csiop::bench
