// AdmissionReviews and a cluster view for the webhook's unit tests.
#pragma once

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <csiop/api/yaml.hpp>
#include <csiop/webhook/admission.hpp>

namespace csiop::webhook::testing {

inline Json example(const std::string& file) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/examples/" + file);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  return api::parseYaml(text).at(0);
}

// examples/hostpath.yaml named `name` with driver `driverName`.
inline Json hostpath(const std::string& name, const std::string& driverName) {
  Json dd = example("hostpath.yaml");
  dd["metadata"]["name"] = name;
  dd["spec"]["driverName"] = driverName;
  return dd;
}

inline Json request(const std::string& operation, const Json& object, const Json& oldObject = {},
                    const std::string& uid = "3f0c9f5e-uid") {
  Json r = {
      {"uid", uid},
      {"kind", {{"group", "csiop.dev"}, {"version", "v1alpha1"}, {"kind", "DriverDeployment"}}},
      {"resource",
       {{"group", "csiop.dev"}, {"version", "v1alpha1"}, {"resource", "driverdeployments"}}},
      {"operation", operation},
      {"name", object.is_object() ? object["metadata"].value("name", "") : ""}};
  if (!object.is_null()) {
    r["object"] = object;
  }
  if (!oldObject.is_null()) {
    r["oldObject"] = oldObject;
  }
  return r;
}

inline std::string reviewBody(const Json& request) {
  return Json{
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}}
      .dump();
}

// A cluster: DriverDeployments by name (their driver names) and CSIDrivers by name.
struct ClusterState {
  std::map<std::string, std::string> driverDeployments; // name -> driverName
  std::map<std::string, Json> csiDrivers;
  std::map<std::string, std::string> inUse; // driverName -> what of it is in use
  mutable std::string inUseAskedFor;        // "<DriverDeployment> in <its namespace>", last asked
  std::optional<int> serverMinor;           // the API server's minor version

  ClusterView view() {
    ClusterView view{
        [this](const std::string& driverName) {
          std::vector<std::string> out;
          for (const auto& [name, driver] : driverDeployments) {
            if (driver == driverName) {
              out.push_back(name);
            }
          }
          return out;
        },
        [this](const std::string& driverName) -> const Json* {
          const auto it = csiDrivers.find(driverName);
          return it == csiDrivers.end() ? nullptr : &it->second;
        },
        [this](const std::string& driverName, const std::string& name, const std::string& ns) {
          inUseAskedFor = name + " in " + ns;
          const auto it = inUse.find(driverName);
          return it == inUse.end() ? std::string() : it->second;
        }};
    view.serverMinor = serverMinor;
    return view;
  }
};

struct ManualTime {
  std::chrono::steady_clock::time_point now{};
  Reservations::Clock clock() {
    return [this] { return now; };
  }
};

// A cluster, a manual clock and the reservations they drive, with a decide and a
// review call on them.
class WebhookTest : public ::testing::Test {
protected:
  Decision decideOn(const Json& request) {
    const ClusterView view = cluster.view();
    return decide(request, view, reservations);
  }
  ReviewResult send(std::string_view body) {
    const ClusterView view = cluster.view();
    return review(body, view, reservations);
  }

  ClusterState cluster;
  ManualTime time;
  Reservations reservations{time.clock(), std::chrono::seconds(60)};
};

} // namespace csiop::webhook::testing
