// An ordered_json object built member by member in linear time, for the parsers (JSON, YAML,
// the watch's masked parse).
//
// ordered_json's own insert (operator[], emplace) scans every member for the key, so filling an
// object is quadratic in its members (100,000 keys: 9 s); and growing it copies every value under
// it, because its members are pair<const string, Json>, whose move copies. Here members are
// appended, keys are looked up through a hash index once the object is large (a scan is faster
// while it is small), and growing moves the values (only the keys are copied).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace csiop::api {

class ObjectBuilder {
public:
  using Json = nlohmann::ordered_json;
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  ObjectBuilder() : object_(Json::object()) {}

  // Room for `members` (the number a caller knows in advance), so that none moves.
  void reserve(std::size_t members) { this->members().reserve(members); }
  [[nodiscard]] std::size_t size() const { return members().size(); }

  // The position of the member named `key`, or npos.
  [[nodiscard]] std::size_t find(std::string_view key) const;
  // Appends a member named `key` (find() has said there is none), null until assigned; returns
  // its position.
  std::size_t add(std::string key);

  // References valid until the next add().
  Json& value(std::size_t position) { return (members().begin() + position)->second; }
  [[nodiscard]] const std::string& key(std::size_t position) const {
    return (members().begin() + position)->first;
  }

  // The object, its members in the order they were added. The builder is spent.
  Json build();

private:
  Json::object_t& members() { return object_.get_ref<Json::object_t&>(); }
  [[nodiscard]] const Json::object_t& members() const {
    return object_.get_ref<const Json::object_t&>();
  }
  void grow();
  void index(std::size_t position);

  Json object_;
  // Hash of a key -> its position, once the object is large.
  std::unordered_multimap<std::size_t, std::size_t> index_;
};

} // namespace csiop::api
