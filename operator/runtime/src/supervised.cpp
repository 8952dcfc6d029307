#include <csiop/runtime/supervised.hpp>

#include <cstdlib>
#include <optional>
#include <thread>

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>
#include <spdlog/spdlog.h>

namespace csiop::runtime {
namespace {

// What `error` says; std::nullopt when it is the task's cancellation.
std::optional<std::string> unexpected(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const boost::system::system_error& e) {
    if (e.code() == boost::asio::error::operation_aborted) {
      return std::nullopt;
    }
    return e.what();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

} // namespace

void TaskSupervisor::ended(const std::string& task, std::exception_ptr error) {
  if (!error) {
    spdlog::debug("{} ended", task);
    return;
  }
  const std::optional<std::string> what = unexpected(error);
  if (!what) {
    spdlog::debug("{} ended: cancelled", task);
    return;
  }
  spdlog::critical("{} ended: {}", task, *what);
  if (failed()) {
    return; // the first failure has been acted on
  }
  failure_ = task + " ended: " + *what;
  if (onFailure_) {
    onFailure_(task, *what);
  }
}

Check TaskSupervisor::check() const {
  return [this] { return failed() ? CheckResult::failed(failure_) : CheckResult::passed(); };
}

void hardExitAfter(std::chrono::milliseconds deadline, int code) {
  std::thread([deadline, code] {
    std::this_thread::sleep_for(deadline);
    spdlog::critical("still running {} ms after a fatal failure: exiting now", deadline.count());
    spdlog::default_logger()->flush();
    std::_Exit(code);
  }).detach();
}

} // namespace csiop::runtime
