// LeaderElector: the real Kubernetes client against a local server that keeps one Lease the way
// the API server does (404 when absent, 409 AlreadyExists on a second create, 409 Conflict on a
// stale resourceVersion). Tests wait for conditions rather than for fixed times; timings
// asserted are lower bounds ("not before the lease duration") or far from what the code needs.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <regex>

#include <csiop/controller/leader.hpp>

#include "../kube/test_server.hpp"
#include "../runtime/test_util.hpp"

namespace csiop::controller {
namespace {

using kube::testing::Reply;
using kube::testing::Request;
using kube::testing::runTask;
using kube::testing::TestServer;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using kube::Json;

const std::string kLease = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock";
const std::string kLeases = "/apis/coordination.k8s.io/v1/namespaces/ns/leases";
const std::string kLongAgo = "2000-01-01T00:00:00.000000Z";

Json status(int code, const std::string& reason) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"message", "m"},   {"reason", reason},   {"code", code}};
}

Reply json(const Json& body, int code = 200) {
  return Reply{.status = code, .body = body.dump()};
}

Json leaseSpec(const std::string& holder, const std::string& renewTime, int durationSeconds,
               int transitions) {
  return {{"holderIdentity", holder},
          {"leaseDurationSeconds", durationSeconds},
          {"acquireTime", kLongAgo},
          {"renewTime", renewTime},
          {"leaseTransitions", transitions}};
}

// A renewTime that differs for each n.
std::string renewTime(int n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "2000-01-01T00:%02d:%02d.000000Z", (n / 60) % 60, n % 60);
  return buf;
}

std::string spec(const Json& lease, const char* field) {
  return lease.at("spec").value(field, std::string("<none>"));
}

// One request as the server saw it.
struct Hit {
  std::string method;
  Clock::time_point at;
  Json body;     // PUT/POST body
  int replied{}; // status of the reply
};

struct Elector {
  std::unique_ptr<LeaderElector> elector;
  int started = 0;
  int stopped = 0;
  Clock::time_point stoppedAt{};
  bool done = false;
  std::exception_ptr error;
};

class LeaderTest : public ::testing::Test {
protected:
  LeaderTest()
      : server_(io_, [this](const Request& r) { return handle(r); }),
        client_(io_.get_executor(), kube::Config{.server = server_.url()}) {}

  static LeaderElectionConfig config(const std::string& identity) {
    return {.namespace_ = "ns",
            .name = "lock",
            .identity = identity,
            .leaseDuration = 1s,
            .renewDeadline = 400ms,
            .retryPeriod = 50ms};
  }

  // The API server's side: one Lease with a resourceVersion.
  Reply handle(const Request& r) {
    Hit hit{r.method, Clock::now(), r.body.empty() ? Json() : Json::parse(r.body)};
    std::optional<Reply> reply = override_ ? override_(r) : std::nullopt;
    if (!reply)
      reply = serve(r);
    hit.replied = reply->status;
    hits_.push_back(std::move(hit));
    if (afterReply_)
      afterReply_(r, *reply);
    return *reply;
  }

  Reply serve(const Request& r) {
    const std::string path = r.target.substr(0, r.target.find('?')); // ?fieldManager=...
    if (r.method == "GET" && path == kLease) {
      if (!lease_)
        return json(status(404, "NotFound"), 404);
      return json(*lease_);
    }
    if (r.method == "POST" && path == kLeases) {
      if (lease_)
        return json(status(409, "AlreadyExists"), 409);
      store(Json::parse(r.body));
      return json(*lease_, 201);
    }
    if (r.method == "PUT" && path == kLease) {
      if (!lease_)
        return json(status(404, "NotFound"), 404);
      const Json body = Json::parse(r.body);
      if (body["metadata"].value("resourceVersion", "") !=
          (*lease_)["metadata"]["resourceVersion"].get<std::string>())
        return json(status(409, "Conflict"), 409);
      store(body);
      return json(*lease_);
    }
    ADD_FAILURE() << "unexpected request " << r.method << " " << r.target;
    return json(status(404, "NotFound"), 404);
  }

