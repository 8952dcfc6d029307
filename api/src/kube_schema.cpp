#include <csiop/api/kube_schema.hpp>

#include <algorithm>
#include <atomic>
#include <set>
#include <stdexcept>

#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>

namespace csiop::embedded {
std::string_view kubeSchemaJson();
} // namespace csiop::embedded

namespace csiop::api {
namespace {

// Enough to say what is wrong with a document without a line per item of a hostile one.
constexpr std::size_t kMaxErrors = 50;

std::string referenced(const Json& schema) {
  const std::string ref = stringField(schema, "$ref");
  const auto slash = ref.rfind('/');
  return slash == std::string::npos ? ref : ref.substr(slash + 1);
}

// The OpenAPI keys a check reads, normalized (see kubeSchemaSubset).
Json normalized(const Json& schema, std::set<std::string>& refs) {
  if (!schema.is_object()) {
    throw std::invalid_argument("a schema is not an object: " + schema.dump().substr(0, 80));
  }
  // allOf: [{$ref}] is how the generator writes a reference with a description beside it.
  if (const Json& all = member(schema, "allOf"); all.is_array() && all.size() == 1) {
    return normalized(all[0], refs);
  }
  Json out = Json::object();
  if (schema.contains("$ref")) {
    const std::string name = referenced(schema);
    refs.insert(name);
    out["$ref"] = name;
    return out;
  }
  if (const Json& one = member(schema, "oneOf"); one.is_array()) {
    std::set<std::string> types;
    for (const auto& s : one) {
      types.insert(stringField(s, "type"));
    }
    if (types == std::set<std::string>{"integer", "string"}) {
      out["type"] = "int-or-string";
    } else if (types == std::set<std::string>{"number", "string"}) {
      out["type"] = "quantity";
    } else {
      throw std::invalid_argument("a oneOf of other types than integer|string or number|string");
    }
    return out;
  }
  for (const char* key : {"type", "format"}) {
    if (schema.contains(key)) {
      out[key] = schema[key];
    }
  }
  for (const char* key : {"enum", "required", "x-kubernetes-list-map-keys"}) {
    if (const Json& list = member(schema, key); list.is_array() && !list.empty()) {
      out[key] = list;
    }
  }
  if (stringField(schema, "x-kubernetes-list-type") == "set") {
    out["x-kubernetes-list-type"] = "set";
  }
  if (const Json& properties = member(schema, "properties"); properties.is_object()) {
    Json props = Json::object();
    for (const auto& [name, property] : properties.items()) {
      props[name] = normalized(property, refs);
    }
    out["properties"] = std::move(props);
  }
  for (const char* key : {"items", "additionalProperties"}) {
    if (const Json& sub = member(schema, key); sub.is_object()) {
      out[key] = normalized(sub, refs);
    }
  }
  return out;
}

std::string typeName(const Json& j) {
  if (j.is_number_integer()) {
    return "integer";
  }
  if (j.is_number()) {
    return "number";
  }
  return j.type_name();
}

} // namespace

// One check's walk. The field path and the pointer's tokens grow and shrink as it descends
// (a pointer is built only for an unknown field), so a value costs no allocation of its own.
struct KubeSchema::Walk {
  const KubeSchema& schema;
  bool patch;
  SchemaFindings& out;
  const Json::json_pointer& base;
  std::string path;
  std::vector<std::string> tokens;

  // Appends `.key` (or `[key]` for a map's key, `[i]` for an item) for the life of a scope.
  class Step {
  public:
    Step(Walk& walk, std::string_view text, std::string token)
        : walk_(walk), length_(walk.path.size()) {
      walk_.path += text;
      walk_.tokens.push_back(std::move(token));
    }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;
    ~Step() {
      walk_.path.resize(length_);
      walk_.tokens.pop_back();
    }

  private:
    Walk& walk_;
    std::size_t length_;
  };

  Step field(std::string_view key) {
    return Step(*this, path.empty() ? std::string(key) : "." + std::string(key), std::string(key));
  }
  Step mapKey(std::string_view key) {
    return Step(*this, "[" + std::string(key) + "]", std::string(key));
  }
  Step item(std::size_t i) {
    const std::string index = std::to_string(i);
    return Step(*this, "[" + index + "]", index);
  }

