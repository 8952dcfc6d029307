// JSON codec for DriverDeployment.
//
// Decoding follows the API server's rules for a structural schema: an explicit
// null is the same as an absent field, a value of the wrong type is an error
// with its field path, and unknown fields are pruned (and reported, so a caller
// can be strict about them the way `kubectl apply --validate=strict` is).
// Encoding writes fields in declaration order and omits absent ones, so
// decode -> encode is lossless for everything but pruned fields.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/field_error.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api {

struct Decoded {
  DriverDeployment object;
  ErrorList errors;                       // wrong types; the field is left unset
  std::vector<std::string> unknownFields; // pruned, e.g. "spec.node.kubletDir"
};

Decoded decode(const Json& json);
Json encode(const DriverDeployment& object);
Json encode(const DriverDeploymentStatus& status);

// The tree of field names the codec knows, for schema consistency checks:
// an object per struct (keys in declaration order), `"[]"` wrapping the item
// tree of a list of structs, and a string naming the leaf kind otherwise
// ("string", "boolean", "integer", "json", "map", "list").
Json fieldTree();

} // namespace csiop::api
