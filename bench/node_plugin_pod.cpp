#include "node_plugin_pod.hpp"

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <csiop/api/load.hpp>
#include <csiop/render/render.hpp>

namespace csiop::bench {
namespace {

using api::Json;

std::string example(const char* name) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/examples/" + name);
  return {std::istreambuf_iterator<char>(in), {}};
}

Json hostpathNodeDaemonSet() {
  const auto loaded = api::loadDriverDeployments(example("hostpath.yaml"));
  if (!loaded.ok()) {
    throw std::runtime_error("examples/hostpath.yaml does not load");
  }
  for (Json& object : render::render(loaded.objects.at(0))) {
    if (object["kind"] == "DaemonSet") {
      return std::move(object);
    }
  }
  throw std::runtime_error("examples/hostpath.yaml renders no DaemonSet");
}

} // namespace

Json runningNodePluginPod() {
  const Json daemonSet = hostpathNodeDaemonSet();
  const Json& tmpl = daemonSet["spec"]["template"];
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", tmpl["metadata"]},
              {"spec", tmpl["spec"]}};
  Json& meta = pod["metadata"];
  meta["name"] = daemonSet["metadata"]["name"].get<std::string>() + "-x7k2p";
  meta["namespace"] = daemonSet["metadata"]["namespace"];
  meta["uid"] = "0b3e2c57-6a1f-4f3e-9a52-3c1f2d8e4b71";
  meta["resourceVersion"] = "1843522";
  meta["creationTimestamp"] = "2026-11-27T02:15:18Z";
  meta["generateName"] = daemonSet["metadata"]["name"].get<std::string>() + "-";
  meta["labels"]["controller-revision-hash"] = "6c9d7f8b5";
  meta["labels"]["pod-template-generation"] = "1";
  meta["ownerReferences"] = Json::array({{{"apiVersion", "apps/v1"},
                                          {"kind", "DaemonSet"},
                                          {"name", daemonSet["metadata"]["name"]},
                                          {"uid", "5d0f9e64-1f0b-4c8a-8a1e-0f6b2f9d3c20"},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  meta["managedFields"] =
      Json::array({{{"manager", "kube-controller-manager"},
                    {"operation", "Update"},
                    {"apiVersion", "v1"},
                    {"time", "2026-11-27T02:15:18Z"},
                    {"fieldsType", "FieldsV1"},
                    {"fieldsV1",
                     {{"f:metadata", {{"f:labels", {{"f:app", Json::object()}}}}},
                      {"f:spec", {{"f:containers", Json::object()}}}}}},
                   {{"manager", "kubelet"},
                    {"operation", "Update"},
                    {"subresource", "status"},
                    {"apiVersion", "v1"},
                    {"time", "2026-11-27T02:15:21Z"},
                    {"fieldsType", "FieldsV1"},
                    {"fieldsV1", {{"f:status", {{"f:conditions", Json::object()}}}}}}});
  pod["spec"]["nodeName"] = "kwok-node-17";
  Json containerStatuses = Json::array();
  for (const Json& c : pod["spec"]["containers"]) {
    containerStatuses.push_back(
        {{"name", c["name"]},
         {"image", c["image"]},
         {"imageID", ""},
         {"ready", true},
         {"restartCount", 0},
         {"started", true},
         {"state", {{"running", {{"startedAt", "2026-11-27T02:15:20Z"}}}}}});
  }
  Json conditions = Json::array();
  for (const char* type :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    conditions.push_back({{"type", type},
                          {"status", "True"},
                          {"lastProbeTime", nullptr},
                          {"lastTransitionTime", "2026-11-27T02:15:20Z"}});
  }
  pod["status"] = {{"phase", "Running"},
                   {"conditions", conditions},
                   {"hostIP", "10.0.0.17"},
                   {"podIP", "10.0.0.17"},
                   {"startTime", "2026-11-27T02:15:18Z"},
                   {"containerStatuses", containerStatuses},
                   {"qosClass", "Burstable"}};
  return pod;
}

} // namespace csiop::bench
