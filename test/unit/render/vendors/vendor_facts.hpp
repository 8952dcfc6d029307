// Helpers for the vendor fact tests: each renders one examples/<vendor>.yaml and checks,
// object by object, what the vendor's own manifests deploy (the facts were read in the
// vendor's repository at the release the example names; each test says where).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../../common/render_test_util.hpp"

namespace csiop::vendors {

using api::Json;

// The rendered objects of examples/<stem>.yaml.
inline std::vector<Json> renderExample(const std::string& stem) {
  const auto path = std::filesystem::path(CSIOP_SOURCE_DIR) / "examples" / (stem + ".yaml");
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  return render::render(testutil::load(text));
}

// The object, or a test failure (and a null JSON to keep going).
inline const Json& get(const std::vector<Json>& objs, const std::string& kind,
                       const std::string& name, const std::string& ns = "") {
  static const Json none;
  const Json* o = testutil::find(objs, kind, name, ns);
  EXPECT_NE(o, nullptr) << kind << " " << ns << "/" << name << " not rendered";
  return o != nullptr ? *o : none;
}

inline const Json& podSpec(const Json& workload) {
  return workload["spec"]["template"]["spec"];
}

// A container of the pod (containers, then initContainers), or a failure.
inline const Json& containerOf(const Json& workload, const std::string& name) {
  static const Json none;
  const Json& pod = podSpec(workload);
  for (const char* list : {"containers", "initContainers"}) {
    if (!pod.is_object() || !pod.contains(list)) {
      continue;
    }
    for (const auto& c : pod[list]) {
      if (c.value("name", "") == name) {
        return c;
      }
    }
  }
  ADD_FAILURE() << "no container " << name;
  return none;
}

// An element of a list of named things (env, volumes, volumeMounts, ports), or null.
inline Json named(const Json& list, const std::string& name) {
  if (list.is_array()) {
    for (const auto& x : list) {
      if (x.value("name", "") == name) {
        return x;
      }
    }
  }
  return Json();
}

inline std::string envValue(const Json& container, const std::string& name) {
  const Json v = named(container.value("env", Json::array()), name);
  return v.is_object() ? v.value("value", "") : std::string();
}

// The volumeMount of `container` at `mountPath`, or null.
inline Json mountAt(const Json& container, const std::string& mountPath) {
  for (const auto& m : container.value("volumeMounts", Json::array())) {
    if (m.value("mountPath", "") == mountPath) {
      return m;
    }
  }
  return Json();
}

// The pod volume a container's mount at `mountPath` refers to, or null.
inline Json volumeAt(const Json& workload, const Json& container, const std::string& mountPath) {
  const Json m = mountAt(container, mountPath);
  return m.is_object() ? named(podSpec(workload).value("volumes", Json::array()), m["name"])
                       : Json();
}

// A (Cluster)Role grants `verbs` on `resource` of `apiGroup` (in one rule or several).
inline bool grants(const Json& role, const std::string& apiGroup, const std::string& resource,
                   const std::vector<std::string>& verbs) {
  for (const auto& verb : verbs) {
    bool found = false;
    for (const auto& r : role.value("rules", Json::array())) {
      const auto has = [&](const char* field, const std::string& v) {
        for (const auto& x : r.value(field, Json::array())) {
          if (x == v || x == "*") {
            return true;
          }
        }
        return false;
      };
      if (has("apiGroups", apiGroup) && has("resources", resource) && has("verbs", verb)) {
        found = true;
        break;
      }
    }
    if (!found) {
      return false;
    }
  }
  return true;
}

} // namespace csiop::vendors
