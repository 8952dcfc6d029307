// What the render fuzzer and the corpus replay test share: the path of `csi-operator render`
// (manifest text -> api::loadDriverDeployments, which parses the YAML, decodes and validates ->
// render::render -> YAML and JSON output) and the invariants it must keep for ANY input:
// - nothing throws: bad input is an error message, never an exception;
// - what loads renders, and both outputs print (JSON text needs UTF-8);
// - the YAML printed reads back as exactly the objects rendered (the emitter quotes every string
//   a reader would take for something else).
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/api/load.hpp>
#include <csiop/api/object_kinds.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/render/check.hpp>
#include <csiop/render/render.hpp>

namespace csiop::render::fuzz {

// The outcome of one input, for the replay test: how many objects were rendered, or the errors.
struct RenderOutcome {
  std::vector<api::Json> objects;
  std::vector<std::string> errors;
};

namespace detail {

inline std::string checkOutput(const std::vector<api::Json>& objects) {
  const std::string yaml = api::toYamlStream(objects);
  (void)api::Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}}.dump(2);
  std::vector<api::Json> reread;
  try {
    reread = api::parseYaml(yaml);
  } catch (const api::YamlError& e) {
    return std::string("the YAML printed does not read back: ") + e.what();
  }
  if (reread != objects) {
    for (std::size_t i = 0; i < objects.size() && i < reread.size(); ++i) {
      if (reread[i] != objects[i]) {
        return "object " + std::to_string(i) + " reads back differently:\n" +
               objects[i].dump(-1, ' ', false, api::Json::error_handler_t::replace) + "\n" +
               reread[i].dump(-1, ' ', false, api::Json::error_handler_t::replace);
      }
    }
    return "the YAML printed reads back as " + std::to_string(reread.size()) + " objects, not " +
           std::to_string(objects.size());
  }
  return {};
}

} // namespace detail

// Renders `text` as `csi-operator render` does. "" when every invariant holds, else what broke.
inline std::string check(std::string_view text, RenderOutcome* outcome = nullptr) {
  static const std::vector<api::ObjectKind> kinds = api::builtinObjectKinds();
  RenderOutcome out;
  try {
    const api::Loaded loaded =
        api::loadDriverDeployments(text, api::UnknownFields::Strict, admissionCheck(kinds));
    if (!loaded.ok()) {
      for (const auto& e : loaded.errors) {
        if (e.empty()) {
          return "an empty error message";
        }
      }
      out.errors = loaded.errors;
    } else {
      for (const auto& dd : loaded.objects) {
        for (auto& o : render::render(dd)) {
          out.objects.push_back(std::move(o));
        }
      }
      if (std::string broken = detail::checkOutput(out.objects); !broken.empty()) {
        return broken;
      }
    }
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  } catch (...) {
    return "threw a non-exception";
  }
  if (outcome != nullptr) {
    *outcome = std::move(out);
  }
  return {};
}

} // namespace csiop::render::fuzz
