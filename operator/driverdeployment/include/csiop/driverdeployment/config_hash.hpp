// The content hash of the ConfigMaps and Secrets a workload references
// (render::configReferences), set on its pod template so that a change rolls
// the pods. Pure; SHA-256 of each object's data and binaryData, key by key, in
// a canonical order, so that the hash does not depend on key order, metadata or
// resourceVersion, and says nothing of a Secret's content.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <csiop/render/config_refs.hpp>

namespace csiop::driverdeployment {

using api::Json;

// One reference and what was read: the object, or nullopt when it does not exist.
using ReadReference = std::pair<render::ConfigReference, std::optional<Json>>;

// 32 hex digits (128 bits of SHA-256) over every reference, absent ones included.
std::string configContentHash(const std::vector<ReadReference>& references);

// 32 hex digits (128 bits of SHA-256) of `text`.
std::string contentDigest(std::string_view text);

// The 64 hex digits of SHA-256 of `text`.
std::string sha256Hex(std::string_view text);

} // namespace csiop::driverdeployment
