// The load generator of webhook_bench: N TLS keep-alive connections to the
// webhook, each sending one AdmissionReview at a time (closed loop), or at a
// fixed rate (open loop: latency counts from when a review was due, so a
// stalled server is not hidden by the client waiting for it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace csiop::bench::webhook {

// One kind of review in the mix: its body is prefix + uid + suffix.
struct ReviewKind {
  std::string name;
  std::string prefix;
  std::string suffix;
  bool allowed = true; // the answer it must get
};

struct LoadOptions {
  std::uint16_t port = 0;
  std::string caPem;
  int connections = 8;
  std::chrono::milliseconds warmup{2000};
  std::chrono::milliseconds duration{20000}; // measured, after the warm-up
  double rate = 0;                           // reviews/s over all connections; 0: closed loop
  // The kind of each connection's n-th review is mix[n % mix.size()].
  std::vector<ReviewKind> mix;
  // Called on the load generator's thread when the measured window starts
  // ("start"), at its middle ("middle"), at its end ("end"), and every second
  // of it ("tick").
  std::function<void(const char* phase)> onPhase;
};

struct LoadResult {
  std::uint64_t reviews = 0;    // answered within the measured window
  std::uint64_t unexpected = 0; // answers that were not the expected AdmissionReview
  std::uint64_t failedConnections = 0;
  std::string firstProblem;
  double seconds = 0;                     // the measured window
  std::vector<std::uint32_t> latenciesNs; // of the reviews answered in the window, sorted
  // Open loop: how late each of those was sent (the load generator's own
  // delay, which the latency includes), sorted.
  std::vector<std::uint32_t> sendLagNs;
  std::map<std::string, std::uint64_t> kinds; // reviews answered in the window, by kind
  std::string tls;                            // protocol and cipher of the first connection
};

LoadResult runLoad(const LoadOptions& options);

} // namespace csiop::bench::webhook
