#include <csiop/runtime/clock.hpp>

#include <cstdint>
#include <utility>

#include <boost/asio/steady_timer.hpp>

namespace csiop::runtime {
namespace {

class SteadyTimer final : public Timer {
public:
  explicit SteadyTimer(const boost::asio::any_io_executor& executor)
      : state_(std::make_shared<State>(executor)) {}
  ~SteadyTimer() override { cancel(); }
  SteadyTimer(const SteadyTimer&) = delete;
  SteadyTimer& operator=(const SteadyTimer&) = delete;

  void expireAt(TimePoint when, std::function<void()> callback) override {
    const std::uint64_t generation = ++state_->generation;
    state_->callback = std::move(callback);
    state_->timer.expires_at(when); // cancels a pending wait
    // A completion that was already queued when the timer was re-armed or
    // cancelled carries an old generation and is ignored.
    state_->timer.async_wait(
        [weak = std::weak_ptr<State>(state_), generation](const boost::system::error_code& ec) {
          const auto state = weak.lock();
          if (!state || ec || state->generation != generation) {
            return;
          }
          auto run = std::move(state->callback);
          state->callback = nullptr;
          if (run) {
            run();
          }
        });
  }

  void cancel() override {
    ++state_->generation;
    state_->callback = nullptr;
    state_->timer.cancel();
  }

private:
  struct State {
    explicit State(const boost::asio::any_io_executor& executor) : timer(executor) {}
    boost::asio::steady_timer timer;
    std::uint64_t generation = 0;
    std::function<void()> callback;
  };
  std::shared_ptr<State> state_;
};

} // namespace

std::unique_ptr<Timer> SteadyClock::makeTimer(const boost::asio::any_io_executor& executor) {
  return std::make_unique<SteadyTimer>(executor);
}

Clock& steadyClock() {
  static SteadyClock clock;
  return clock;
}

} // namespace csiop::runtime
