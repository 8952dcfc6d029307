#include <csiop/webhook/admitter.hpp>

#include <algorithm>
#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csiop/api/json_access.hpp>

namespace csiop::webhook {
namespace {

namespace asio = boost::asio;
using api::member;
using api::metadataField;
using api::stringField;

// How many of a denial's missing permissions are named (the rest are counted).
constexpr std::size_t kNamedRequirements = 5;
constexpr std::size_t kNamedAccesses = 3;

Decision denial(int code, std::string reason, std::string message) {
  Decision d;
  d.allowed = false;
  d.code = code;
  d.reason = std::move(reason);
  d.message = std::move(message);
  return d;
}

std::string who(const UserInfo& user) {
  return user.username.empty() ? "the requesting user" : "user \"" + user.username + "\"";
}

} // namespace

AuthorityApi fixedAuthority(bool allowed) {
  AuthorityApi api;
  api.allowed = [allowed](UserInfo,
                          std::vector<Access> accesses) -> asio::awaitable<std::vector<bool>> {
    co_return std::vector<bool>(accesses.size(), allowed);
  };
  api.roleRules = [](RoleRef) -> asio::awaitable<std::optional<Json>> { co_return std::nullopt; };
  api.driverDeployment = [](std::string) -> asio::awaitable<std::optional<Json>> {
    co_return std::nullopt;
  };
  return api;
}

Admitter::Admitter(ClusterView cluster, AuthorityApi api, Reservations& reservations, Clock now,
                   AdmitterOptions options)
    : cluster_(std::move(cluster)), api_(std::move(api)), reservations_(reservations),
      now_(std::move(now)), options_(options) {}

asio::awaitable<ReviewResult> Admitter::review(std::string body) {
  auto read = readReview(body);
  if (auto* result = std::get_if<ReviewResult>(&read)) {
    co_return std::move(*result);
  }
  const Json request = std::move(std::get<Json>(read));
  bool volumesKnown = true;
  const std::string deleted =
      stringField(member(member(request, "oldObject"), "spec"), "driverName");
  if (stringField(request, "operation") == "DELETE" && !deleted.empty() && api_.readyVolumesInUse) {
    try {
      volumesKnown = co_await api_.readyVolumesInUse(deleted);
    } catch (const std::exception&) {
      volumesKnown = false;
    }
  }
  Decision decision = co_await decideWithRival(request);
  if (!volumesKnown && decision.allowed) {
    // The finalizer still waits for what is in use; the webhook could only say less at once.
    decision.warnings.push_back("the pods that may use driver " + deleted +
                                "'s inline volumes could not be listed in time: the deletion "
                                "waits while any does");
  }
  if (decision.allowed && !decision.requirements.empty()) {
    const UserInfo user = userInfoOf(request);
    std::string missing;
    try {
      missing = co_await missingAuthority(user, decision.requirements);
    } catch (const std::exception& e) {
      missing = "cannot check the permissions of " + who(user) +
                " with the API server (SubjectAccessReview): " + e.what();
    }
    if (!missing.empty()) {
      const Json& object = member(request, "object");
      if (decision.reserved) {
        reservations_.release(stringField(member(object, "spec"), "driverName"),
                              metadataField(object, "name"));
      }
      std::vector<std::string> warnings = std::move(decision.warnings);
      decision = denial(403, "Forbidden", missing);
      decision.warnings = std::move(warnings);
    }
  }
  co_return answer(request, decision);
}

asio::awaitable<Decision> Admitter::decideWithRival(const Json& request) {
  const Json& object = member(request, "object");
  const std::string driverName = stringField(member(object, "spec"), "driverName");
  // A rival proven not to be real is dropped and the decision taken again; another rival can
  // only have reserved the name meanwhile, so this ends.
  for (int round = 0;; ++round) {
    Decision decision = decideSafely(request, cluster_, reservations_);
    if (!decision.rival || round == 3 || co_await rivalIsReal(driverName, *decision.rival)) {
      co_return decision;
    }
    reservations_.release(driverName, decision.rival->name);
  }
}

asio::awaitable<bool> Admitter::rivalIsReal(const std::string& driverName,
                                            const Reservations::Holder& rival) {
  const auto deadline = now_() + options_.claimGrace;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    // Released (its own review was denied) or replaced: no rival any more.
    const auto current = reservations_.holder(driverName, "");
    if (!current || current->name != rival.name) {
      co_return false;
    }
    const auto users = cluster_.driverDeploymentsUsing(driverName);
    if (std::find(users.begin(), users.end(), rival.name) != users.end()) {
      co_return true;
    }
    if (now_() >= deadline) {
      break;
    }
    timer.expires_after(options_.claimPoll);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  std::optional<Json> stored;
  try {
    auto getting = api_.driverDeployment(rival.name);
    stored = co_await std::move(getting);
  } catch (const std::exception&) {
    co_return true; // cannot tell: the denial stands (the API server retries nothing; the user can)
  }
  co_return stored&& stringField(member(*stored, "spec"), "driverName") == driverName &&
      (rival.uid.empty() || metadataField(*stored, "uid") == rival.uid);
}

asio::awaitable<std::vector<bool>> Admitter::ask(const UserInfo& user,
                                                 const std::vector<Access>& accesses) {
  const auto now = now_();
  std::vector<bool> out(accesses.size());
  std::vector<Access> unknown;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < accesses.size(); ++i) {
    const auto it = cache_.find({user, accesses[i]});
    if (it != cache_.end() && it->second.expires > now) {
      out[i] = it->second.allowed;
    } else {
      unknown.push_back(accesses[i]);
      where.push_back(i);
    }
  }
  if (unknown.empty()) {
    co_return out;
  }
  // The call outside the co_await: GCC 12 destroys an aggregate argument (UserInfo) created
  // inside a co_await expression twice (see kube/client.hpp).
  auto asking = api_.allowed(user, unknown);
  const std::vector<bool> answers = co_await std::move(asking);
  if (answers.size() != unknown.size()) {
    throw std::runtime_error("asked " + std::to_string(unknown.size()) + " questions, got " +
                             std::to_string(answers.size()) + " answers");
  }
  if (cache_.size() + answers.size() > options_.accessCacheSize) {
    std::erase_if(cache_, [&](const auto& e) { return e.second.expires <= now; });
    if (cache_.size() + answers.size() > options_.accessCacheSize) {
      cache_.clear();
    }
  }
  for (std::size_t j = 0; j < answers.size(); ++j) {
    out[where[j]] = answers[j];
    if (answers.size() <= options_.accessCacheSize) {
      cache_.insert_or_assign({user, unknown[j]},
                              Cached{answers[j], now + options_.accessCacheTtl});
    }
  }
  co_return out;
}