  // Stores the lease as a new version (also: someone else wrote it).
  void store(Json lease) {
    lease["metadata"]["resourceVersion"] = std::to_string(++version_);
    lease_ = std::move(lease);
  }
  void storeSpec(const Json& spec) {
    Json lease = lease_.value_or(Json{{"apiVersion", "coordination.k8s.io/v1"},
                                      {"kind", "Lease"},
                                      {"metadata", {{"name", "lock"}, {"namespace", "ns"}}}});
    lease["spec"] = spec;
    store(std::move(lease));
  }

  Elector& start(const LeaderElectionConfig& c) {
    electors_.push_back(std::make_unique<Elector>());
    Elector& e = *electors_.back();
    e.elector = std::make_unique<LeaderElector>(client_, c);
    asio::co_spawn(io_,
                   e.elector->run([&e] { ++e.started; },
                                  [&e] {
                                    ++e.stopped;
                                    e.stoppedAt = Clock::now();
                                  }),
                   [&e](std::exception_ptr error) {
                     e.error = error;
                     e.done = true;
                   });
    return e;
  }

  // Runs the io_context until done() holds; false if it does not within `limit`.
  bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
    return runtime::test::runUntil(io_, done, limit);
  }

  void release(Elector& e) { runTask(io_, e.elector->release(), 5s); }

  // release() as a coroutine of its own; released_ is set when it ends.
  void spawnRelease(Elector& e) {
    releaseSpawned_ = true;
    asio::co_spawn(io_, e.elector->release(),
                   [this](std::exception_ptr error) { released_ = error; });
  }

  void TearDown() override {
    // A test that failed early leaves scripts that refer to its locals: answer without them.
    override_ = nullptr;
    afterReply_ = nullptr;
    for (auto& e : electors_) {
      if (!e->done) {
        e->elector->stop();
        EXPECT_TRUE(runUntil([&] { return e->done; }, 2s)) << "run() did not end after stop()";
      }
      if (e->error) {
        try {
          std::rethrow_exception(e->error);
        } catch (const std::exception& ex) {
          ADD_FAILURE() << "run() threw: " << ex.what();
        }
      }
    }
    if (releaseSpawned_) {
      EXPECT_TRUE(runUntil([&] { return released_.has_value(); }, 2s)) << "release() hangs";
    }
  }

  std::vector<const Hit*> hits(const std::string& method, int replied = 0) const {
    std::vector<const Hit*> out;
    for (const auto& h : hits_)
      if (h.method == method && (replied == 0 || h.replied == replied))
        out.push_back(&h);
    return out;
  }
  std::vector<std::string> methods() const {
    std::vector<std::string> out;
    for (const auto& h : hits_)
      out.push_back(h.method);
    return out;
  }

  asio::io_context io_;
  TestServer server_;
  kube::Client client_;
  std::optional<Json> lease_;
  int version_ = 100;
  std::vector<Hit> hits_;
  // Answers a request instead of the lease logic when it returns a reply.
  std::function<std::optional<Reply>(const Request&)> override_;
  // Runs after a request was answered (the reply is already decided).
  std::function<void(const Request&, const Reply&)> afterReply_;
  std::vector<std::unique_ptr<Elector>> electors_;
  bool releaseSpawned_ = false;
  std::optional<std::exception_ptr> released_;
};

