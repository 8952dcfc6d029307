// The webhook's questions to the API server (webhook::AuthorityApi) through the operator's
// client: SubjectAccessReviews for the requesting user, the rules of a role a binding names,
// a DriverDeployment as stored.
#pragma once

#include <csiop/kube/client.hpp>
#include <csiop/webhook/admitter.hpp>

namespace csiop::app {

// SubjectAccessReviews are sent this many at a time (each is one short request).
inline constexpr std::size_t kConcurrentAccessReviews = 16;

// `client` must outlive what this returns.
webhook::AuthorityApi kubeAuthority(kube::Client& client);

// The SubjectAccessReview asking whether `user` may do `access`.
api::Json subjectAccessReview(const webhook::UserInfo& user, const webhook::Access& access);

} // namespace csiop::app
