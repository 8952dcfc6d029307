// The background tasks that must run as long as the process does (an informer's reflector, a
// worker, the start-up, the leader's work, the drain) are co_spawn'ed with a TaskSupervisor's
// completion handler instead of boost::asio::detached, which would drop what they throw: a dead
// reflector would leave its cache stale while /readyz stays green, a dead worker would stop
// reconciling without a word.
//
// A task that ends with an unexpected exception is fatal: logged with its cause ("informer for
// pods ended: <what>"), the supervisor's check fails from then on (on /readyz and /healthz) and
// its failure handler runs, once (the manager drains and exits non-zero, hardExitAfter bounding
// the drain; the kubelet restarts the pod). A task that returns, or ends by cancellation
// (operation_aborted, as at shutdown), has not failed. Expected errors are the tasks' own
// business and never reach here: a reflector retries what the API server answers, a worker
// turns a failed reconcile into a requeue.
//
// Single-threaded: the tasks, the handlers and the check on one io_context.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <utility>

#include <csiop/runtime/probes.hpp>

namespace csiop::runtime {

class TaskSupervisor {
public:
  // `task` as the supervisor was told its name ("informer for pods"); `what`: the exception's
  // message.
  using OnFailure = std::function<void(const std::string& task, const std::string& what)>;

  TaskSupervisor() = default;
  explicit TaskSupervisor(OnFailure onFailure) : onFailure_(std::move(onFailure)) {}
  TaskSupervisor(const TaskSupervisor&) = delete;
  TaskSupervisor& operator=(const TaskSupervisor&) = delete;

  // Sets the failure handler (the manager's needs its shutdown, made after the supervisor).
  void onFailure(OnFailure handler) { onFailure_ = std::move(handler); }

  // co_spawn's completion handler for the task named `task`, in place of detached:
  //   asio::co_spawn(io, cache->run(), supervisor.supervise("informer for pods"));
  // The supervisor must outlive the task.
  auto supervise(std::string task) {
    return [this, task = std::move(task)](std::exception_ptr error) { ended(task, error); };
  }
  // What supervise()'s handler does once the task has ended (`error` null: it returned).
  void ended(const std::string& task, std::exception_ptr error);

  bool failed() const { return !failure_.empty(); }
  // The first failure, "<task> ended: <what>" ("" : none).
  const std::string& failure() const { return failure_; }
  // For HealthChecks::add: passes until a task has failed, then fails with failure(). The
  // supervisor must outlive the check.
  Check check() const;

private:
  OnFailure onFailure_;
  std::string failure_;
};

// Ends the process with `code` (std::_Exit: no destructors) unless it has ended by itself within
// `deadline`: the bound on the drain after a fatal failure, which must never hang. Counted on a
// thread of its own, so that an event loop that is stuck cannot hold it up.
void hardExitAfter(std::chrono::milliseconds deadline, int code);

} // namespace csiop::runtime
