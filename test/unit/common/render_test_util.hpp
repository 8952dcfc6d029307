// Helpers for renderer tests: load a DriverDeployment from YAML text, render
// it, and find objects and containers in the result.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <csiop/api/load.hpp>
#include <csiop/render/render.hpp>

namespace csiop::testutil {

using api::Json;

inline api::DriverDeployment load(const std::string& yaml) {
  const api::Loaded l = api::loadDriverDeployments(yaml);
  EXPECT_TRUE(l.ok()) << ::testing::PrintToString(l.errors);
  return l.objects.empty() ? api::DriverDeployment{} : l.objects.front();
}

inline std::vector<Json> renderYaml(const std::string& yaml) {
  return render::render(load(yaml));
}

inline const Json* find(const std::vector<Json>& objs, const std::string& kind,
                        const std::string& name, const std::string& ns = "") {
  for (const auto& o : objs) {
    if (o["kind"] == kind && o["metadata"]["name"] == name &&
        o["metadata"].value("namespace", std::string()) == ns) {
      return &o;
    }
  }
  return nullptr;
}

inline std::vector<const Json*> ofKind(const std::vector<Json>& objs, const std::string& kind) {
  std::vector<const Json*> out;
  for (const auto& o : objs) {
    if (o["kind"] == kind) {
      out.push_back(&o);
    }
  }
  return out;
}

inline const Json* container(const Json& workload, const std::string& name) {
  for (const auto& c : workload["spec"]["template"]["spec"]["containers"]) {
    if (c["name"] == name) {
      return &c;
    }
  }
  return nullptr;
}

inline std::vector<std::string> containerNames(const Json& workload) {
  std::vector<std::string> out;
  for (const auto& c : workload["spec"]["template"]["spec"]["containers"]) {
    out.push_back(c["name"]);
  }
  return out;
}

inline bool hasArg(const Json& c, const std::string& arg) {
  for (const auto& a : c.value("args", Json::array())) {
    if (a == arg) {
      return true;
    }
  }
  return false;
}

// A minimal valid DriverDeployment with `spec` lines appended (2-space indent).
inline std::string dd(const std::string& specExtra, const std::string& name = "demo") {
  return "apiVersion: csiop.dev/v1alpha1\nkind: DriverDeployment\nmetadata:\n  name: " + name +
         "\nspec:\n  driverName: demo.csi.example.com\n  driver:\n    image: "
         "example.com/driver:v1\n" +
         specExtra;
}

// dd() with spec.controller.placement `placement` (and more of the controller and the spec),
// rendered.
inline std::vector<Json> renderPlaced(const std::string& placement,
                                      const std::string& controllerExtra = "",
                                      const std::string& specExtra = "") {
  return render::render(
      load(dd("  controller:\n    placement: " + placement + "\n" + controllerExtra + specExtra)));
}

} // namespace csiop::testutil
