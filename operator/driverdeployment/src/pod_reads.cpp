#include <csiop/driverdeployment/pod_reads.hpp>

#include <fmt/format.h>

namespace csiop::driverdeployment {

namespace {

std::string countsOf(const PodReadInput& in) {
  std::string out = fmt::format("r{}", in.registered);
  for (const WorkloadPods& w : in.workloads) {
    out += fmt::format(" {}{}:{}/{}/{}/{}", w.generation, w.observedCurrent ? "" : "*", w.desired,
                       w.existing, w.updated, w.ready);
  }
  return out;
}

// What the pods would explain ("": nothing, as far as the status counts go).
std::string toExplain(const PodReadInput& in) {
  std::int32_t pluginsReady = 0;
  for (const WorkloadPods& w : in.workloads) {
    if (w.existing > w.ready) {
      return fmt::format("{} of {} pods not ready", w.existing - w.ready, w.existing);
    }
    if (w.nodePlugin) {
      pluginsReady += w.ready;
    }
  }
  if (in.registered < pluginsReady) {
    return fmt::format("{} of {} nodes with a ready node plugin have not registered the driver",
                       pluginsReady - in.registered, pluginsReady);
  }
  return "";
}

bool settled(const WorkloadPods& w) {
  return w.observedCurrent && w.existing == w.desired && w.updated == w.desired &&
         w.ready == w.desired;
}

} // namespace

PodRead podReadDecision(const PodReadInput& in, PodReadClock& clock, api::WallTime now) {
  if (std::string counts = countsOf(in); counts != clock.counts) {
    clock = {std::move(counts), now};
  }
  if (!in.everyPass.empty()) {
    return {true, in.everyPass, false, std::nullopt};
  }
  const std::string stall = toExplain(in);
  if (!in.operatorRollout.empty()) {
    if (in.rolloutUnderway) {
      return {true, in.operatorRollout + " under way", false, std::nullopt};
    }
    for (const WorkloadPods& w : in.workloads) {
      if (w.operatorRolled && !settled(w)) {
        return {true, in.operatorRollout + ": a workload not settled", false, std::nullopt};
      }
    }
    if (!stall.empty()) {
      return {true, in.operatorRollout + ": " + stall, false, std::nullopt};
    }
  }
  if (stall.empty()) {
    return {};
  }
  if (now - clock.since < kPodReadAfter) {
    return {false, "", false, clock.since + kPodReadAfter};
  }
  return {true, stall + " and no change for " + std::to_string(kPodReadAfter.count()) + " s", true,
          std::nullopt};
}

} // namespace csiop::driverdeployment
