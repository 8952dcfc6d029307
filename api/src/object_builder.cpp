#include <csiop/api/object_builder.hpp>

#include <algorithm>
#include <functional>
#include <utility>

namespace csiop::api {
namespace {

// Below this many members a scan of the keys is faster than hashing one; from it on, the index
// makes every look-up constant time.
constexpr std::size_t kIndexedFrom = 32;

std::size_t hashOf(std::string_view key) {
  return std::hash<std::string_view>{}(key);
}

} // namespace

std::size_t ObjectBuilder::find(std::string_view key) const {
  const Json::object_t& m = members();
  if (m.size() < kIndexedFrom) {
    for (std::size_t i = 0; i < m.size(); ++i) {
      if ((m.begin() + i)->first == key) {
        return i;
      }
    }
    return npos;
  }
  const auto [first, last] = index_.equal_range(hashOf(key));
  for (auto it = first; it != last; ++it) {
    if ((m.begin() + it->second)->first == key) {
      return it->second;
    }
  }
  return npos;
}

std::size_t ObjectBuilder::add(std::string key) {
  grow();
  Json::object_t& m = members();
  // The vector's own emplace_back: the key is new, so ordered_map's scan is not needed.
  m.Json::object_t::Container::emplace_back(std::move(key), Json());
  const std::size_t position = m.size() - 1;
  if (m.size() == kIndexedFrom) {
    index_.reserve(2 * kIndexedFrom);
    for (std::size_t i = 0; i < m.size(); ++i) {
      index(i);
    }
  } else if (m.size() > kIndexedFrom) {
    index(position);
  }
  return position;
}

// Where the vector would copy each member (and the whole value under it), a new one of twice the
// room takes the values moved and the keys copied.
void ObjectBuilder::grow() {
  Json::object_t& m = members();
  if (m.size() < m.capacity()) {
    return;
  }
  Json::object_t bigger;
  bigger.reserve(std::max<std::size_t>(4, 2 * m.capacity()));
  for (auto& [k, v] : m) {
    bigger.Json::object_t::Container::emplace_back(k, std::move(v));
  }
  m.Json::object_t::Container::swap(bigger);
}

void ObjectBuilder::index(std::size_t position) {
  index_.emplace(hashOf(key(position)), position);
}

ObjectBuilder::Json ObjectBuilder::build() {
  return std::move(object_);
}

} // namespace csiop::api
