// YAML <-> JSON for Kubernetes manifests (the csiop_yaml library: nothing of the API, so the
// Kubernetes client reads kubeconfigs with it too).
//
// Parsing resolves plain scalars with the YAML 1.2 core schema (quoted scalars
// are always strings), rejects duplicate mapping keys, and bounds the size of
// the expanded document so alias bombs cannot exhaust memory. Emitting is
// deterministic block-style YAML in the layout kubectl prints, quoting any
// string that a YAML 1.1 or 1.2 reader could take for another type.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace csiop::api {

using Json = nlohmann::ordered_json; // as in types.hpp: this header stands alone (csiop_yaml)

class YamlError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct YamlLimits {
  std::size_t maxNodes = 1'000'000; // after alias expansion, over all documents
  std::size_t maxDepth = 200;
};

// Every non-empty document of a stream, in order. Throws YamlError with the
// line and column of the problem.
std::vector<Json> parseYaml(std::string_view text, const YamlLimits& limits = {});

// One document, without the leading "---".
std::string toYaml(const Json& document);

// Documents joined by "---" lines.
std::string toYamlStream(const std::vector<Json>& documents);

} // namespace csiop::api
