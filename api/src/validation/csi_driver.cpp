#include "sections.hpp"

namespace csiop::api::validation {

void csiDriver(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.csiDriver) {
    return;
  }
  const CSIDriverSpec& c = *spec.csiDriver;
  const std::string p = "spec.csiDriver";
  if (c.fsGroupPolicy) {
    v.oneOf(p + ".fsGroupPolicy", *c.fsGroupPolicy, {"File", "None", "ReadWriteOnceWithFSType"});
  }
  if (c.volumeLifecycleModes) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < c.volumeLifecycleModes->size(); ++i) {
      const auto& mode = (*c.volumeLifecycleModes)[i];
      v.oneOf(idx(p + ".volumeLifecycleModes", i), mode, {"Ephemeral", "Persistent"});
      if (!seen.insert(mode).second) {
        v.add(duplicate(idx(p + ".volumeLifecycleModes", i), mode));
      }
    }
  }
  if (c.tokenRequests) {
    if (c.tokenRequests->size() > kMaxTokenRequests) {
      v.add(tooMany(p + ".tokenRequests", c.tokenRequests->size(), kMaxTokenRequests));
    }
    std::set<std::string> audiences;
    for (std::size_t i = 0; i < c.tokenRequests->size(); ++i) {
      const auto& tr = (*c.tokenRequests)[i];
      const std::string ip = idx(p + ".tokenRequests", i);
      if (!audiences.insert(tr.audience).second) {
        v.add(duplicate(ip + ".audience", tr.audience));
      }
      if (tr.expirationSeconds) {
        const auto e = *tr.expirationSeconds;
        if (e < 600) {
          v.add(invalid(ip + ".expirationSeconds", e,
                        "may not specify a duration less than 10 minutes"));
        } else if (e > (std::int64_t{1} << 32)) {
          v.add(invalid(ip + ".expirationSeconds", e,
                        "may not specify a duration larger than 2^32 seconds"));
        }
      }
    }
  }
  if (c.nodeAllocatableUpdatePeriodSeconds && *c.nodeAllocatableUpdatePeriodSeconds < 10) {
    v.add(invalid(p + ".nodeAllocatableUpdatePeriodSeconds", *c.nodeAllocatableUpdatePeriodSeconds,
                  "must be greater than or equal to 10 seconds"));
  }
  // As Kubernetes: setting it at all (even to false) needs tokenRequests.
  if (c.serviceAccountTokenInSecrets && (!c.tokenRequests || c.tokenRequests->empty())) {
    v.add(invalid(p + ".serviceAccountTokenInSecrets", *c.serviceAccountTokenInSecrets,
                  "serviceAccountTokenInSecrets is set but no tokenRequests are specified"));
  }
}

} // namespace csiop::api::validation
