#include <csiop/testsupport/manual_clock.hpp>

#include <cstdint>
#include <functional>
#include <set>
#include <tuple>
#include <utility>

#include <boost/asio/post.hpp>

namespace csiop::testsupport {

using runtime::Clock;
using runtime::Timer;

namespace {

struct TimerState {
  explicit TimerState(boost::asio::any_io_executor ex) : executor(std::move(ex)) {}
  boost::asio::any_io_executor executor;
  std::uint64_t generation = 0;
  std::function<void()> callback;
};

struct Entry {
  Clock::TimePoint when;
  std::uint64_t sequence; // arming order breaks ties: deterministic
  std::shared_ptr<TimerState> timer;
  std::uint64_t generation;

  bool operator<(const Entry& other) const {
    return std::tie(when, sequence) < std::tie(other.when, other.sequence);
  }
};

} // namespace

struct ManualClock::Core {
  Clock::TimePoint now = Clock::TimePoint{} + std::chrono::hours(24 * 365);
  std::uint64_t sequence = 0;
  std::set<Entry> entries;

  void remove(const std::shared_ptr<TimerState>& timer) {
    std::erase_if(entries, [&](const Entry& entry) { return entry.timer == timer; });
  }
};

namespace {

class ManualTimer final : public Timer {
public:
  ManualTimer(std::shared_ptr<ManualClock::Core> core, const boost::asio::any_io_executor& executor)
      : core_(std::move(core)), state_(std::make_shared<TimerState>(executor)) {}
  ~ManualTimer() override { cancel(); }
  ManualTimer(const ManualTimer&) = delete;
  ManualTimer& operator=(const ManualTimer&) = delete;

  void expireAt(TimePoint when, std::function<void()> callback) override {
    core_->remove(state_);
    state_->callback = std::move(callback);
    core_->entries.insert(Entry{when, core_->sequence++, state_, ++state_->generation});
  }

  void cancel() override {
    core_->remove(state_);
    ++state_->generation;
    state_->callback = nullptr;
  }

private:
  std::shared_ptr<ManualClock::Core> core_;
  std::shared_ptr<TimerState> state_;
};

} // namespace

ManualClock::ManualClock(boost::asio::io_context& io) : io_(io), core_(std::make_shared<Core>()) {}

ManualClock::~ManualClock() = default;

Clock::TimePoint ManualClock::now() const {
  return core_->now;
}

std::unique_ptr<Timer> ManualClock::makeTimer(const boost::asio::any_io_executor& executor) {
  return std::make_unique<ManualTimer>(core_, executor);
}

void ManualClock::advance(Duration step) {
  advanceTo(core_->now + step);
}

void ManualClock::advanceTo(TimePoint when) {
  settle();
  while (!core_->entries.empty() && core_->entries.begin()->when <= when) {
    Entry entry = *core_->entries.begin();
    core_->entries.erase(core_->entries.begin());
    if (entry.when > core_->now) {
      core_->now = entry.when;
    }
    // Like a real timer, the callback runs as a handler; one re-armed or
    // cancelled before the handler runs is stale and skipped.
    boost::asio::post(entry.timer->executor, [timer = std::weak_ptr<TimerState>(entry.timer),
                                              generation = entry.generation] {
      const auto state = timer.lock();
      if (!state || state->generation != generation || !state->callback) {
        return;
      }
      auto callback = std::move(state->callback);
      state->callback = nullptr;
      callback();
    });
    settle();
  }
  if (when > core_->now) {
    core_->now = when;
  }
  settle();
}

void ManualClock::settle() {
  io_.restart();
  io_.poll();
}

std::size_t ManualClock::pendingTimers() const {
  return core_->entries.size();
}

std::optional<Clock::TimePoint> ManualClock::nextDeadline() const {
  if (core_->entries.empty()) {
    return std::nullopt;
  }
  return core_->entries.begin()->when;
}

} // namespace csiop::testsupport
