// What the reconciler last wrote to each child, so that a pass can tell, without comparing whole
// objects or asking the server:
// - whether a child is as it was applied (the same desired object, and the cache shows the
//   version the write made, or a later one that differs from it in status only): nothing to
//   compare, nothing to write. A child compared and found to hold the desired object counts
//   as applied alike, so that a child whose status changes (a DaemonSet's, at every pod) is
//   compared once, not at every change, and so after a restart too;
// - whether the cache is behind the last write (the write made a generation the cache does not
//   show yet): the workload's status is that of its previous spec.
// Pure (no I/O); one per reconciler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <optional>

#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/cached_child.hpp>

namespace csiop::driverdeployment {

class AppliedObjects {
public:
  // `desired` was written; the server answered `result`, with these warnings (a field it
  // dropped or did not know, a deprecated API: kube/warning_header.hpp).
  void remember(const api::Json& desired, const api::Json& result,
                std::vector<std::string> warnings = {});
  // `live` was compared with `desired` and holds it: as if `desired` had been written (the
  // warnings of the write that made it, if it was this one's, are kept).
  void verified(const api::Json& desired, const CachedChild& live);
  // The warnings of the last write of each child of the DriverDeployment `owner`, as
  // "Kind ns/name: text", by child then in the server's order; at most kWarningsPerChild each
  // and kWarningsListed in all, then "and N more".
  static constexpr std::size_t kWarningsPerChild = 5;
  static constexpr std::size_t kWarningsListed = 10;
  std::vector<std::string> warningsOf(const std::string& owner) const;
  // The child is gone (pruned).
  void forget(const std::string& key);
  // Every child of the DriverDeployment `owner` (by its owner label): it is gone.
  void forgetOwner(const std::string& owner);
  // Children remembered.
  std::size_t size() const { return applied_.size(); }
  // `desired` is what was last written to (or verified in) `live`, and `live` is the version
  // that write made or one that differs from it in status only. Not const: it learns the
  // content of the version a write made when the cache first shows it.
  bool unchangedSinceApplied(const api::Json& desired, const CachedChild& live);
  // Something else than `desired` was last written to (or verified in) its child: the desired
  // object changed since. Then a live child that holds every field of `desired` may still hold
  // a field the last write set and `desired` no longer has (a mount no longer read-only, a limit
  // removed, a rollback's template): only a write removes it (server-side apply drops the fields
  // the operator owned and no longer sends). False when nothing was recorded (after a restart:
  // the comparison alone decides, so that a restart writes nothing).
  bool changedSinceApplied(const api::Json& desired) const;
  // The cached `live` is older than what was last applied to it: the apply made a generation
  // the cache has not shown yet.
  bool behindLastApply(const api::Json& live) const;

private:
  // `desired` as applied to `object` (a write's result, or a cached child's head), whose
  // content is known or not yet.
  void record(const api::Json& desired, const api::Json& object,
              std::optional<std::uint64_t> content, std::vector<std::string> warnings);

  struct Applied {
    std::string owner; // the DriverDeployment's name
    std::string desiredHash;
    std::string resourceVersion;
    std::string uid;
    std::int64_t generation = 0;
    std::optional<std::uint64_t> content; // CachedChild::content of that version, once seen
    std::vector<std::string> warnings;    // of that write
  };
  std::map<std::string, Applied> applied_; // by "Kind ns/name"
};

} // namespace csiop::driverdeployment