TEST_F(LeaderTest, CreatesTheLeaseWhenAbsentAndStartsLeading) {
  auto c = config("me");
  c.leaseDuration = 1500ms; // written in whole seconds, rounded up
  Elector& e = start(c);
  ASSERT_TRUE(runUntil([&] { return e.started == 1; }));
  EXPECT_TRUE(e.elector->leading());
  EXPECT_EQ(methods(), (std::vector<std::string>{"GET", "POST"}));
  const Json& created = hits("POST").at(0)->body;
  EXPECT_EQ(created["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(created["kind"], "Lease");
  EXPECT_EQ(created["metadata"]["name"], "lock");
  EXPECT_EQ(created["metadata"]["namespace"], "ns");
  EXPECT_EQ(created["spec"]["holderIdentity"], "me");
  EXPECT_EQ(created["spec"]["leaseDurationSeconds"], 2);
  EXPECT_EQ(created["spec"]["leaseTransitions"], 0);
  const std::regex microTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)");
  EXPECT_TRUE(std::regex_match(spec(created, "renewTime"), microTime)) << created.dump();
  EXPECT_EQ(spec(created, "acquireTime"), spec(created, "renewTime"));
  EXPECT_EQ(e.stopped, 0);
}

TEST_F(LeaderTest, RenewsEveryRetryPeriodKeepingAcquireTimeAndTransitions) {
  Elector& e = start(config("me"));
  // Retry period 50 ms: 4 renewals come well within the limit (a renewal only every lease
  // duration, 1 s, would not).
  ASSERT_TRUE(runUntil([&] { return hits("PUT").size() == 4; }, 2s));
  EXPECT_EQ(e.started, 1);
  const Json& created = hits("POST").at(0)->body;
  std::string previousRenew = spec(created, "renewTime");
  Clock::time_point previousAt = hits("POST").at(0)->at;
  std::string version = "101"; // the created lease's
  for (const Hit* put : hits("PUT")) {
    EXPECT_EQ(put->replied, 200); // never a conflict: each PUT carries the version just read
    EXPECT_EQ(put->body["metadata"]["resourceVersion"], version);
    version = std::to_string(std::stoi(version) + 1);
    EXPECT_EQ(spec(put->body, "holderIdentity"), "me");
    EXPECT_EQ(spec(put->body, "acquireTime"), spec(created, "acquireTime"));
    EXPECT_EQ(put->body["spec"]["leaseTransitions"], 0);
    EXPECT_EQ(put->body["spec"]["leaseDurationSeconds"], 1);
    EXPECT_GT(spec(put->body, "renewTime"), previousRenew);
    EXPECT_GE(put->at - previousAt, 50ms); // the retry period between renewals
    previousRenew = spec(put->body, "renewTime");
    previousAt = put->at;
  }
  EXPECT_TRUE(e.elector->leading());
  EXPECT_EQ(e.stopped, 0);
}

TEST_F(LeaderTest, TakesAHeldLeaseOnlyAfterItWentUnrenewedForItsDurationByItsOwnClock) {
  // The holder's clock is far behind ours: comparing renewTime with our clock would take the
  // lease at once. It renews (a new renewTime) for the first 300 ms, then stops.
  storeSpec(leaseSpec("other", kLongAgo, 1, 3));
  std::optional<Clock::time_point> firstGet;
  Clock::time_point lastRenewal{};
  int renewals = 0;
  afterReply_ = [&](const Request& r, const Reply&) {
    if (r.method != "GET")
      return;
    const auto now = Clock::now();
    if (!firstGet)
      firstGet = now;
    if (now - *firstGet < 300ms) { // the next read sees a new renewTime
      ++renewals;
      storeSpec(leaseSpec("other", renewTime(renewals), 1, 3));
      lastRenewal = now;
    }
  };
  auto c = config("me");
  c.leaseDuration = 300ms; // ours; the holder's lease says 1 s, and that is what counts
  Elector& e = start(c);
  ASSERT_TRUE(runUntil([&] { return e.started == 1; }, 5s));
  ASSERT_GE(renewals, 2);
  const auto puts = hits("PUT");
  ASSERT_EQ(puts.size(), 1u);
  // The elector saw the last renewal in a read that began after lastRenewal.
  EXPECT_GE(puts[0]->at - lastRenewal, 1s) << "taken before the lease went unrenewed for 1 s";
  const Json& taken = puts[0]->body;
  EXPECT_EQ(spec(taken, "holderIdentity"), "me");
  EXPECT_EQ(taken["spec"]["leaseTransitions"], 4);
  EXPECT_NE(spec(taken, "acquireTime"), kLongAgo);
  EXPECT_EQ(spec(taken, "acquireTime"), spec(taken, "renewTime"));
  EXPECT_EQ(taken["spec"]["leaseDurationSeconds"], 1);
  EXPECT_TRUE(hits("POST").empty());
}

TEST_F(LeaderTest, TakesAReleasedLeaseAtOnce) {
  storeSpec(leaseSpec("", kLongAgo, 15, 7));
  Elector& e = start(config("me"));
  ASSERT_TRUE(runUntil([&] { return e.started == 1; }));
  EXPECT_EQ(methods(), (std::vector<std::string>{"GET", "PUT"}));
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "me");
  EXPECT_EQ((*lease_)["spec"]["leaseTransitions"], 8);
}

