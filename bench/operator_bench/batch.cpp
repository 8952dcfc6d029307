#include "batch.hpp"

#include <algorithm>
#include <memory>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <csiop/api/json_access.hpp>

#include "workload.hpp"

namespace csiop::bench {
namespace {

namespace asio = boost::asio;
namespace r = kube::resources;

// What the requests of one batch share; they may outlive the wait for them (a timeout).
struct InFlight {
  int pending = 0;
  Batch batch;
};

// Never throws (it runs detached): the error goes into the batch.
asio::awaitable<void> createOne(Context& ctx, std::string name, std::shared_ptr<InFlight> state) {
  try {
    Json dd = driverDeployment(name);
    ctx.tracker.expect(name, expectedObjects(dd));
    const Json created = co_await ctx.client.create(r::driverdeployments, std::move(dd));
    const auto at = Clock::now();
    ctx.tracker.created(name, api::metadataField(created, "uid"), at);
    state->batch.returnedAt[name] = at;
  } catch (const std::exception& e) {
    state->batch.errors.push_back("create " + name + ": " + e.what());
  }
  --state->pending;
}

asio::awaitable<void> deleteOne(Context& ctx, std::string name, std::shared_ptr<InFlight> state) {
  try {
    co_await ctx.client.remove(r::driverdeployments, "", name);
    state->batch.returnedAt[name] = Clock::now();
  } catch (const std::exception& e) {
    state->batch.errors.push_back("delete " + name + ": " + e.what());
  }
  --state->pending;
}

using OneRequest = asio::awaitable<void> (*)(Context&, std::string, std::shared_ptr<InFlight>);

asio::awaitable<Batch> atOnce(Context& ctx, std::vector<std::string> names, OneRequest request) {
  const auto state = std::make_shared<InFlight>();
  state->pending = static_cast<int>(names.size());
  state->batch.sentAt = Clock::now();
  for (const auto& name : names) {
    asio::co_spawn(ctx.client.executor(), request(ctx, name, state), asio::detached);
  }
  const std::function<bool()> allReturned = [&] { return state->pending == 0; };
  if (!co_await waitUntil(ctx, allReturned, ctx.timeout())) {
    state->batch.errors.push_back(std::to_string(state->pending) + " of " +
                                  std::to_string(names.size()) +
                                  " requests sent at once had not returned in time");
  }
  co_return state->batch;
}

} // namespace

std::vector<std::string> Batch::succeeded() const {
  std::vector<std::string> out;
  for (const auto& [name, at] : returnedAt) {
    out.push_back(name);
  }
  return out;
}

double Batch::spanMs() const {
  Clock::time_point last = sentAt;
  for (const auto& [name, at] : returnedAt) {
    last = std::max(last, at);
  }
  return millisSince(sentAt, last);
}

asio::awaitable<Batch> createAtOnce(Context& ctx, std::vector<std::string> names) {
  return atOnce(ctx, std::move(names), createOne);
}

asio::awaitable<Batch> deleteAtOnce(Context& ctx, std::vector<std::string> names) {
  return atOnce(ctx, std::move(names), deleteOne);
}

std::optional<Clock::time_point> lastOf(const Tracker& tracker,
                                        const std::vector<std::string>& names,
                                        std::optional<Clock::time_point> Timing::*at) {
  std::optional<Clock::time_point> last;
  for (const auto& name : names) {
    const Timing* t = tracker.find(name);
    if (t == nullptr || !(t->*at)) {
      return std::nullopt;
    }
    last = std::max(last.value_or(*(t->*at)), *(t->*at));
  }
  return last;
}

bool allGone(const Tracker& tracker, const std::vector<std::string>& names) {
  return std::all_of(names.begin(), names.end(),
                     [&](const std::string& name) { return tracker.gone(name); });
}

} // namespace csiop::bench
