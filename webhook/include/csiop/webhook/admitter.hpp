// The webhook's review with what needs the API server, around the pure decision
// (admission.hpp):
// - the author's authority (authority.hpp): SubjectAccessReviews for the requesting user, one
//   for `*` on `*` first (a cluster admin passes with it), then each requirement's shortcut,
//   then what the shortcuts did not cover. Answers are remembered for `accessCacheTtl` (as the
//   API server's own webhook authorizer does), so a retried or repeated review asks again
//   only for what it has not asked lately.
// - the rival of a reservation: anyone who reaches the webhook's port can send a review, and
//   the review's content cannot tell a forged one from the API server's; so a reservation only
//   denies a rival once the API server shows its holder (in the operator's cache, or by a GET
//   at the end of `claimGrace`, the time an admitted object takes to be stored). A forged
//   reservation delays the real DriverDeployment by at most `claimGrace` and denies nothing.
// Failing to ask the API server denies the review (fail closed), naming the error.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/webhook/admission.hpp>
#include <csiop/webhook/authority.hpp>

namespace csiop::webhook {

// What the Admitter asks the API server; each may throw (std::exception) when it cannot.
struct AuthorityApi {
  // Whether `user` may do each access (a SubjectAccessReview each), in order.
  std::function<boost::asio::awaitable<std::vector<bool>>(UserInfo, std::vector<Access>)> allowed;
  // The rules of a Role or ClusterRole; nullopt if it does not exist.
  std::function<boost::asio::awaitable<std::optional<Json>>(RoleRef)> roleRules;
  // The DriverDeployment `name` as stored; nullopt if there is none.
  std::function<boost::asio::awaitable<std::optional<Json>>(std::string name)> driverDeployment;
  // Before a DELETE's decision: readies what ClusterView::volumesInUse reads of driver
  // `driverName` (the operator keeps the pods with volumes only while a decision needs them);
  // false if it could not in time. May be empty: nothing to ready.
  std::function<boost::asio::awaitable<bool>(std::string driverName)> readyVolumesInUse;
};

// A stand-in for tests and benchmarks that have no API server: every SubjectAccessReview
// answered `allowed`, no role and no DriverDeployment stored.
AuthorityApi fixedAuthority(bool allowed);

struct AdmitterOptions {
  std::chrono::milliseconds claimGrace{2000};
  std::chrono::milliseconds claimPoll{50};
  std::chrono::seconds accessCacheTtl{10};
  std::size_t accessCacheSize = 4096;
  // More distinct accesses than this to check: denied, naming the limit (a DriverDeployment
  // needs about a hundred; only a cluster admin's passes without them).
  std::size_t maxAccesses = 1024;
};

class Admitter {
public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  Admitter(ClusterView cluster, AuthorityApi api, Reservations& reservations, Clock now,
           AdmitterOptions options = {});

  // The whole exchange; never throws for any input.
  boost::asio::awaitable<ReviewResult> review(std::string body);

  std::size_t cachedAccesses() const { return cache_.size(); }

private:
  boost::asio::awaitable<Decision> decideWithRival(const Json& request);
  boost::asio::awaitable<bool> rivalIsReal(const std::string& driverName,
                                           const Reservations::Holder& rival);
  // "" when `user` holds every requirement, else the denial's message.
  boost::asio::awaitable<std::string> missingAuthority(const UserInfo& user,
                                                       const std::vector<Requirement>& needs);
  boost::asio::awaitable<std::vector<bool>> ask(const UserInfo& user,
                                                const std::vector<Access>& accesses);

  ClusterView cluster_;
  AuthorityApi api_;
  Reservations& reservations_;
  Clock now_;
  AdmitterOptions options_;
  struct Cached {
    bool allowed;
    std::chrono::steady_clock::time_point expires;
  };
  std::map<std::pair<UserInfo, Access>, Cached> cache_;
};

} // namespace csiop::webhook
