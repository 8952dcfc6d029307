#include <csiop/reference.hpp>

#include <csiop/api/codec.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/crds.hpp>

namespace csiop::docs {
namespace {

using api::Json;

std::string oneLine(std::string s) {
  std::string out;
  bool space = false;
  for (const char c : s) {
    if (c == '\n' || c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) {
      out += ' ';
      space = false;
    }
    if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

std::string typeOf(const Json& s) {
  std::string t = s.value("type", std::string("object"));
  if (s.value("x-kubernetes-int-or-string", false)) {
    t = "int or string";
  }
  if (t == "array" && s.contains("items")) {
    const Json& items = s["items"];
    t = "list of " + (items.contains("properties") ? std::string("objects") : typeOf(items));
  } else if (t == "object" && s.contains("additionalProperties") &&
             s["additionalProperties"].is_object()) {
    t = "map of " + typeOf(s["additionalProperties"]);
  }
  return t;
}

std::string constraints(const Json& s, bool required) {
  std::string out;
  const auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (required) {
    add("required");
  }
  if (s.contains("enum")) {
    std::string values;
    for (const auto& v : s["enum"]) {
      values += (values.empty() ? "" : ", ") + ("`" + v.get<std::string>() + "`");
    }
    add("one of " + values);
  }
  if (s.contains("items") && s["items"].contains("enum")) {
    add("items " + constraints(s["items"], false));
  }
  if (s.contains("default")) {
    add("default `" + s["default"].dump() + "`");
  }
  for (const auto& [key, word] :
       {std::pair{"minimum", "min"}, std::pair{"maximum", "max"},
        std::pair{"minLength", "min length"}, std::pair{"maxLength", "max length"},
        std::pair{"maxItems", "max items"}}) {
    if (s.contains(key)) {
      add(std::string(word) + " " + s[key].dump());
    }
  }
  return out;
}

void section(const std::string& path, const Json& schema, const Json& tree, std::string& out) {
  const Json props = schema.value("properties", Json::object());
  const Json required = schema.value("required", Json::array());
  out += "\n## `" + path + "`\n\n";
  if (schema.contains("description")) {
    out += oneLine(schema["description"].get<std::string>()) + "\n\n";
  }
  out += "| Field | Type | Constraints | Description |\n|---|---|---|---|\n";
  std::vector<std::pair<std::string, std::pair<Json, Json>>> nested;
  for (const auto& [name, sub] : tree.items()) {
    const Json& s = props.contains(name) ? props[name] : Json::object();
    const bool isRequired =
        std::find(required.begin(), required.end(), Json(name)) != required.end();
    out += "| `" + name + "` | " + typeOf(s) + " | " + constraints(s, isRequired) + " | " +
           oneLine(s.value("description", std::string())) + " |\n";
    if (sub.is_object() && sub.contains("[]")) {
      nested.push_back({path + "." + name + "[]", {s.value("items", Json::object()), sub["[]"]}});
    } else if (sub.is_object()) {
      nested.push_back({path + "." + name, {s, sub}});
    }
  }
  for (const auto& [p, st] : nested) {
    section(p, st.first, st.second, out);
  }
}

} // namespace

std::string apiReference() {
  const Json crd = api::parseYaml(embedded::crdYaml()).at(0);
  const Json& schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
  const Json tree = api::fieldTree();
  std::string out = kBeginMarker;
  out += "\n";
  section("spec", schema["spec"], tree["spec"], out);
  section("status", schema["status"], tree["status"], out);
  out += "\n";
  out += kEndMarker;
  return out;
}

} // namespace csiop::docs
