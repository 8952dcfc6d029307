#include <csiop/runtime/signals.hpp>

#include <cstdlib>
#include <utility>

#include <boost/asio/signal_set.hpp>

namespace csiop::runtime {

struct SignalHandler::State : std::enable_shared_from_this<SignalHandler::State> {
  State(const boost::asio::any_io_executor& executor, Callback callback, bool exitOnSecond)
      : signals(executor), onSignal(std::move(callback)), exitOnSecondSignal(exitOnSecond) {}

  boost::asio::signal_set signals;
  Callback onSignal;
  bool exitOnSecondSignal;
  bool cancelled = false;
  int received = 0;

  void wait() {
    signals.async_wait([weak = weak_from_this()](const boost::system::error_code& ec, int signal) {
      const auto self = weak.lock();
      if (!self || ec || self->cancelled) {
        return;
      }
      ++self->received;
      if (self->received > 1 && self->exitOnSecondSignal) {
        std::_Exit(1);
      }
      self->wait(); // listen for the next one before running the callback
      if (self->received == 1 && self->onSignal) {
        self->onSignal(signal);
      }
    });
  }
};

SignalHandler::SignalHandler(const boost::asio::any_io_executor& executor, Callback onSignal,
                             std::vector<int> signals, bool exitOnSecondSignal)
    : state_(std::make_shared<State>(executor, std::move(onSignal), exitOnSecondSignal)) {
  for (const int signal : signals) {
    state_->signals.add(signal);
  }
  state_->wait();
}

SignalHandler::~SignalHandler() {
  cancel();
}

void SignalHandler::cancel() {
  state_->cancelled = true;
  boost::system::error_code ignored;
  state_->signals.cancel(ignored);
  state_->signals.clear(ignored);
}

int SignalHandler::received() const {
  return state_->received;
}

} // namespace csiop::runtime
