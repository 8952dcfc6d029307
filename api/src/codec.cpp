#include <csiop/api/codec.hpp>

#include <csiop/api/json_access.hpp>

#include <concepts>
#include <limits>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

namespace csiop::api {
namespace {

template <class T>
concept Struct = requires(T& t) {
  t.fields([](const char*, auto&) {});
};

template <class T> struct IsOptional : std::false_type {};
template <class T> struct IsOptional<std::optional<T>> : std::true_type {};

template <class T> struct IsVector : std::false_type {};
template <class T> struct IsVector<std::vector<T>> : std::true_type {};

std::string join(const std::string& path, const char* name) {
  return path.empty() ? std::string(name) : path + "." + name;
}

const char* typeName(const Json& j) {
  switch (j.type()) {
  case Json::value_t::object:
    return "object";
  case Json::value_t::array:
    return "array";
  case Json::value_t::string:
    return "string";
  case Json::value_t::boolean:
    return "boolean";
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    return "integer";
  case Json::value_t::number_float:
    return "number";
  default:
    return "null";
  }
}

class Decoder {
public:
  explicit Decoder(Decoded& out) : out_(out) {}

  // Returns false (and records an error) when the JSON value has the wrong type.
  template <class T> bool decode(const Json& j, T& value, const std::string& path) {
    if constexpr (IsOptional<T>::value) {
      if (j.is_null()) {
        value.reset();
        return true;
      }
      typename T::value_type inner{};
      if (!decode(j, inner, path)) {
        return false;
      }
      value = std::move(inner);
      return true;
    } else if constexpr (std::is_same_v<T, Json>) {
      value = j;
      return true;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!j.is_boolean()) {
        return typeError(j, path, "boolean");
      }
      value = j.get<bool>();
      return true;
    } else if constexpr (std::is_integral_v<T>) {
      return decodeInteger(j, value, path);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!j.is_string()) {
        return typeError(j, path, "string");
      }
      value = j.get<std::string>();
      return true;
    } else if constexpr (std::is_same_v<T, StringMap>) {
      if (!j.is_object()) {
        return typeError(j, path, "object");
      }
      value.clear();
      bool ok = true;
      for (const auto& [k, v] : j.items()) {
        if (!v.is_string()) {
          ok = typeError(v, path + "." + k, "string") && ok;
          continue;
        }
        value[k] = v.template get<std::string>();
      }
      return ok;
    } else if constexpr (IsVector<T>::value) {
      if (!j.is_array()) {
        return typeError(j, path, "array");
      }
      value.clear();
      bool ok = true;
      for (std::size_t i = 0; i < j.size(); ++i) {
        typename T::value_type item{};
        if (decode(j[i], item, path + "[" + std::to_string(i) + "]")) {
          value.push_back(std::move(item));
        } else {
          ok = false;
        }
      }
      return ok;
    } else {
      static_assert(Struct<T>, "no codec for this type");
      return decodeStruct(j, value, path);
    }
  }

private:
  template <class T> bool decodeInteger(const Json& j, T& value, const std::string& path) {
    if (!j.is_number_integer()) {
      return typeError(j, path, "integer");
    }
    if (j.is_number_unsigned()) {
      const auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        return rangeError(j, path);
      }
      value = static_cast<T>(u);
      return true;
    }
    const auto s = j.get<std::int64_t>();
    if (s < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        s > static_cast<std::int64_t>(std::numeric_limits<T>::max())) {
      return rangeError(j, path);
    }
    value = static_cast<T>(s);
    return true;
  }

  template <class T> bool decodeStruct(const Json& j, T& value, const std::string& path) {
    if (!j.is_object()) {
      return typeError(j, path, "object");
    }
    std::set<std::string, std::less<>> known;
    value.fields([&](const char* name, auto&) { known.insert(name); });
    for (const auto& [k, v] : j.items()) {
      if (!known.contains(k)) {
        out_.unknownFields.push_back(path.empty() ? k : path + "." + k);
      }
    }
    bool ok = true;
    value.fields([&](const char* name, auto& member) {
      const auto it = j.find(name);
      if (it != j.end()) {
        ok = decode(*it, member, join(path, name)) && ok;
      }
    });
    return ok;
  }

  bool typeError(const Json& j, const std::string& path, const char* want) {
    out_.errors.push_back(
        invalid(path, j, path + " in body must be of type " + want + ": \"" + typeName(j) + "\""));
    return false;
  }

  bool rangeError(const Json& j, const std::string& path) {
    out_.errors.push_back(invalid(path, j, "out of range"));
    return false;
  }

  Decoded& out_;
};

