#include <csiop/api/json_parse.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <csiop/api/object_builder.hpp>

#include "document_path.hpp"

namespace csiop::api {
namespace {

using Json = nlohmann::ordered_json;

// nlohmann's SAX events to a Json, bottom-up: a value is complete before it moves into its
// container, so no container grows while one under it is being built. The containers being built
// are a stack (nlohmann's parser is not recursive either), at most limits.maxDepth deep.
class Builder {
public:
  explicit Builder(const JsonLimits& limits) : limits_(limits) {}

  bool null() { return value(Json(nullptr)); }
  bool boolean(bool v) { return value(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return value(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return value(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string& /*text*/) { return value(Json(v)); }
  bool string(std::string& v) { return value(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return value(Json::binary(std::move(v))); }

  bool start_object(std::size_t /*unknown*/) { return open(true); }
  bool start_array(std::size_t /*unknown*/) { return open(false); }

  bool key(std::string& k) {
    Frame& f = stack_.back();
    f.pending = f.members.find(k);
    if (f.pending == ObjectBuilder::npos) {
      if (f.members.size() >= limits_.maxMembers) {
        return fail(detail::describe("object", path()) + " has more than " +
                    std::to_string(limits_.maxMembers) + " members");
      }
      f.pending = f.members.add(std::move(k));
    }
    return true;
  }

  bool end_object() { return close(stack_.back().members.build()); }
  bool end_array() { return close(Json(std::move(stack_.back().items))); }

  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& e) {
    return fail(e.what());
  }

  Json result() { return std::move(root_); }
  const std::optional<std::string>& error() const { return error_; }

private:
  struct Frame {
    bool object = true;
    ObjectBuilder members;
    std::size_t pending = ObjectBuilder::npos; // the member whose value comes next
    Json::array_t items;
  };

  bool open(bool object) {
    if (stack_.size() >= limits_.maxDepth) {
      return fail("JSON nested deeper than " + std::to_string(limits_.maxDepth) + " levels (" +
                  detail::describe(object ? "object" : "array", path(true)) + ")");
    }
    stack_.emplace_back();
    stack_.back().object = object;
    return true;
  }

  bool close(Json done) {
    stack_.pop_back();
    return value(std::move(done));
  }

  bool value(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Frame& f = stack_.back();
    if (f.object) {
      f.members.value(f.pending) = std::move(v);
      return true;
    }
    if (f.items.size() >= limits_.maxItems) {
      return fail(detail::describe("array", path()) + " has more than " +
                  std::to_string(limits_.maxItems) + " items");
    }
    f.items.push_back(std::move(v));
    return true;
  }

  // Where the innermost container being built is; with `next`, where its next value goes.
  std::vector<detail::PathSegment> path(bool next = false) const {
    std::vector<detail::PathSegment> out;
    const std::size_t frames = next || stack_.empty() ? stack_.size() : stack_.size() - 1;
    for (std::size_t i = 0; i < frames; ++i) {
      const Frame& f = stack_[i];
      if (f.object) {
        out.push_back({f.members.key(f.pending), 0, true});
      } else {
        out.push_back({{}, f.items.size(), false});
      }
    }
    return out;
  }

  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  const JsonLimits& limits_;
  std::vector<Frame> stack_;
  Json root_;
  std::optional<std::string> error_;
};

} // namespace

nlohmann::ordered_json parseJson(std::string_view text, const JsonLimits& limits) {
  Builder builder(limits);
  if (!Json::sax_parse(text, &builder) || builder.error()) {
    throw JsonError(builder.error().value_or("malformed JSON"));
  }
  return builder.result();
}

} // namespace csiop::api
