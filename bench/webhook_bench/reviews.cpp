#include "reviews.hpp"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include <csiop/api/yaml.hpp>

#include "server.hpp"

namespace csiop::bench::webhook {

using csiop::api::Json;

Json example(const std::string& file) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/examples/" + file);
  if (!in) {
    throw std::runtime_error("cannot read examples/" + file);
  }
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  return csiop::api::parseYaml(text).at(0);
}

ReviewKind reviewKind(std::string name, const Json& object, bool allowed) {
  const Json groupVersionKind = {
      {"group", "csiop.dev"}, {"version", "v1alpha1"}, {"kind", "DriverDeployment"}};
  const Json resource = {
      {"group", "csiop.dev"}, {"version", "v1alpha1"}, {"resource", "driverdeployments"}};
  const Json review = {{"kind", "AdmissionReview"},
                       {"apiVersion", "admission.k8s.io/v1"},
                       {"request",
                        {{"uid", kUidMark},
                         {"kind", groupVersionKind},
                         {"resource", resource},
                         {"requestKind", groupVersionKind},
                         {"requestResource", resource},
                         {"name", object["metadata"]["name"]},
                         {"operation", "CREATE"},
                         {"userInfo",
                          {{"username", "kubernetes-admin"},
                           {"groups", {"kubeadm:cluster-admins", "system:authenticated"}}}},
                         {"object", object},
                         {"oldObject", nullptr},
                         {"dryRun", false},
                         {"options",
                          {{"kind", "CreateOptions"},
                           {"apiVersion", "meta.k8s.io/v1"},
                           {"fieldManager", "kubectl-client-side-apply"},
                           {"fieldValidation", "Strict"}}}}}};
  const std::string body = review.dump();
  const auto mark = body.find(kUidMark);
  return ReviewKind{std::move(name), body.substr(0, mark),
                    body.substr(mark + std::string(kUidMark).size()), allowed};
}

std::vector<ReviewKind> reviewMix() {
  const Json hostpath = example("hostpath.yaml");
  Json invalid = hostpath;
  invalid["metadata"]["name"] = "hostpath-broken";
  invalid["spec"]["driverName"] = "Hostpath_CSI";
  invalid["spec"]["controller"]["replicas"] = -1;
  Json duplicate = hostpath;
  duplicate["metadata"]["name"] = "hostpath-copy";
  duplicate["spec"]["driverName"] = kTaken.driver;
  Json second = hostpath;
  second["metadata"]["name"] = "hostpath-again";

  const ReviewKind valid = reviewKind("valid CREATE", hostpath, true);
  const ReviewKind bad = reviewKind("invalid spec", invalid, false);
  const ReviewKind dup = reviewKind("duplicate driverName", duplicate, false);
  const ReviewKind again = reviewKind("hostpath's driverName", second, false);
  return {valid, valid, valid, bad, valid, valid, dup, valid, valid, again};
}

} // namespace csiop::bench::webhook