TEST_F(LeaderTest, AConflictOnTakeoverIsRetriedWithTheNewVersion) {
  storeSpec(leaseSpec("", kLongAgo, 15, 0));
  bool wrote = false;
  afterReply_ = [&](const Request& r, const Reply&) {
    if (r.method == "GET" && !wrote) { // another writer changes the lease after our read
      wrote = true;
      storeSpec((*lease_)["spec"]);
    }
  };
  Elector& e = start(config("me"));
  ASSERT_TRUE(runUntil([&] { return e.started == 1; }));
  EXPECT_EQ(methods(), (std::vector<std::string>{"GET", "PUT", "GET", "PUT"}));
  const auto puts = hits("PUT");
  EXPECT_EQ(puts[0]->replied, 409);
  EXPECT_EQ(puts[0]->body["metadata"]["resourceVersion"], "101");
  EXPECT_EQ(puts[1]->replied, 200);
  EXPECT_EQ(puts[1]->body["metadata"]["resourceVersion"], "102");
  EXPECT_GE(puts[1]->at - puts[0]->at, 50ms); // retried after the retry period
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "me");
}

TEST_F(LeaderTest, LosingTheCreateRaceMeansWaitingForTheWinner) {
  override_ = [&](const Request& r) -> std::optional<Reply> {
    if (r.method == "POST") { // another replica created it first
      storeSpec(leaseSpec("other", "2000-01-01T00:00:01.000000Z", 15, 0));
      return json(status(409, "AlreadyExists"), 409);
    }
    return std::nullopt;
  };
  Elector& e = start(config("me"));
  ASSERT_TRUE(runUntil([&] { return hits("GET").size() == 4; }));
  EXPECT_EQ(e.started, 0);
  EXPECT_FALSE(e.elector->leading());
  EXPECT_TRUE(hits("PUT").empty());
  EXPECT_EQ(hits("POST").size(), 1u);
  ASSERT_TRUE(lease_);
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "other");
}

TEST_F(LeaderTest, RenewalFailuresShorterThanTheRenewDeadlineAreTolerated) {
  auto c = config("me");
  c.renewDeadline = 2s; // two failed renewals take about 100 ms
  int failures = 0;
  override_ = [&](const Request& r) -> std::optional<Reply> {
    if (r.method == "PUT" && hits("PUT", 200).size() == 2 && failures < 2) {
      ++failures;
      return json(status(500, "InternalError"), 500);
    }
    return std::nullopt;
  };
  Elector& e = start(c);
  ASSERT_TRUE(runUntil([&] { return hits("PUT", 200).size() == 5; }));
  EXPECT_EQ(failures, 2);
  EXPECT_EQ(e.stopped, 0);
  EXPECT_FALSE(e.done);
  EXPECT_TRUE(e.elector->leading());
}

