#include <csiop/app/webhook_authority.hpp>

#include <csiop/runtime/concurrently.hpp>

namespace csiop::app {
namespace {

namespace asio = boost::asio;
using api::Json;

const kube::ResourceRef kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews",
                                              "SubjectAccessReview", false};

asio::awaitable<bool> allowedOne(kube::Client& client, Json review) {
  auto creating = client.create(kSubjectAccessReviews, std::move(review));
  const Json answer = co_await std::move(creating);
  bool allowed = false;
  if (const auto status = answer.find("status"); status != answer.end() && status->is_object()) {
    allowed = status->value("allowed", false) && !status->value("denied", false);
  }
  co_return allowed;
}

} // namespace

Json subjectAccessReview(const webhook::UserInfo& user, const webhook::Access& access) {
  Json spec = access.resourceAttributes();
  spec["user"] = user.username;
  if (!user.uid.empty()) {
    spec["uid"] = user.uid;
  }
  if (!user.groups.empty()) {
    spec["groups"] = user.groups;
  }
  if (!user.extra.empty()) {
    Json extra = Json::object();
    for (const auto& [key, values] : user.extra) {
      extra[key] = values;
    }
    spec["extra"] = std::move(extra);
  }
  Json review = {{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}};
  review["spec"] = std::move(spec);
  return review;
}

webhook::AuthorityApi kubeAuthority(kube::Client& client) {
  webhook::AuthorityApi api;
  api.allowed =
      [&client](webhook::UserInfo user,
                std::vector<webhook::Access> accesses) -> asio::awaitable<std::vector<bool>> {
    std::vector<bool> out;
    out.reserve(accesses.size());
    for (std::size_t at = 0; at < accesses.size(); at += kConcurrentAccessReviews) {
      std::vector<asio::awaitable<bool>> batch;
      for (std::size_t i = at; i < std::min(accesses.size(), at + kConcurrentAccessReviews); ++i) {
        batch.push_back(allowedOne(client, subjectAccessReview(user, accesses[i])));
      }
      for (const bool allowed : co_await runtime::allOf(std::move(batch))) {
        out.push_back(allowed);
      }
    }
    co_return out;
  };
  api.roleRules = [&client](webhook::RoleRef role) -> asio::awaitable<std::optional<Json>> {
    // Chosen before the co_await: GCC 12 mishandles the temporaries of a conditional
    // expression inside one (a double free).
    const bool cluster = role.kind == "ClusterRole";
    const kube::ResourceRef& ref = cluster ? kube::resources::clusterroles : kube::resources::roles;
    std::string ns;
    if (!cluster) {
      ns = role.namespace_;
    }
    auto reading = client.getOpt(ref, std::move(ns), role.name);
    std::optional<Json> found = co_await std::move(reading);
    if (!found) {
      co_return std::nullopt;
    }
    Json rules = Json::array();
    if (found->contains("rules")) {
      rules = std::move((*found)["rules"]);
    }
    co_return rules;
  };
  api.driverDeployment = [&client](std::string name) -> asio::awaitable<std::optional<Json>> {
    auto getting = client.getOpt(kube::resources::driverdeployments, "", std::move(name));
    co_return co_await std::move(getting);
  };
  return api;
}

} // namespace csiop::app
