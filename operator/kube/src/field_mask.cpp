#include <csiop/kube/field_mask.hpp>

#include <cstdint>
#include <string>

#include <simdjson.h>

#include <csiop/api/json_parse.hpp>
#include <csiop/api/object_builder.hpp>

namespace csiop::kube {
namespace {

const FieldMask& wholeMask() {
  static const FieldMask whole = FieldMask::whole();
  return whole;
}

// simdjson's DOM parser checks the whole text and indexes it (SIMD, no allocation per value);
// the walk then builds, as nlohmann values, only what the mask names.
class MaskedBuilder {
public:
  Json parse(std::string_view text, const FieldMask& mask) {
    // simdjson reads up to SIMDJSON_PADDING bytes past the end: a copy into a padded buffer
    // kept for the next text (a watch event is a few KiB).
    padded_.assign(text.data(), text.size());
    padded_.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    simdjson::dom::element root;
    Json out;
    if (parser_.parse(padded_.data(), text.size(), false).get(root) == simdjson::SUCCESS) {
      out = build(root, mask);
    } else {
      // JSON simdjson does not take (an integer beyond 64 bits, which nlohmann reads as a
      // double): parsed whole, then cut. Or not JSON: nlohmann's parse error, the callers'
      // contract.
      out = cut(parseWhole(text), mask);
    }
    if (text.size() > kKeptCapacity) {
      release(); // a large list page: do not keep its buffers for every small event after it
    }
    return out;
  }

private:
  static constexpr std::size_t kKeptCapacity = std::size_t{64} << 10;

  // As nlohmann's parser reads it: non-negative integers unsigned.
  static Json build(simdjson::dom::element e, const FieldMask& mask) {
    using simdjson::dom::element_type;
    if (mask.keepsText()) {
      return asText(simdjson::minify(e));
    }
    switch (e.type()) {
    case element_type::OBJECT: {
      const simdjson::dom::object fields(e);
      // Room for every member kept, made first: an ordered_json object is a vector of
      // pair<const string, Json>, which growing copies (the const key makes its move a copy)
      // with every value under it.
      std::size_t kept = 0;
      if (mask.keepsWhole()) {
        kept = fields.size();
      } else {
        for (const simdjson::dom::key_value_pair field : fields) {
          kept += mask.child(field.key) != nullptr ? 1 : 0;
        }
      }
      api::ObjectBuilder out;
      out.reserve(kept);
      for (const simdjson::dom::key_value_pair field : fields) {
        if (const FieldMask* inner = mask.child(field.key)) {
          member(out, field.key) = build(field.value, *inner);
        }
      }
      return out.build();
    }
    case element_type::ARRAY: {
      const simdjson::dom::array items(e);
      Json out = Json::array();
      out.get_ref<Json::array_t&>().reserve(items.size());
      for (const simdjson::dom::element item : items) {
        out.push_back(build(item, mask)); // arrays are transparent
      }
      return out;
    }
    case element_type::INT64: {
      const std::int64_t v = std::int64_t(e);
      return v >= 0 ? Json(static_cast<std::uint64_t>(v)) : Json(v);
    }
    case element_type::UINT64:
      return Json(std::uint64_t(e));
    case element_type::DOUBLE:
      return Json(double(e));
    case element_type::STRING:
      return Json(std::string(std::string_view(e)));
    case element_type::BOOL:
      return Json(bool(e));
    case element_type::NULL_VALUE:
      return Json(nullptr);
    }
    return Json();
  }

  // The value of the member `key` of `object`, which a duplicate key overwrites (the last wins,
  // as in nlohmann's parse): ObjectBuilder, because ordered_json's own insert scans every member
  // (quadratic in an object's members).
  static Json& member(api::ObjectBuilder& object, std::string_view key) {
    const std::size_t at = object.find(key);
    return object.value(at == api::ObjectBuilder::npos ? object.add(std::string(key)) : at);
  }

  static Json parseWhole(std::string_view text) {
    try {
      return api::parseJson(text, api::JsonLimits::none());
    } catch (const api::JsonError&) {
      return Json::parse(text); // throws its parse_error
    }
  }

  static Json asText(const std::string& text) {
    return Json::binary(Json::binary_t::container_type(text.begin(), text.end()));
  }

  // What `mask` names of an object parsed whole.
  static Json cut(Json value, const FieldMask& mask) {
    if (mask.keepsText()) {
      return asText(value.dump());
    }
    if (value.is_array()) {
      for (Json& item : value) {
        item = cut(std::move(item), mask);
      }
    } else if (value.is_object() && !mask.keepsWhole()) {
      api::ObjectBuilder out;
      for (auto& [key, field] : value.get_ref<Json::object_t&>()) {
        if (const FieldMask* inner = mask.child(key)) {
          member(out, key) = cut(std::move(field), *inner);
        }
      }
      return out.build();
    }
    return value;
  }

  void release() {
    parser_ = simdjson::dom::parser();
    padded_ = std::string();
  }

  simdjson::dom::parser parser_;
  std::string padded_;
};

MaskedBuilder& builder() {
  thread_local MaskedBuilder b;
  return b;
}

} // namespace

FieldMask FieldMask::whole() {
  FieldMask m;
  m.whole_ = true;
  return m;
}

FieldMask FieldMask::within(std::string_view key, const FieldMask& inner,
                            std::initializer_list<std::string_view> siblings) {
  FieldMask m;
  m.children_.emplace_back(std::string(key), inner);
  for (std::string_view s : siblings) {
    m.children_.emplace_back(std::string(s), whole());
  }
  return m;
}

FieldMask& FieldMask::keep(std::initializer_list<std::string_view> path) {
  return keepAt(path, false);
}

FieldMask& FieldMask::keepText(std::initializer_list<std::string_view> path) {
  return keepAt(path, true);
}

FieldMask& FieldMask::keepAt(std::initializer_list<std::string_view> path, bool text) {
  FieldMask* at = this;
  for (std::string_view key : path) {
    if (at->whole_) {
      return *this; // already kept whole
    }
    FieldMask* next = nullptr;
    for (auto& [k, m] : at->children_) {
      if (k == key) {
        next = &m;
        break;
      }
    }
    if (next == nullptr) {
      next = &at->children_.emplace_back(std::string(key), FieldMask()).second;
    }
    at = next;
  }
  at->whole_ = true;
  at->text_ = text;
  at->children_.clear();
  return *this;
}

const FieldMask* FieldMask::child(std::string_view key) const {
  if (whole_) {
    return &wholeMask();
  }
  const FieldMask* any = nullptr;
  for (const auto& [k, m] : children_) {
    if (k == key) {
      return &m;
    }
    if (k == "*") {
      any = &m;
    }
  }
  return any;
}

Json parseMasked(std::string_view text, const FieldMask& mask) {
  return builder().parse(text, mask);
}

Json parseOrDiscard(std::string_view text, const FieldMask* mask) {
  try {
    return parseMasked(text, mask == nullptr ? wholeMask() : *mask);
  } catch (const Json::parse_error&) {
    return Json(Json::value_t::discarded);
  }
}

std::optional<std::string_view> textOf(const Json& value) {
  if (!value.is_binary()) {
    return std::nullopt;
  }
  const auto& bytes = value.get_binary();
  return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

} // namespace csiop::kube