TEST_F(LeaderTest, GivesUpWhenNoRenewalSucceedsForTheRenewDeadline) {
  override_ = [&](const Request& r) -> std::optional<Reply> {
    if (r.method == "PUT" && hits("PUT", 200).size() >= 2)
      return json(status(500, "InternalError"), 500);
    return std::nullopt;
  };
  Elector& e = start(config("me"));
  ASSERT_TRUE(runUntil([&] { return e.done; }));
  EXPECT_EQ(e.started, 1);
  EXPECT_EQ(e.stopped, 1);
  EXPECT_FALSE(e.elector->leading());
  const auto renewed = hits("PUT", 200);
  ASSERT_EQ(renewed.size(), 2u);
  // The last successful renewal began a retry period after the one before it; the deadline
  // counts from there.
  EXPECT_GE(e.stoppedAt - renewed[0]->at, 50ms + 400ms);
  EXPECT_GE(hits("PUT", 500).size(), 2u); // it kept trying until then
}

TEST_F(LeaderTest, AnUnansweredRenewalIsAbandonedAtTheRenewDeadline) {
  override_ = [&](const Request& r) -> std::optional<Reply> {
    if (r.method == "GET" && hits("PUT", 200).size() >= 2) {
      Reply late = lease_ ? json(*lease_) : json(status(404, "NotFound"), 404);
      late.delay = 10s; // an API server that accepted the connection but does not answer
      return late;
    }
    return std::nullopt;
  };
  Elector& e = start(config("me"));
  ASSERT_TRUE(runUntil([&] { return e.done; }, 3s)) << "still leading long after the deadline";
  EXPECT_EQ(e.stopped, 1);
  EXPECT_FALSE(e.elector->leading());
  EXPECT_EQ(hits("PUT", 200).size(), 2u);
}

TEST_F(LeaderTest, ALeaseTakenByAnotherIsNeverOverwrittenAndLeadershipEnds) {
  bool taken = false;
  int otherRenewals = 0;
  afterReply_ = [&](const Request& r, const Reply&) {
    // After our second renewal another replica holds the lease, and renews it after each of our
    // reads.
    if (!taken && r.method == "PUT" && hits("PUT", 200).size() == 2)
      taken = true;
    if (taken && (r.method == "GET" || otherRenewals == 0))
      storeSpec(leaseSpec("other", renewTime(++otherRenewals), 15, 1));
  };
  Elector& e = start(config("me"));
  ASSERT_TRUE(runUntil([&] { return e.done; }));
  EXPECT_EQ(e.stopped, 1);
  EXPECT_EQ(hits("PUT").size(), 2u); // none after the other replica took it
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "other");
  EXPECT_FALSE(e.elector->leading());
}

TEST_F(LeaderTest, ReleaseHandsTheLeaseBackAndASuccessorTakesItAtOnce) {
  auto c = config("me");
  c.retryPeriod = 5s; // run() sleeps between renewals: release() must end that sleep
  c.leaseDuration = 3s;
  Elector& e = start(c);
  ASSERT_TRUE(runUntil([&] { return e.started == 1; }));
  ASSERT_EQ((*lease_)["spec"]["leaseDurationSeconds"], 3);
  const std::string acquired = spec(*lease_, "renewTime");
  const auto releasing = Clock::now();
  release(e);
  ASSERT_TRUE(runUntil([&] { return e.done; }, 1s));
  EXPECT_LT(Clock::now() - releasing, 2s);
  EXPECT_EQ(e.stopped, 0); // handing back is no loss of leadership
  EXPECT_FALSE(e.elector->leading());
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "");
  EXPECT_EQ((*lease_)["spec"]["leaseDurationSeconds"], 1);
  EXPECT_GT(spec(*lease_, "renewTime"), acquired);
  EXPECT_EQ(methods(), (std::vector<std::string>{"GET", "POST", "GET", "PUT"}));

  const std::size_t before = hits_.size();
  Elector& next = start(config("next"));
  ASSERT_TRUE(runUntil([&] { return next.started == 1; }));
  ASSERT_EQ(hits_.size(), before + 2); // its first attempt: a read and the takeover
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "next");
  EXPECT_EQ((*lease_)["spec"]["leaseTransitions"], 1);
}