asio::awaitable<std::string> Admitter::missingAuthority(const UserInfo& user,
                                                        const std::vector<Requirement>& needs) {
  const std::vector<Access> all = {everything()};
  if ((co_await ask(user, all)).front()) {
    co_return std::string(); // a cluster admin
  }
  std::vector<Access> shortcuts;
  for (const Requirement& need : needs) {
    if (need.shortcut) {
      shortcuts.push_back(*need.shortcut);
    }
  }
  const std::vector<bool> shortcutAllowed = co_await ask(user, shortcuts);
  // What each requirement still needs, with the rules of the roles bindings refer to read.
  std::vector<std::pair<const Requirement*, std::vector<Access>>> open;
  std::vector<std::string> unverifiable;
  std::size_t s = 0;
  for (const Requirement& need : needs) {
    if (need.shortcut && shortcutAllowed[s++]) {
      continue;
    }
    std::vector<Access> accesses = need.allOf;
    if (need.rulesOf) {
      auto reading = api_.roleRules(*need.rulesOf); // outside the co_await, as above
      const std::optional<Json> rules = co_await std::move(reading);
      if (!rules) {
        unverifiable.push_back(need.why + ": needs " + need.shortcut->describe() + " (" +
                               need.rulesOf->kind + " " + need.rulesOf->name +
                               " does not exist, so what it grants cannot be compared)");
        continue;
      }
      const auto granted = accessesOf(*rules, need.rulesOf->namespace_);
      accesses.insert(accesses.end(), granted.begin(), granted.end());
    }
    open.emplace_back(&need, std::move(accesses));
  }
  std::set<Access> distinct;
  for (const auto& [need, accesses] : open) {
    distinct.insert(accesses.begin(), accesses.end());
  }
  if (distinct.size() > options_.maxAccesses) {
    co_return who(user) + " is not a cluster admin, and this DriverDeployment would have the " +
        "operator grant or do " + std::to_string(distinct.size()) +
        " distinct things, more than the webhook checks one by one (" +
        std::to_string(options_.maxAccesses) + ")";
  }
  const std::vector<Access> asked(distinct.begin(), distinct.end());
  const std::vector<bool> answers = co_await ask(user, asked);
  std::set<Access> denied;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    if (!answers[i]) {
      denied.insert(asked[i]);
    }
  }
  std::vector<std::string> lacking = std::move(unverifiable);
  for (const auto& [need, accesses] : open) {
    std::vector<std::string> names;
    for (const Access& a : accesses) {
      if (denied.contains(a)) {
        names.push_back(a.describe());
      }
    }
    if (names.empty()) {
      continue;
    }
    std::string line = need->why + ": needs ";
    for (std::size_t i = 0; i < std::min(names.size(), kNamedAccesses); ++i) {
      line += (i == 0 ? "" : ", ") + names[i];
    }
    if (names.size() > kNamedAccesses) {
      line += " and " + std::to_string(names.size() - kNamedAccesses) + " more";
    }
    if (need->shortcut) {
      line += " (or " + need->shortcut->describe() + ")";
    }
    lacking.push_back(std::move(line));
  }
  if (lacking.empty()) {
    co_return std::string();
  }
  std::string message =
      "this DriverDeployment would have the operator do what " + who(user) + " may not do: ";
  for (std::size_t i = 0; i < std::min(lacking.size(), kNamedRequirements); ++i) {
    message += (i == 0 ? "" : "; ") + lacking[i];
  }
  if (lacking.size() > kNamedRequirements) {
    message += "; and " + std::to_string(lacking.size() - kNamedRequirements) + " more";
  }
  co_return message;
}

} // namespace csiop::webhook
