// Small helpers the steps share for their requests.
#pragma once

#include <string>

#include <csiop/kube/client.hpp>

namespace csiop::driverdeployment {

// A delete of exactly the incarnation `uid` (a same-named object made meanwhile is left alone),
// in the background when `background` (the garbage collector removes what it owns).
// DeleteOptions hold string_views: `uid` must outlive the request, so pass a named string (never
// a temporary inside a co_await expression, which g++ 12 miscompiles). A temporary is refused:
// it would be gone before the request is sent, its precondition would name garbage and the API
// server answer 409 Conflict, which a sweep takes for "someone else's object".
kube::DeleteOptions deleteOnly(std::string&& uid, bool background = false) = delete;
inline kube::DeleteOptions deleteOnly(const std::string& uid, bool background = false) {
  kube::DeleteOptions options;
  options.preconditionUid = uid;
  if (background) {
    options.propagationPolicy = kube::Propagation::Background;
  }
  return options;
}

} // namespace csiop::driverdeployment