  void error(FieldError e) {
    if (out.errors.size() >= kMaxErrors) {
      ++out.omitted;
      return;
    }
    out.errors.push_back(std::move(e));
  }

  void typeError(const Json& value, std::string_view want) {
    error(invalid(path, value,
                  path + " in body must be of type " + std::string(want) + ": \"" +
                      typeName(value) + "\""));
  }

  void visit(const Json& value, std::uint32_t index) {
    // An explicit null decodes as the field's zero value (in a patch: deletes it).
    if (value.is_null()) {
      return;
    }
    const Node& node = schema.nodes_[index];
    switch (node.type) {
    case Type::Any:
      return;
    case Type::Object:
      object(value, node);
      return;
    case Type::Array:
      array(value, node);
      return;
    case Type::String:
      if (!value.is_string()) {
        typeError(value, "string");
      } else if (!node.enumValues.empty() &&
                 std::find(node.enumValues.begin(), node.enumValues.end(),
                           value.get_ref<const std::string&>()) == node.enumValues.end()) {
        error(unsupported(path, value, node.enumValues));
      }
      return;
    case Type::Integer:
      integer(value, node);
      return;
    case Type::Number:
      if (!value.is_number()) {
        typeError(value, "number");
      }
      return;
    case Type::Boolean:
      if (!value.is_boolean()) {
        typeError(value, "boolean");
      }
      return;
    case Type::IntOrString:
      if (!value.is_string() && !value.is_number_integer()) {
        typeError(value, "integer or string");
      }
      return;
    case Type::Quantity:
      if (value.is_string()) {
        if (!formats::isQuantity(value.get_ref<const std::string&>())) {
          error(invalid(path, value,
                        "quantities must match the regular expression "
                        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
        }
      } else if (!value.is_number()) {
        typeError(value, "string or number");
      }
      return;
    }
  }

  void integer(const Json& value, const Node& node) {
    if (!value.is_number_integer()) {
      typeError(value, "integer");
      return;
    }
    if (value.is_number_unsigned()) {
      const auto u = value.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(node.int32 ? INT32_MAX : INT64_MAX)) {
        error(invalid(path, value, node.int32 ? "must fit in 32 bits" : "must fit in 64 bits"));
      }
      return;
    }
    const auto i = value.get<std::int64_t>();
    if (node.int32 && (i < INT32_MIN || i > INT32_MAX)) {
      error(invalid(path, value, "must fit in 32 bits"));
    }
  }

  void object(const Json& value, const Node& node) {
    if (!value.is_object()) {
      typeError(value, "object");
      return;
    }
    if (node.properties.empty()) {
      if (node.additional != kNone) {
        for (const auto& [key, v] : value.items()) {
          const Step step = mapKey(key);
          visit(v, node.additional);
        }
      }
      return; // an object of any fields (FieldsV1)
    }
    for (const auto& [key, v] : value.items()) {
      if (patch && key.starts_with("$")) {
        continue; // $patch, $retainKeys, $setElementOrder/..., $deleteFromPrimitiveList/...
      }
      const Step step = field(key);
      if (const auto it = node.properties.find(key); it != node.properties.end()) {
        visit(v, it->second);
      } else {
        // Every one, however many: each is pruned.
        out.unknownFields.push_back(path);
        Json::json_pointer at = base;
        for (const auto& token : tokens) {
          at /= token;
        }
        out.unknownAt.push_back(std::move(at));
      }
    }
    if (patch) {
      return;
    }
    for (const auto& name : node.required) {
      if (member(value, name).is_null()) {
        const Step step = field(name);
        error(required(path));
      }
    }
  }

  // What the API server's server-side apply refuses: two items with one key. "" when the list
  // has no keys (or the item is not an object).
  static std::string listKey(const Json& item, const Node& node) {
    if (node.listSet) {
      return item.dump();
    }
    std::string key;
    if (item.is_object()) {
      for (const auto& k : node.listMapKeys) {
        key += member(item, k).dump() + "\n";
      }
    }
    return key;
  }

  void array(const Json& value, const Node& node) {
    if (!value.is_array()) {
      typeError(value, "array");
      return;
    }
    const bool keyed = !patch && (node.listSet || !node.listMapKeys.empty());
    std::set<std::string> seen;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const Step step = item(i);
      if (node.items != kNone) {
        visit(value[i], node.items);
      }
      if (!keyed) {
        continue; // a patch's list holds directives as well as items
      }
      const std::string key = listKey(value[i], node);
      if (key.empty() || seen.insert(key).second) {
        continue;
      }
      Json shown = value[i];
      if (!node.listMapKeys.empty()) {
        shown = Json::object();
        for (const auto& k : node.listMapKeys) {
          if (!member(value[i], k).is_null()) {
            shown[k] = value[i][k];
          }
        }
      }
      error(duplicate(path, shown));
    }
  }
};

std::uint32_t KubeSchema::definitionNode(const std::string& name, const Json& definitions) {
  if (const auto it = definitions_.find(name); it != definitions_.end()) {
    return it->second;
  }
  const Json& schema = member(definitions, name);
  if (!schema.is_object()) {
    throw std::invalid_argument("the schema has no definition " + name);
  }
  // Reserved before compiling, so a definition that reaches itself refers to its node.
  const auto index = static_cast<std::uint32_t>(nodes_.size());
  nodes_.emplace_back();
  definitions_[name] = index;
  const std::uint32_t compiled = compile(schema, definitions);
  if (compiled + 1 == nodes_.size() && compiled != index) {
    nodes_[index] = std::move(nodes_.back()); // the definition's own node, pushed last
    nodes_.pop_back();
  } else {
    nodes_[index] = nodes_[compiled]; // an alias of another definition
  }
  return index;
}

std::uint32_t KubeSchema::compile(const Json& schema, const Json& definitions) {
  if (schema.contains("$ref")) {
    return definitionNode(stringField(schema, "$ref"), definitions);
  }
  Node node;
  const std::string type = stringField(schema, "type");
  const std::string format = stringField(schema, "format");
  if (type == "object" || (type.empty() && schema.contains("properties"))) {
    node.type = Type::Object;
  } else if (type == "array") {
    node.type = Type::Array;
  } else if (type == "string") {
    node.type = Type::String;
  } else if (type == "integer") {
    node.type = Type::Integer;
    node.int32 = format == "int32";
  } else if (type == "number") {
    node.type = Type::Number;
  } else if (type == "boolean") {
    node.type = Type::Boolean;
  } else if (type == "int-or-string") {
    node.type = Type::IntOrString;
  } else if (type == "quantity") {
    node.type = Type::Quantity;
  } else if (!type.empty()) {
    throw std::invalid_argument("a schema of an unknown type \"" + type + "\"");
  }
  for (const auto& v : member(schema, "enum")) {
    if (v.is_string()) {
      node.enumValues.push_back(v.get<std::string>());
    }
  }
  for (const auto& v : member(schema, "required")) {
    node.required.push_back(v.get<std::string>());
  }
  for (const auto& v : member(schema, "x-kubernetes-list-map-keys")) {
    node.listMapKeys.push_back(v.get<std::string>());
  }
  node.listSet = stringField(schema, "x-kubernetes-list-type") == "set";
  // Children first: compiling them grows nodes_.
  std::map<std::string, std::uint32_t, std::less<>> properties;
  if (const Json& props = member(schema, "properties"); props.is_object()) {
    for (const auto& [name, property] : props.items()) {
      properties[name] = compile(property, definitions);
    }
  }
  node.properties = std::move(properties);
  if (const Json& items = member(schema, "items"); items.is_object()) {
    node.items = compile(items, definitions);
  }
  if (const Json& additional = member(schema, "additionalProperties"); additional.is_object()) {
    node.additional = compile(additional, definitions);
  }
  nodes_.push_back(std::move(node));
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

KubeSchema KubeSchema::fromSubset(const Json& subset) {
  const Json& definitions = member(subset, "definitions");
  if (!definitions.is_object() || !member(subset, "kubernetesVersion").is_string()) {
    throw std::invalid_argument("not a schema subset: no kubernetesVersion and definitions");
  }
  KubeSchema schema;
  schema.version_ = subset["kubernetesVersion"].get<std::string>();
  try {
    for (const auto& [name, definition] : definitions.items()) {
      schema.definitionNode(name, definitions);
    }
  } catch (const Json::exception& e) {
    throw std::invalid_argument(std::string("a malformed schema subset: ") + e.what());
  }
  schema.nodes_.shrink_to_fit();
  return schema;
}

std::uint32_t KubeSchema::find(std::string_view definition) const {
  const auto slash = definition.find('/');
  const auto it = definitions_.find(definition.substr(0, slash));
  if (it == definitions_.end()) {
    return kNone;
  }
  if (slash == std::string_view::npos) {
    return it->second;
  }
  const Node& node = nodes_[it->second];
  const auto property = node.properties.find(definition.substr(slash + 1));
  return property == node.properties.end() ? kNone : property->second;
}

bool KubeSchema::has(std::string_view definition) const {
  return find(definition) != kNone;
}

void KubeSchema::check(const Json& value, std::string_view definition, const std::string& path,
                       const Json::json_pointer& pointer, bool patch, SchemaFindings& out) const {
  const std::uint32_t index = find(definition);
  if (index == kNone) {
    throw std::invalid_argument("the schema has no definition " + std::string(definition));
  }
  Walk walk{*this, patch, out, pointer, path, {}};
  walk.visit(value, index);
}

Json kubeSchemaSubset(const std::vector<Json>& documents, const std::vector<std::string>& roots,
                      const std::string& kubernetesVersion) {
  std::map<std::string, const Json*> all;
  for (const auto& doc : documents) {
    for (const auto& [name, schema] : member(member(doc, "components"), "schemas").items()) {
      all.emplace(name, &schema);
    }
  }
  Json definitions = Json::object();
  std::vector<std::string> todo(roots.begin(), roots.end());
  std::set<std::string> done;
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!done.insert(name).second) {
      continue;
    }
    const auto it = all.find(name);
    if (it == all.end()) {
      throw std::invalid_argument("the OpenAPI documents have no schema " + name);
    }
    std::set<std::string> refs;
    Json schema = normalized(*it->second, refs);
    definitions[name] = std::move(schema);
    todo.insert(todo.end(), refs.begin(), refs.end());
  }
  // Sorted by name, so the file is the same whatever order the documents came in.
  std::map<std::string, Json> sorted;
  for (auto& [name, schema] : definitions.items()) {
    sorted.emplace(name, schema);
  }
  Json ordered = Json::object();
  for (auto& [name, schema] : sorted) {
    ordered[name] = std::move(schema);
  }
  return Json{{"kubernetesVersion", kubernetesVersion}, {"definitions", std::move(ordered)}};
}

