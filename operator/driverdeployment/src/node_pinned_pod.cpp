#include <csiop/driverdeployment/node_pinned_pod.hpp>

#include <algorithm>

#include <csiop/api/annotations.hpp>

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

Json nodePinnedMetadata(const NodePinnedOwner& o, const std::string& name, const std::string& ns,
                        Json annotations) {
  return Json{{"name", name},
              {"namespace", ns},
              {"labels",
               {{o.label, o.owner},
                {"app.kubernetes.io/managed-by", api::kManagedBy},
                {"app.kubernetes.io/component", o.component}}},
              {"annotations", std::move(annotations)},
              {"ownerReferences", Json::array({Json{{"apiVersion", api::kApiVersion},
                                                    {"kind", api::kKind},
                                                    {"name", o.owner},
                                                    {"uid", o.ownerUid}}})}};
}

} // namespace csiop::driverdeployment
