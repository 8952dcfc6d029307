// YAML <-> JSON for Kubernetes manifests (the csiop_yaml library: nothing of the API, so the
// Kubernetes client reads kubeconfigs with it too).
//
// Parsing resolves plain scalars with the YAML 1.2 core schema (quoted scalars
// are always strings; a number beyond a double's range stays a string, as Go's
// reader leaves it), rejects duplicate mapping keys, bounds the size of the
// expanded document so alias bombs cannot exhaust memory, and bounds its shape
// as parseJson does. It takes time linear in the document. Emitting is
// deterministic block-style YAML in the layout kubectl prints, quoting any
// string that a YAML 1.1 or 1.2 reader could take for another type.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <csiop/api/json_parse.hpp>

namespace csiop::api {

using Json = nlohmann::ordered_json; // as in types.hpp: this header stands alone (csiop_yaml)

class YamlError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct YamlLimits {
  std::size_t maxNodes = 1'000'000; // after alias expansion, over all documents
  // As for JSON (see JsonLimits for why): a mapping is an object, a sequence an array.
  std::size_t maxDepth = JsonLimits{}.maxDepth;
  std::size_t maxMembers = JsonLimits{}.maxMembers;
  std::size_t maxItems = JsonLimits{}.maxItems;
};

// The value of a plain (unquoted, untagged) scalar under the YAML 1.2 core schema: null, a
// boolean, an integer (decimal, 0o octal, 0x hexadecimal), a float, or else the string itself.
// Throws YamlError for .inf and .nan, which JSON cannot hold.
Json resolvePlainScalar(const std::string& text);

// Every non-empty document of a stream, in order. Throws YamlError with the
// line and column of the problem.
std::vector<Json> parseYaml(std::string_view text, const YamlLimits& limits = {});

// One document, without the leading "---".
std::string toYaml(const Json& document);

// Documents joined by "---" lines.
std::string toYamlStream(const std::vector<Json>& documents);

} // namespace csiop::api
