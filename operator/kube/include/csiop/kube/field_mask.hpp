// Which fields of an object a cache reads, so that a list or a watch builds only those as it
// parses. A pod is some 6 KiB of JSON and a cache of workload pods reads a tenth of it; parsing
// every event into a whole document, only to cut it down afterwards, was most of the operator's
// CPU (docs/explanation/performance.md). The text is still read to the end and checked as JSON;
// what the mask leaves out is never allocated.
//
//   FieldMask pods;
//   pods.keep({"metadata", "name"}).keep({"status", "containerStatuses", "ready"});
//   Json slim = parseMasked(text, pods);
//
// A path is a list of object keys; "*" stands for any key. Arrays are transparent: the mask of
// an array applies to each of its elements ({"spec", "volumes", "name"} keeps the name of every
// volume). A path keeps the whole value at its end; a value the mask does not name is skipped; a
// scalar where the path goes deeper is kept as it is (a reader sees the value it would have seen).
//
// A path kept as text (keepText) keeps its whole value as the value's minified JSON text, held in
// a JSON binary value (never the result of parsing JSON, so it cannot be mistaken for a string
// the object held): what a cache keeps but seldom reads is then one allocation, not a tree.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <csiop/kube/json.hpp>

namespace csiop::kube {

class FieldMask {
public:
  // Keeps nothing until keep() adds paths.
  FieldMask() = default;
  // Keeps everything.
  static FieldMask whole();
  // `inner` as the value of `key` of an enclosing object (a list's items, a watch event's
  // object), with `siblings` kept whole beside it.
  static FieldMask within(std::string_view key, const FieldMask& inner,
                          std::initializer_list<std::string_view> siblings = {});

  FieldMask& keep(std::initializer_list<std::string_view> path);
  // The value at `path` kept whole as its text (textOf reads it back).
  FieldMask& keepText(std::initializer_list<std::string_view> path);

  // The mask of the value under `key` of an object this mask applies to; nullptr: skip it.
  const FieldMask* child(std::string_view key) const;
  bool keepsWhole() const { return whole_; }
  bool keepsText() const { return text_; }

private:
  FieldMask& keepAt(std::initializer_list<std::string_view> path, bool text);

  bool whole_ = false;
  bool text_ = false;                                       // whole, as text
  std::vector<std::pair<std::string, FieldMask>> children_; // "*": any other key
};

// Parses `text` keeping what `mask` names. Throws nlohmann::json::parse_error for text that is
// not JSON, as Json::parse does.
Json parseMasked(std::string_view text, const FieldMask& mask);
// As Json::parse(text, nullptr, false): a discarded value for text that is not JSON. `mask`:
// what to build (nullptr: everything).
Json parseOrDiscard(std::string_view text, const FieldMask* mask);

// The JSON text of a value a keepText path kept; nullopt if `value` is not one.
std::optional<std::string_view> textOf(const Json& value);

} // namespace csiop::kube