TEST_F(LeaderTest, ReleaseWithoutLeadingWritesNothing) {
  storeSpec(leaseSpec("other", "2000-01-01T00:00:00.000000Z", 15, 2));
  const Json before = *lease_;
  auto c = config("me");
  c.retryPeriod = 5s;
  Elector& e = start(c);
  ASSERT_TRUE(runUntil([&] { return hits("GET").size() == 1; }));
  release(e);
  ASSERT_TRUE(runUntil([&] { return e.done; }, 1s));
  EXPECT_EQ(methods(), std::vector<std::string>{"GET"});
  EXPECT_EQ(*lease_, before);
  EXPECT_EQ(e.started, 0);
  EXPECT_EQ(e.stopped, 0);
}

TEST_F(LeaderTest, StopWhileLeadingEndsRunPromptlyWithoutLosingLeadership) {
  auto c = config("me");
  c.retryPeriod = 5s;
  Elector& e = start(c);
  ASSERT_TRUE(runUntil([&] { return e.started == 1; }));
  e.elector->stop();
  ASSERT_TRUE(runUntil([&] { return e.done; }, 1s));
  EXPECT_EQ(e.stopped, 0);
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "me"); // stop() alone does not hand it back
  EXPECT_EQ(methods(), (std::vector<std::string>{"GET", "POST"}));
}

TEST_F(LeaderTest, StopDuringAnAttemptEndsRunWithoutWaitingForTheRetryPeriod) {
  storeSpec(leaseSpec("other", kLongAgo, 15, 0));
  auto c = config("me");
  c.retryPeriod = 5s;
  afterReply_ = [&](const Request&, const Reply&) { electors_.at(0)->elector->stop(); };
  Elector& e = start(c);
  ASSERT_TRUE(runUntil([&] { return e.done; }, 1s)) << "run() slept the retry period";
  EXPECT_EQ(methods(), std::vector<std::string>{"GET"});
  EXPECT_EQ(e.started, 0);
}

TEST_F(LeaderTest, ReleaseWaitsForARenewalInFlight) {
  // A renewal's read is slow; release() comes while it is in flight. Any read that arrives
  // before that renewal's write is answered late too, so a release that did not wait would
  // write with a stale version and fail (409), leaving the lease held.
  bool renewalInFlight = false;
  bool triggered = false;
  override_ = [&](const Request& r) -> std::optional<Reply> {
    if (r.method == "PUT" && renewalInFlight) {
      renewalInFlight = false;
      return std::nullopt;
    }
    if (r.method != "GET" || !lease_)
      return std::nullopt;
    Reply reply = json(*lease_);
    if (renewalInFlight) {
      reply.delay = 1s;
    } else if (!triggered && hits("PUT", 200).size() == 1) {
      triggered = renewalInFlight = true;
      reply.delay = 100ms;
      spawnRelease(*electors_.at(0));
    } else {
      return std::nullopt;
    }
    return reply;
  };
  Elector& e = start(config("me"));
  ASSERT_TRUE(runUntil([&] { return released_.has_value() && e.done; }));
  EXPECT_FALSE(*released_);
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "") << lease_->dump();
  EXPECT_TRUE(hits("PUT", 409).empty());
  EXPECT_EQ(e.stopped, 0);
}

TEST_F(LeaderTest, ReleaseDuringAnAcquisitionInFlightStillHandsTheLeaseBack) {
  override_ = [&](const Request& r) -> std::optional<Reply> {
    if (r.method != "POST")
      return std::nullopt;
    Reply reply = serve(r); // created, but the answer is slow
    reply.delay = 100ms;
    spawnRelease(*electors_.at(0));
    return reply;
  };
  Elector& e = start(config("me"));
  ASSERT_TRUE(runUntil([&] { return released_.has_value() && e.done; }));
  EXPECT_FALSE(*released_);
  EXPECT_EQ(e.started, 0); // stopped before it could start leading
  EXPECT_EQ(spec(*lease_, "holderIdentity"), "") << lease_->dump();
  EXPECT_FALSE(e.elector->leading());
}

} // namespace
} // namespace csiop::controller
