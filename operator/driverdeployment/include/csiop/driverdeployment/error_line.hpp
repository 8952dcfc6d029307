// What a pass reports of an error: the line the status (Degraded) and the log show, and how long
// the API server asked to be left alone (kube::ApiError::retryWait: a 429's Retry-After), which
// the pass's Error result carries to the work queue, so that the retry waits for it.
//
// Errors travel as values from the client to the step: a request's kube::Attempt<T> (where the
// caller branches on the kind of failure or uses the answer), and std::optional<ErrorLine> from
// the helpers that report one (std::nullopt: it succeeded). Nothing in src/reconcile/ throws for
// a failed request.
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include <csiop/kube/attempt.hpp>
#include <csiop/runtime/reconcile_result.hpp>

namespace csiop::driverdeployment {

struct ErrorLine {
  std::string text;
  std::chrono::seconds retryWait{0};
  // The object exists and is someone else's (left untouched, never adopted).
  bool foreign = false;

  // `context` followed by the failed request's message, e.g. "deleting Kind ns/name: " + ...
  template <class T> static ErrorLine of(std::string context, const kube::Attempt<T>& failed) {
    const kube::ApiError* apiError = failed.apiError();
    return {std::move(context) + failed.message(),
            apiError == nullptr ? std::chrono::seconds::zero() : apiError->retryWait()};
  }
};

// A pass ended by `error`: the key is retried after its backoff, or after the server's wait
// when that is longer.
inline runtime::ReconcileResult failedWith(ErrorLine error) {
  return runtime::ReconcileResult::error(std::move(error.text), error.retryWait);
}

} // namespace csiop::driverdeployment