template <class T> Json encodeValue(const T& value);

template <class T> bool present(const T& value) {
  if constexpr (IsOptional<T>::value) {
    return value.has_value();
  } else if constexpr (std::is_same_v<T, Json>) {
    return !value.is_null();
  } else {
    return true;
  }
}

template <class T> Json encodeValue(const T& value) {
  if constexpr (IsOptional<T>::value) {
    return encodeValue(*value);
  } else if constexpr (std::is_same_v<T, Json> || std::is_same_v<T, bool> ||
                       std::is_integral_v<T> || std::is_same_v<T, std::string>) {
    return Json(value);
  } else if constexpr (std::is_same_v<T, StringMap>) {
    Json out = Json::object();
    for (const auto& [k, v] : value) {
      out[k] = v;
    }
    return out;
  } else if constexpr (IsVector<T>::value) {
    Json out = Json::array();
    for (const auto& item : value) {
      out.push_back(encodeValue(item));
    }
    return out;
  } else {
    static_assert(Struct<T>, "no codec for this type");
    Json out = Json::object();
    // fields() is non-const by design (one declaration serves both directions).
    auto& mutableValue = const_cast<T&>(value);
    mutableValue.fields([&](const char* name, auto& member) {
      if (present(member)) {
        out[name] = encodeValue(member);
      }
    });
    return out;
  }
}

template <class T> Json treeOf() {
  if constexpr (IsOptional<T>::value) {
    return treeOf<typename T::value_type>();
  } else if constexpr (std::is_same_v<T, Json>) {
    return "json";
  } else if constexpr (std::is_same_v<T, bool>) {
    return "boolean";
  } else if constexpr (std::is_integral_v<T>) {
    return "integer";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else if constexpr (std::is_same_v<T, StringMap>) {
    return "map";
  } else if constexpr (IsVector<T>::value) {
    if constexpr (Struct<typename T::value_type>) {
      return Json{{"[]", treeOf<typename T::value_type>()}};
    } else {
      return "list";
    }
  } else {
    Json out = Json::object();
    T sample{};
    sample.fields([&](const char* name, auto& member) {
      out[name] = treeOf<std::remove_cvref_t<decltype(member)>>();
    });
    return out;
  }
}

} // namespace

Decoded decode(const Json& json) {
  Decoded out;
  Decoder(out).decode(json, out.object, "");
  if (!out.object.metadata.is_object()) {
    if (!out.object.metadata.is_null()) {
      out.errors.push_back(
          invalid("metadata", out.object.metadata, "metadata in body must be of type object"));
    }
    out.object.metadata = Json::object();
  }
  return out;
}

Json encode(const DriverDeployment& object) {
  Json out = encodeValue(object);
  if (!out.contains("spec")) {
    out["spec"] = Json::object();
  }
  return out;
}

Json encode(const DriverDeploymentStatus& status) {
  return encodeValue(status);
}

Json fieldTree() {
  return treeOf<DriverDeployment>();
}

std::string DriverDeployment::name() const {
  return stringField(metadata, "name");
}

std::string DriverDeployment::uid() const {
  return stringField(metadata, "uid");
}

std::int64_t DriverDeployment::generation() const {
  const auto it = metadata.find("generation");
  return it != metadata.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

} // namespace csiop::api
