// SIGTERM/SIGINT -> a callback on the io_context, to drain and exit cleanly.
//
// As controller-runtime's SetupSignalHandler: the first signal runs the
// callback (cancel the work: shut the queue down, stop the servers, release
// the lease); a second one means "now": the process exits with status 1
// straight away (std::_Exit, no cleanup), unless exitOnSecondSignal is false,
// in which case it is only counted.
//
// The callback runs as a normal handler on the executor, not in signal
// context, so it may do anything the io_context thread may do.
//
// The pending wait keeps io_context::run() from returning: cancel() (or
// destroy) the handler once the drain is over, as the last step.
//
// Thread-safety: none; construct and destroy on the io_context's thread. The
// signals are caught while the object lives (Asio restores the default
// disposition when the last signal_set for a signal goes).
#pragma once

#include <csignal>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

namespace csiop::runtime {

class SignalHandler {
public:
  using Callback = std::function<void(int signal)>;

  SignalHandler(const boost::asio::any_io_executor& executor, Callback onSignal,
                std::vector<int> signals = {SIGTERM, SIGINT}, bool exitOnSecondSignal = true);
  ~SignalHandler();
  SignalHandler(const SignalHandler&) = delete;
  SignalHandler& operator=(const SignalHandler&) = delete;

  // Stops listening (the callback is not called again).
  void cancel();
  // Signals received so far.
  int received() const;

  struct State;

private:
  std::shared_ptr<State> state_;
};

} // namespace csiop::runtime
