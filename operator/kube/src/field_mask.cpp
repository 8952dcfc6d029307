#include <csiop/kube/field_mask.hpp>

#include <cstdint>

namespace csiop::kube {
namespace {

const FieldMask& wholeMask() {
  static const FieldMask whole = FieldMask::whole();
  return whole;
}

// nlohmann's SAX interface, building only what the mask names (as its json_sax_dom_parser
// builds everything). A skipped value is still read to its end, so the text is checked as a
// whole; nothing of it is allocated.
class MaskedBuilder {
public:
  explicit MaskedBuilder(const FieldMask& mask) : rootMask_(&mask) {}

  Json take() { return std::move(root_); }

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(Json::number_integer_t v) { return value(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return value(v); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return value(v); }
  bool string(Json::string_t& v) { return value(v); }
  bool binary(Json::binary_t& v) { return value(Json::binary(std::move(v))); }

  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(Json::string_t& k) {
    if (skipDepth_ > 0) {
      return true;
    }
    nextMask_ = stack_.back().mask->child(k);
    if (nextMask_ == nullptr) {
      skipNext_ = true;
    } else {
      key_ = k;
    }
    return true;
  }

  template <class Exception> bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }

private:
  struct Frame {
    Json* container;
    const FieldMask* mask; // of an object's members (looked up per key), of an array's elements
  };

  // Whether the value starting now is skipped (inside a skipped value, or after a skipped key).
  bool skipping() {
    if (skipDepth_ > 0) {
      return true;
    }
    if (skipNext_) {
      skipNext_ = false;
      return true;
    }
    return false;
  }

  const FieldMask* maskOfValue() const {
    if (stack_.empty()) {
      return rootMask_;
    }
    return stack_.back().container->is_array() ? stack_.back().mask : nextMask_;
  }

  // Where a value goes: the root, the end of the open array, or the open object's key_. The
  // pointers in stack_ stay valid: a container gets no new member while a member is open.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *stack_.back().container;
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    Json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }

  template <class T> bool value(T&& v) {
    if (!skipping()) {
      place(Json(std::forward<T>(v)));
    }
    return true;
  }

  bool open(Json&& empty) {
    if (skipping()) {
      ++skipDepth_;
      return true;
    }
    const FieldMask* mask = maskOfValue();
    stack_.push_back({place(std::move(empty)), mask});
    return true;
  }

  bool close() {
    if (skipDepth_ > 0) {
      --skipDepth_;
    } else {
      stack_.pop_back();
    }
    return true;
  }

  const FieldMask* rootMask_;
  Json root_;
  std::vector<Frame> stack_;
  int skipDepth_ = 0;     // > 0: inside a skipped object or array, this deep
  bool skipNext_ = false; // the value after a key the mask does not name
  const FieldMask* nextMask_ = nullptr;
  std::string key_;
};

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
  MaskedBuilder builder(mask);
  Json::sax_parse(text, &builder);
  return builder.take();
}

Json parseOrDiscard(std::string_view text, const FieldMask* mask) {
  if (mask == nullptr) {
    return Json::parse(text, nullptr, /*allow_exceptions=*/false);
  }
  try {
    return parseMasked(text, *mask);
  } catch (const Json::parse_error&) {
    return Json(Json::value_t::discarded);
  }
}

} // namespace csiop::kube
