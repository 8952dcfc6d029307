#include <csiop/app/webhook_authority.hpp>

#include <csiop/runtime/concurrently.hpp>

namespace csiop::app {
namespace {

namespace asio = boost::asio;
using api::Json;

const kube::ResourceRef kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews",
                                              "SubjectAccessReview", false};

asio::awaitable<bool> allowedOne(kube::Client& client, Json review) {
  const Json answer = co_await client.create(kSubjectAccessReviews, std::move(review));
  const Json& status = answer.contains("status") ? answer["status"] : Json();
  co_return status.is_object() && status.value("allowed", false) && !status.value("denied", false);
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
    const bool cluster = role.kind == "ClusterRole";
    std::optional<Json> found =
        co_await client.getOpt(cluster ? kube::resources::clusterroles : kube::resources::roles,
                               cluster ? std::string() : role.namespace_, role.name);
    if (!found) {
      co_return std::nullopt;
    }
    co_return found->contains("rules") ? (*found)["rules"] : Json::array();
  };
  api.driverDeployment = [&client](std::string name) -> asio::awaitable<std::optional<Json>> {
    co_return co_await client.getOpt(kube::resources::driverdeployments, "", std::move(name));
  };
  return api;
}

} // namespace csiop::app
