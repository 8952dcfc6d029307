// What the reconciler last wrote to each child, so that a pass can tell, without comparing whole
// objects or asking the server:
// - whether a child is as it was applied (the same desired object, and the cache shows the
//   version the write made): nothing to compare, nothing to write;
// - whether the cache is behind the last write (the write made a generation the cache does not
//   show yet): the workload's status is that of its previous spec.
// Pure (no I/O); one per reconciler.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <csiop/api/types.hpp>

namespace csiop::controller {

class AppliedObjects {
public:
  // `desired` was written; the server answered `result`.
  void remember(const api::Json& desired, const api::Json& result);
  // The child is gone (pruned).
  void forget(const std::string& key);
  // `desired` is what was last written to `live`, and `live` is the version that write made.
  bool unchangedSinceApplied(const api::Json& desired, const api::Json& live) const;
  // The cached `live` is older than what was last applied to it: the apply made a generation
  // the cache has not shown yet.
  bool behindLastApply(const api::Json& live) const;

private:
  struct Applied {
    std::string desiredHash;
    std::string resourceVersion;
    std::string uid;
    std::int64_t generation = 0;
  };
  std::map<std::string, Applied> applied_; // by "Kind ns/name"
};

} // namespace csiop::controller
