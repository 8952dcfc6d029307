// The table-driven validation tests: a valid DriverDeployment (kBase), a merge patch that
// breaks one rule, and the exact messages that must come out.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include <csiop/api/codec.hpp>
#include <csiop/api/validation.hpp>
#include <csiop/api/yaml.hpp>

namespace csiop::api {

inline const char* kBase = R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.csi.example.com
  driver: {image: example.com/driver:v1}
  controller: {}
)";

inline Json mergePatch(Json target, const Json& patch) {
  if (!patch.is_object()) {
    return patch;
  }
  if (!target.is_object()) {
    target = Json::object();
  }
  for (const auto& [k, v] : patch.items()) {
    if (v.is_null()) {
      target.erase(k);
    } else {
      target[k] = mergePatch(target.contains(k) ? target[k] : Json(), v);
    }
  }
  return target;
}

inline Validation validateWith(const std::string& patchYaml) {
  Json doc = parseYaml(kBase)[0];
  if (!patchYaml.empty()) {
    doc = mergePatch(doc, parseYaml(patchYaml)[0]);
  }
  const Decoded d = decode(doc);
  EXPECT_TRUE(d.errors.empty()) << joinMessages(d.errors);
  return validate(d.object);
}

inline std::vector<std::string> messages(const Validation& v) {
  std::vector<std::string> out;
  for (const auto& e : v.errors) {
    out.push_back(e.message());
  }
  return out;
}

struct Case {
  const char* name;
  const char* patch;
  std::vector<std::string> expected;
};

inline void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class Rule : public ::testing::TestWithParam<Case> {};

} // namespace csiop::api
