#include <csiop/api/load.hpp>

#include <csiop/api/codec.hpp>
#include <csiop/api/embedded_fields.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/validation.hpp>
#include <csiop/api/yaml.hpp>

#include "utf8.hpp"

namespace csiop::api {
namespace {

// Enough to show what is wrong without a line per string of a hostile document.
constexpr std::size_t kMaxUtf8Errors = 10;

// Whether `field` is one of the fields of `errors` or lies inside one.
bool within(const std::string& field, const ErrorList& errors) {
  for (const auto& e : errors) {
    if (field == e.field || (field.starts_with(e.field) &&
                             (field[e.field.size()] == '.' || field[e.field.size()] == '['))) {
      return true;
    }
  }
  return false;
}

void loadOne(const Json& doc, const std::string& where, UnknownFields unknown, const Check& check,
             Loaded& out) {
  const std::string prefix = where.empty() ? "" : where + ": ";
  if (!doc.is_object()) {
    out.errors.push_back(prefix + "expected a DriverDeployment object, got a " +
                         std::string(doc.type_name()));
    return;
  }
  const auto apiVersion = doc.value("apiVersion", Json()).is_string()
                              ? doc["apiVersion"].get<std::string>()
                              : std::string();
  const auto kind =
      doc.value("kind", Json()).is_string() ? doc["kind"].get<std::string>() : std::string();
  if (apiVersion != kApiVersion || kind != kKind) {
    out.errors.push_back(prefix + "expected apiVersion " + kApiVersion + ", kind " + kKind +
                         "; got apiVersion \"" + printableUtf8(apiVersion) + "\", kind \"" +
                         printableUtf8(kind) + "\"");
    return;
  }
  // Strings that are not text fail every later dump of the object (messages, rendering).
  if (const ErrorList bad = utf8Errors(doc, kMaxUtf8Errors); !bad.empty()) {
    const std::string label =
        prefix + "DriverDeployment \"" + printableUtf8(metadataField(doc, "name")) + "\": ";
    for (const auto& e : bad) {
      out.errors.push_back(label + e.message());
    }
    return;
  }
  const std::size_t errorsBefore = out.errors.size();
  // The embedded Kubernetes objects, as the API server will read them from the children; unknown
  // fields in them are pruned as it prunes them (unless they are errors).
  const std::shared_ptr<const KubeSchema> schema = kubeSchemaInUse();
  SchemaFindings embedded = checkEmbeddedFields(doc, *schema);
  Json pruned;
  if (!embedded.unknownAt.empty() && unknown != UnknownFields::Strict) {
    pruned = doc;
    for (auto it = embedded.unknownAt.rbegin(); it != embedded.unknownAt.rend(); ++it) {
      pruned.at(it->parent_pointer()).erase(it->back());
    }
  }
  Decoded decoded = decode(pruned.is_null() ? doc : pruned);
  const std::string name = decoded.object.name();
  const std::string label = prefix + "DriverDeployment \"" + name + "\": ";
  for (const auto& e : decoded.errors) {
    out.errors.push_back(label + e.message());
  }
  std::vector<std::string> unknownFields = std::move(decoded.unknownFields);
  unknownFields.insert(unknownFields.end(), embedded.unknownFields.begin(),
                       embedded.unknownFields.end());
  for (const auto& f : unknownFields) {
    if (unknown == UnknownFields::Strict) {
      out.errors.push_back(label + "unknown field \"" + f + "\"");
    } else if (unknown == UnknownFields::Warn) {
      out.warnings.push_back(label + "unknown field \"" + f + "\" (ignored)");
    }
  }
  if (!decoded.errors.empty()) {
    return; // fields with the wrong type were left unset; validating would mislead
  }
  for (const auto& e : embedded.errors) {
    out.errors.push_back(label + e.message());
  }
  if (embedded.omitted > 0) {
    out.errors.push_back(label + "and " + std::to_string(embedded.omitted) +
                         " more problems in embedded Kubernetes objects");
  }
  Validation v = validate(decoded.object);
  if (v.ok() && check) {
    v.errors = check(decoded.object);
  }
  // A field the schema check found wrong is reported once, in Kubernetes' words.
  std::erase_if(v.errors, [&](const FieldError& e) { return within(e.field, embedded.errors); });
  for (const auto& e : v.errors) {
    out.errors.push_back(label + e.message());
  }
  for (const auto& w : v.warnings) {
    out.warnings.push_back(label + w);
  }
  if (out.errors.size() == errorsBefore) {
    out.objects.push_back(std::move(decoded.object));
  }
}

} // namespace

Loaded loadDriverDeployments(std::string_view text, UnknownFields unknown, const Check& check) {
  Loaded out;
  std::vector<Json> docs;
  try {
    docs = parseYaml(text);
  } catch (const YamlError& e) {
    out.errors.emplace_back(e.what());
    return out;
  }
  if (docs.empty()) {
    out.errors.emplace_back("no DriverDeployment found: the input is empty");
    return out;
  }
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::string where = docs.size() > 1 ? "document " + std::to_string(i + 1) : "";
    // A List (as `kubectl get -o yaml` prints) contributes its items.
    if (docs[i].is_object() && docs[i].value("kind", Json()) == "List" &&
        docs[i].contains("items") && docs[i]["items"].is_array()) {
      const auto& items = docs[i]["items"];
      for (std::size_t j = 0; j < items.size(); ++j) {
        loadOne(items[j], (where.empty() ? "" : where + " ") + "items[" + std::to_string(j) + "]",
                unknown, check, out);
      }
      continue;
    }
    loadOne(docs[i], where, unknown, check, out);
  }
  return out;
}

Loaded loadDriverDeployment(const Json& object, UnknownFields unknown, const Check& check) {
  Loaded out;
  loadOne(object, "", unknown, check, out);
  return out;
}

} // namespace csiop::api
