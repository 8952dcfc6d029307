#include "driver.hpp"

#include "node_only_driver.hpp"

namespace csiop::bench {

std::string driverManifest(const DriverShape& s) {
  std::string rollout = "    type: Unverified\n";
  if (s.verified) {
    // The defaults but for the soak (0: the mechanism's own time, not a policy's wait): one
    // canary (the real node, whose smoke volume is the third gate), batches of 25 %.
    rollout = std::string("    type: Verified\n") +
              "    canary:\n      nodeSelector:\n        csiop.dev/real-node: \"true\"\n" +
              "    soakSeconds: 0\n    gateTimeoutSeconds: 60\n" +
              "    prePullImages: " + (s.prePull ? "true" : "false") + "\n" +
              "    smokeVolume:\n      ephemeral: {}\n";
  }
  return e2e::nodeOnlyDriverManifest({.name = kDd,
                                      .driverName = kDriver,
                                      .namespace_ = kNamespace,
                                      .stateDir = "/var/lib/csiop-bench-rollout-data",
                                      .image = s.image,
                                      .pullPolicy = s.pullPolicy,
                                      .firstArg = s.arg,
                                      .readOnlyState = s.readOnlyState,
                                      .rollout = rollout});
}

} // namespace csiop::bench
