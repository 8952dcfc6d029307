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

#include <nlohmann/json.hpp>

#include <csiop/api/json_access.hpp>
#include <csiop/render/prerequisites.hpp>

#include "../../common/render_test_util.hpp"

namespace csiop::vendors {

using api::Json;

// examples/<stem>.yaml, loaded.
inline api::DriverDeployment loadExample(const std::string& stem) {
  const auto path = std::filesystem::path(CSIOP_SOURCE_DIR) / "examples" / (stem + ".yaml");
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  return testutil::load(text);
}

// The rendered objects of examples/<stem>.yaml.
inline std::vector<Json> renderExample(const std::string& stem) {
  return render::render(loadExample(stem));
}

// The APIs a resolved example needs served ("group/version/resource"), in render's order.
inline std::vector<std::string> requiredApisOf(const api::Effective& e) {
  std::vector<std::string> apis;
  for (const auto& a : render::requiredApis(e)) {
    apis.push_back(a.str());
  }
  return apis;
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

// Equal as JSON values: objects whatever their key order (the vendor's order is not the
// renderer's), lists in order.
inline ::testing::AssertionResult sameJson(const Json& actual, const Json& expected) {
  if (nlohmann::json::parse(actual.dump()) == nlohmann::json::parse(expected.dump())) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "\n  actual:   " << actual.dump() << "\n  expected: " << expected.dump();
}

// The same, against JSON text.
inline ::testing::AssertionResult same(const Json& actual, const std::string& expected) {
  return sameJson(actual, Json::parse(expected));
}

// The hostPath behind a container's mount at `mountPath`, as "path type".
inline std::string hostPathAndType(const Json& workload, const Json& container,
                                   const std::string& mountPath) {
  const Json v = volumeAt(workload, container, mountPath);
  const Json& hp = api::member(v, "hostPath");
  const Json& path = api::member(hp, "path");
  const Json& type = api::member(hp, "type");
  return (path.is_string() ? path.get<std::string>() : "") + " " +
         (type.is_string() ? type.get<std::string>() : "");
}

// A mount of a container: its path, the volume behind it (its source as JSON text, without
// the name), its propagation ("" for none) and readOnly.
struct Mount {
  std::string path;
  std::string source;
  std::string propagation;
  bool readOnly = false;
};

// Exactly these mounts: each at its path, on its volume, with its propagation.
inline void expectMounts(const Json& workload, const Json& container,
                         const std::vector<Mount>& want) {
  for (const auto& m : want) {
    const Json mount = mountAt(container, m.path);
    ASSERT_TRUE(mount.is_object()) << container.value("name", "") << " has no mount at " << m.path;
    Json volume = volumeAt(workload, container, m.path);
    ASSERT_TRUE(volume.is_object()) << "no volume for " << m.path;
    volume.erase("name");
    EXPECT_TRUE(same(volume, m.source)) << m.path;
    EXPECT_EQ(mount.value("mountPropagation", ""), m.propagation) << m.path;
    EXPECT_EQ(mount.value("readOnly", false), m.readOnly) << m.path;
  }
  EXPECT_EQ(container.value("volumeMounts", Json::array()).size(), want.size())
      << container.value("name", "") << ": " << container.value("volumeMounts", Json()).dump();
}

// The env variable `name` of a container comes from the pod's field `path`.
inline void expectEnvFrom(const Json& container, const std::string& name, const char* path) {
  Json v = named(container.value("env", Json::array()), name);
  ASSERT_TRUE(v.is_object()) << "no env " << name;
  v.erase("name");
  EXPECT_TRUE(sameJson(v, Json{{"valueFrom", {{"fieldRef", {{"fieldPath", path}}}}}})) << name;
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
