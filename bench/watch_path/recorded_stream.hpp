// The recorded stream of the watch path benchmark: the watch events of node plugin pods as the API
// server sends them, one JSON event per line ({"type":...,"object":{...}}), what replay-server
// serves to each client. Each pod (examples/hostpath.yaml's, one per node, carrying the owner
// label) is ADDED pending; its kubelet then reports it starting, running, ready, a container
// turning unready and back, a container crashing and restarting, again and again (MODIFIED, the
// pods taking turns); last, each pod is marked for deletion (MODIFIED) and DELETED. Every event has
// a resourceVersion of its own, increasing from 2 (the empty list's is 1).
#pragma once

#include <cstddef>
#include <ostream>

namespace csiop::bench {

struct StreamShape {
  std::size_t events = 20'000;
  std::size_t pods = 50; // at most events / 3: each pod is added, marked and deleted
};

// Throws std::invalid_argument for a shape that does not fit.
void writeRecordedStream(std::ostream& out, const StreamShape& shape);

} // namespace csiop::bench
