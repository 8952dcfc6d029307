#include <csiop/driverdeployment/node_pinned_pod.hpp>

#include <algorithm>

namespace csiop::driverdeployment {

using api::Json;

Json nodePinnedPodSpec(const std::string& node, std::int64_t deadlineSeconds,
                       std::int64_t gracePeriodSeconds) {
  const Json onNode{{"key", "metadata.name"}, {"operator", "In"}, {"values", Json::array({node})}};
  Json terms = Json::array({Json{{"matchFields", Json::array({onNode})}}});
  return Json{{"affinity",
               {{"nodeAffinity",
                 {{"requiredDuringSchedulingIgnoredDuringExecution",
                   {{"nodeSelectorTerms", std::move(terms)}}}}}}},
              {"restartPolicy", "Never"},
              {"activeDeadlineSeconds", std::max<std::int64_t>(deadlineSeconds, 1)},
              {"terminationGracePeriodSeconds", gracePeriodSeconds},
              {"automountServiceAccountToken", false},
              {"enableServiceLinks", false},
              {"tolerations", Json::array({Json{{"operator", "Exists"}}})},
              {"securityContext", {{"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
}

} // namespace csiop::driverdeployment
