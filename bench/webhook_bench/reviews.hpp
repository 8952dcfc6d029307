// The AdmissionReviews of the webhook benchmarks, as the API server sends them
// for a CREATE of a DriverDeployment (the examples/ manifests).
#pragma once

#include <string>
#include <vector>

#include <csiop/api/yaml.hpp>

#include "load.hpp"

namespace csiop::bench::webhook {

// The place of the uid in a review's text: a ReviewKind's body is the text
// before it, the uid, and the text after it.
inline constexpr const char* kUidMark = "@UID@";

// The first object of examples/`file`.
csiop::api::Json example(const std::string& file);

// A review for a CREATE of `object`, which must get `allowed`.
ReviewKind reviewKind(std::string name, const csiop::api::Json& object, bool allowed);

// webhook_bench's mix per 10 reviews: 7 valid CREATE of examples/hostpath.yaml
// (allowed), 1 invalid spec (422), 1 driverName of another DriverDeployment
// (403), 1 second DriverDeployment for hostpath's driver name (403).
std::vector<ReviewKind> reviewMix();

} // namespace csiop::bench::webhook
