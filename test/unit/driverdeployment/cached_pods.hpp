// Pods as the tests write them (JSON, as the API server sends them), decoded as the pod cache
// keeps them (CachedPod), for the functions that read the cache.
#pragma once

#include <vector>

#include <csiop/driverdeployment/cached_pod.hpp>

namespace csiop::driverdeployment::test {

inline std::vector<CachedPod> decoded(const std::vector<Json>& pods) {
  std::vector<CachedPod> out;
  out.reserve(pods.size());
  for (const Json& p : pods) {
    out.push_back(decodePod(p));
  }
  return out;
}

inline std::vector<const CachedPod*> podPointers(const std::vector<CachedPod>& pods) {
  std::vector<const CachedPod*> out;
  out.reserve(pods.size());
  for (const CachedPod& p : pods) {
    out.push_back(&p);
  }
  return out;
}

} // namespace csiop::driverdeployment::test
