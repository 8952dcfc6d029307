// What one reconcile of a key asks of the work queue (runtime/workers.hpp acts on it).
#pragma once

#include <chrono>
#include <string>
#include <utility>

namespace csiop::runtime {

struct ReconcileResult {
  enum class Outcome {
    Done,    // converged: the key's backoff is reset
    Requeue, // look again after `after` (not a failure: the backoff is reset)
    Error,   // failed: queued again with the key's exponential backoff
  } outcome = Outcome::Done;
  std::chrono::milliseconds after{0}; // for Requeue
  std::string message;                // for Error
  // For Error: the API server asked to be left alone this long (Retry-After, as
  // kube::ApiError::retryWait bounds it); the key waits for that or its backoff, the longer.
  std::chrono::milliseconds retryAfter{0};

  static ReconcileResult done() { return {}; }
  static ReconcileResult requeueAfter(std::chrono::milliseconds after) {
    return {Outcome::Requeue, after, {}, {}};
  }
  static ReconcileResult error(std::string message, std::chrono::milliseconds retryAfter = {}) {
    return {Outcome::Error, {}, std::move(message), retryAfter};
  }
};

} // namespace csiop::runtime
