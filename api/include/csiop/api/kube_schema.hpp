// Kubernetes' own schema of the types a DriverDeployment embeds (core/v1 Volume,
// SecurityContext, Probe, Container, apps/v1 update strategies, rbac/v1 PolicyRule, ...): the
// part of the API server's OpenAPI v3 documents those types reach, kept to what a check reads
// (types, formats, enums, required fields, properties, list keys), and checks of a value against
// it that answer as the API server does when it decodes and validates the object.
//
// The schema of the pinned Kubernetes version is generated from the API server's documents and
// embedded in the binary (api/schema/kubernetes.json; the e2e suite compares it with what the
// pinned API server serves).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/api/field_error.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api {

// What a check found: errors (a wrong type, a value outside an enum, a missing required field,
// a duplicate list key) and unknown fields, each with its JSON pointer for pruning.
struct SchemaFindings {
  ErrorList errors;
  std::vector<std::string> unknownFields;    // field paths, e.g. spec.driver.volumes[0].mountPth
  std::vector<Json::json_pointer> unknownAt; // the same fields, as pointers into the document
  std::size_t omitted = 0;                   // errors beyond the limit, not listed

  [[nodiscard]] bool empty() const { return errors.empty() && unknownFields.empty(); }
};

class KubeSchema {
public:
  // A schema from a subset document (kubeSchemaSubset's output); throws std::invalid_argument
  // when it is not one.
  static KubeSchema fromSubset(const Json& subset);

  [[nodiscard]] const std::string& kubernetesVersion() const { return version_; }
  [[nodiscard]] bool has(std::string_view definition) const;

  // Checks `value`, found at `path` (at `pointer` in its document), against `definition`: a
  // definition's name ("io.k8s.api.core.v1.Volume"), or one of its properties after a slash
  // ("io.k8s.api.core.v1.PodSpec/volumes": a list of Volumes with the list's keys). `patch`: the
  // value is a strategic-merge patch of one (no field is required, $patch directives are allowed).
  void check(const Json& value, std::string_view definition, const std::string& path,
             const Json::json_pointer& pointer, bool patch, SchemaFindings& out) const;

private:
  enum class Type : std::uint8_t {
    Any,
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
    IntOrString,
    Quantity
  };
  static constexpr std::uint32_t kNone = UINT32_MAX;
  struct Node {
    Type type = Type::Any;
    bool int32 = false;
    std::vector<std::string> enumValues;
    std::map<std::string, std::uint32_t, std::less<>> properties;
    std::vector<std::string> required;
    std::uint32_t items = kNone;      // arrays
    std::uint32_t additional = kNone; // maps
    std::vector<std::string> listMapKeys;
    bool listSet = false;
  };
  struct Walk;

  std::uint32_t find(std::string_view definition) const;
  std::uint32_t compile(const Json& schema, const Json& definitions);
  std::uint32_t definitionNode(const std::string& name, const Json& definitions);

  std::string version_;
  std::vector<Node> nodes_;
  std::map<std::string, std::uint32_t, std::less<>> definitions_;
};

// The API server's OpenAPI v3 documents (under /openapi/v3/) the embedded types come from.
inline constexpr const char* kKubeSchemaDocuments[] = {"api/v1", "apis/apps/v1",
                                                       "apis/rbac.authorization.k8s.io/v1",
                                                       "apis/policy/v1", "apis/storage.k8s.io/v1"};

// The subset of OpenAPI v3 documents (their components.schemas) that `roots` reach, normalized:
// a single-$ref allOf becomes the $ref, oneOf integer|string becomes "int-or-string" and
// string|number "quantity", descriptions and defaults are dropped. Throws std::invalid_argument
// when a root or a reference is missing.
Json kubeSchemaSubset(const std::vector<Json>& documents, const std::vector<std::string>& roots,
                      const std::string& kubernetesVersion);

// The schema of the pinned Kubernetes version, embedded in the binary.
const KubeSchema& embeddedKubeSchema();
std::string_view embeddedKubeSchemaText();
// Its Kubernetes version ("v1.36.4"), read without compiling it.
std::string embeddedKubeSchemaVersion();

// The schema the embedded fields are checked against (api::load): the API server's own, once the
// operator has read it from a server of another version than the embedded one
// (app::useServedKubeSchema), else the embedded one. useKubeSchema(nullptr) goes back to the
// embedded schema. Safe to call from any thread; a check holds the schema it started with.
std::shared_ptr<const KubeSchema> kubeSchemaInUse();
void useKubeSchema(std::shared_ptr<const KubeSchema> schema);

} // namespace csiop::api
