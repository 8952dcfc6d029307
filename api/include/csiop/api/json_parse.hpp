// JSON text to Json in linear time, with bounds on the document's shape.
//
// nlohmann's own parse into ordered_json inserts every member with a scan for its key: an
// object of 100,000 keys (1.5 MB) took 9 s. This parser appends members and finds duplicate keys
// through a hash index (ObjectBuilder); a duplicate key keeps nlohmann's meaning, the last value
// wins (in the place of the first). It also refuses documents shaped beyond anything the API
// reads, before building them.
#pragma once

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

namespace csiop::api {

// Syntax errors (nlohmann's message, e.g. "[json.exception.parse_error.101] parse error at line
// 1, column 2: ..."), numbers out of a double's range, and documents over a limit
// ("object at /spec/objects/0/data has more than 10000 members").
class JsonError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The defaults are the API's: a DriverDeployment nests a dozen levels, and its CRD bounds its
// objects and lists at 1,024 entries at most (maxProperties, maxItems) but for what it carries
// opaquely (the objects under spec.objects), which only the API server's 3 MiB request bounds.
// 10,000 members per object leaves a 1 MiB ConfigMap 100 bytes a key; 100,000 items per array is
// more than any list of a Kubernetes object needs; 200 levels is the webhook's limit of old (the
// API server allows 10,000). Beyond them a document is someone's attack or mistake, and every
// later walk over it (validation, rendering, diffing) would pay for its size.
struct JsonLimits {
  std::size_t maxDepth = 200;      // arrays and objects inside each other
  std::size_t maxMembers = 10'000; // per object
  std::size_t maxItems = 100'000;  // per array

  // For documents of the cluster (watch events, lists) that the operator did not choose.
  static constexpr JsonLimits none() {
    constexpr std::size_t kAny = std::numeric_limits<std::size_t>::max();
    return {kAny, kAny, kAny};
  }
};

// One JSON value (nothing but whitespace after it). Throws JsonError.
nlohmann::ordered_json parseJson(std::string_view text, const JsonLimits& limits = {});

} // namespace csiop::api