std::string_view embeddedKubeSchemaText() {
  return embedded::kubeSchemaJson();
}

std::string embeddedKubeSchemaVersion() {
  // The definitions are parsed past, not kept.
  const Json head = Json::parse(
      embedded::kubeSchemaJson(), [](int depth, Json::parse_event_t event, Json& parsed) {
        return !(depth == 1 && event == Json::parse_event_t::key && parsed == "definitions");
      });
  return head.at("kubernetesVersion").get<std::string>();
}

const KubeSchema& embeddedKubeSchema() {
  static const KubeSchema schema = KubeSchema::fromSubset(Json::parse(embedded::kubeSchemaJson()));
  return schema;
}

namespace {

std::atomic<std::shared_ptr<const KubeSchema>>& servedSchema() {
  static std::atomic<std::shared_ptr<const KubeSchema>> schema;
  return schema;
}

} // namespace

std::shared_ptr<const KubeSchema> kubeSchemaInUse() {
  if (std::shared_ptr<const KubeSchema> served = servedSchema().load()) {
    return served;
  }
  // The embedded schema lives as long as the program: a pointer that owns nothing.
  return {std::shared_ptr<const KubeSchema>(), &embeddedKubeSchema()};
}

void useKubeSchema(std::shared_ptr<const KubeSchema> schema) {
  servedSchema().store(std::move(schema));
}

} // namespace csiop::api
