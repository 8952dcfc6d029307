// What the AdmissionReview fuzzer and the corpus replay test share: a fixed
// cluster and the invariants webhook::review must keep for ANY input.
//
// The cluster: DriverDeployment "existing" uses driver kHeldDriver; CSIDriver
// kForeignDriver exists without csi-operator's owner label, kManagedDriver with
// it; DriverDeployment "racing" was admitted with kClaimedDriver moments ago
// (a reservation); volumes of kInUseDriver are in use. The clock never moves,
// so nothing expires.
//
// Each input is reviewed twice on a fresh Fixture; the second answer must equal
// the first (the API server retries a review, and a reservation made by the
// first one is held by the same object).
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <csiop/api/json_parse.hpp>
#include <csiop/api/types.hpp>
#include <csiop/webhook/admission.hpp>

namespace csiop::webhook::fuzz {

inline constexpr const char* kHeldDriver = "taken.csi.example.com";
inline constexpr const char* kHeldBy = "existing";
inline constexpr const char* kForeignDriver = "foreign.csi.example.com";
inline constexpr const char* kManagedDriver = "managed.csi.example.com";
inline constexpr const char* kClaimedDriver = "claimed.csi.example.com";
inline constexpr const char* kClaimedBy = "racing";
inline constexpr const char* kInUseDriver = "inuse.csi.example.com";

inline const Json& foreignCsiDriver() {
  static const Json driver = {{"apiVersion", "storage.k8s.io/v1"},
                              {"kind", "CSIDriver"},
                              {"metadata", {{"name", kForeignDriver}}},
                              {"spec", {{"attachRequired", false}}}};
  return driver;
}

inline const Json& managedCsiDriver() {
  static const Json driver = {
      {"apiVersion", "storage.k8s.io/v1"},
      {"kind", "CSIDriver"},
      {"metadata",
       {{"name", kManagedDriver}, {"labels", {{"csiop.dev/driverdeployment", "managed"}}}}},
      {"spec", {{"attachRequired", false}}}};
  return driver;
}

class Fixture {
public:
  Fixture() : reservations_([] { return fixedNow(); }) {
    reservations_.reserve(kClaimedDriver, kClaimedBy);
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  ReviewResult review(std::string_view body) { return webhook::review(body, view_, reservations_); }

private:
  static std::chrono::steady_clock::time_point fixedNow() {
    return std::chrono::steady_clock::time_point{} + std::chrono::hours(1000);
  }

  ClusterView view_{[](const std::string& driverName) {
                      return driverName == kHeldDriver ? std::vector<std::string>{kHeldBy}
                                                       : std::vector<std::string>{};
                    },
                    [](const std::string& driverName) -> const Json* {
                      if (driverName == kForeignDriver) {
                        return &foreignCsiDriver();
                      }
                      if (driverName == kManagedDriver) {
                        return &managedCsiDriver();
                      }
                      return nullptr;
                    },
                    [](const std::string& driverName, const std::string&, const std::string&) {
                      return driverName == kInUseDriver ? std::string("1 PersistentVolume (pv-1)")
                                                        : std::string();
                    }};
  Reservations reservations_;
};

namespace detail {

inline const Json& at(const Json& object, const char* key) {
  static const Json kNull;
  if (!object.is_object()) {
    return kNull;
  }
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

inline std::string text(const Json& value) {
  return value.is_string() ? value.get<std::string>() : std::string();
}

inline bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The invariants of one answer; "" when they hold, else the first broken one.
inline std::string checkAnswer(std::string_view input, const ReviewResult& result) {
  // Whether the input is an AdmissionReview envelope, decided independently of
  // the handler: then (and only then) the answer is a 200 AdmissionReview.
  Json in;
  bool envelope = false;
  if (input.size() <= kMaxReviewBytes &&
      nestingDepth(input, kMaxNestingDepth) <= kMaxNestingDepth) {
    try {
      in = api::parseJson(input); // as the webhook reads a body: within the API's limits
    } catch (const api::JsonError&) {
      in = Json(Json::value_t::discarded);
    }
    const Json& uid = at(at(in, "request"), "uid");
    envelope = !in.is_discarded() && in.is_object() &&
               text(at(in, "apiVersion")) == "admission.k8s.io/v1" &&
               text(at(in, "kind")) == "AdmissionReview" && at(in, "request").is_object() &&
               uid.is_string() && !uid.get<std::string>().empty();
  }

  if (result.httpStatus != 200) {
    if (envelope) {
      return "a well-formed AdmissionReview got HTTP " + std::to_string(result.httpStatus);
    }
    const int expected = input.size() > kMaxReviewBytes ? 413 : 400;
    if (result.httpStatus != expected) {
      return "HTTP " + std::to_string(result.httpStatus) + " where " + std::to_string(expected) +
             " was due";
    }
    if (!startsWith(result.contentType, "text/plain")) {
      return "an error answer of type \"" + result.contentType + "\"";
    }
    if (result.body.empty() || result.body.back() != '\n') {
      return "an error answer without a message line";
    }
    return {};
  }

  if (!envelope) {
    return "HTTP 200 for something that is not a well-formed AdmissionReview";
  }
  if (result.contentType != "application/json") {
    return "HTTP 200 of type \"" + result.contentType + "\"";
  }
  const Json out = Json::parse(result.body, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded() || !out.is_object()) {
    return "the 200 body is not a JSON object";
  }
  if (out.size() != 3 || text(at(out, "apiVersion")) != "admission.k8s.io/v1" ||
      text(at(out, "kind")) != "AdmissionReview") {
    return "the 200 body is not just an admission.k8s.io/v1 AdmissionReview";
  }
  const Json& response = at(out, "response");
  if (!response.is_object()) {
    return "the AdmissionReview has no response";
  }
  const Json& request = at(in, "request");
  if (at(response, "uid") != at(request, "uid")) {
    return "response.uid " + at(response, "uid").dump() + " is not the request's " +
           at(request, "uid").dump();
  }
  const Json& allowedField = at(response, "allowed");
  if (!allowedField.is_boolean()) {
    return "response.allowed is not a boolean";
  }
  const bool allowed = allowedField.get<bool>();
  const Json& status = at(response, "status");
  if (allowed && !status.is_null()) {
    return "an allowed response carries a status";
  }
  int code = 200;
  if (!allowed) {
    const Json& codeField = at(status, "code");
    const std::string reason = text(at(status, "reason"));
    if (!codeField.is_number_integer()) {
      return "a denial without an integer status.code";
    }
    code = codeField.get<int>();
    const bool consistent = (code == 400 && reason == "BadRequest") ||
                            (code == 403 && reason == "Forbidden") ||
                            (code == 422 && reason == "Invalid");
    if (!consistent) {
      return "a denial with status.code " + std::to_string(code) + " and reason \"" + reason + "\"";
    }
    if (text(at(status, "message")).empty()) {
      return "a denial without a status.message";
    }
  }
  const Json& warnings = at(response, "warnings");
  if (!warnings.is_null()) {
    if (!warnings.is_array() || warnings.empty()) {
      return "response.warnings is not a non-empty array";
    }
    for (const Json& w : warnings) {
      if (!w.is_string() || w.get<std::string>().empty()) {
        return "response.warnings holds " + w.dump();
      }
    }
  }

  // The policy, as far as it can be told from the request alone.
  const Json& kind = at(request, "kind");
  const bool driverDeployment =
      text(at(kind, "group")) == "csiop.dev" && text(at(kind, "kind")) == "DriverDeployment";
  const std::string operation = text(at(request, "operation"));
  if (!driverDeployment) {
    return code == 400 ? "" : "a review of another kind was not refused with 400";
  }
  if (operation == "DELETE") {
    // Denied exactly when it would strand volumes: the driver in use, policy Delete, no
    // force-delete, not already being deleted.
    const Json& old = at(request, "oldObject");
    const Json& spec = at(old, "spec");
    const bool strands =
        text(at(spec, "driverName")) == kInUseDriver &&
        text(at(spec, "deletionPolicy")) != "Orphan" &&
        text(at(at(at(old, "metadata"), "annotations"), api::kForceDeleteAnnotation)) != "true" &&
        at(at(old, "metadata"), "deletionTimestamp").is_null();
    if (strands == allowed) {
      return strands ? "a DELETE stranding volumes was allowed"
                     : "a DELETE stranding nothing was denied";
    }
    return {};
  }
  if (operation == "CONNECT") {
    return allowed ? "" : operation + " of a DriverDeployment was denied";
  }
  if (operation != "CREATE" && operation != "UPDATE") {
    return code == 400 ? "" : "operation \"" + operation + "\" was not refused with 400";
  }
  if (!allowed) {
    return {};
  }
  const Json& object = at(request, "object");
  if (!object.is_object()) {
    return "a " + operation + " without an object was allowed";
  }
  const std::string name = text(at(at(object, "metadata"), "name"));
  const Json& driverField = at(at(object, "spec"), "driverName");
  if (!driverField.is_string()) {
    return "a DriverDeployment without a string spec.driverName was allowed";
  }
  const std::string driverName = driverField.get<std::string>();
  if (operation == "UPDATE" &&
      !at(at(at(request, "oldObject"), "metadata"), "deletionTimestamp").is_null()) {
    return {}; // being deleted, it claims no driver name
  }
  if (driverName == kHeldDriver && name != kHeldBy) {
    return "a second DriverDeployment for " + driverName + " was allowed";
  }
  if (driverName == kClaimedDriver && name != kClaimedBy) {
    return "a DriverDeployment racing for " + driverName + " was allowed";
  }
  if (driverName == kForeignDriver) {
    const std::string adopt =
        text(at(at(at(object, "metadata"), "annotations"), api::kAdoptAnnotation));
    if (adopt != "true") {
      return "a DriverDeployment taking over the foreign CSIDriver without the annotation was "
             "allowed";
    }
    if (warnings.is_null()) {
      return "adopting a foreign CSIDriver gave no warning";
    }
  }
  if (operation == "UPDATE") {
    const std::string before = text(at(at(at(request, "oldObject"), "spec"), "driverName"));
    if (!before.empty() && before != driverName) {
      return "an UPDATE changing spec.driverName was allowed";
    }
  }
  return {};
}

} // namespace detail

// Reviews `input` twice on a fresh fixture. Returns "" when every invariant
// holds, else what broke. Reports an exception escaping review() as broken.
// `first` (optional) receives the first answer.
inline std::string check(std::string_view input, ReviewResult* first = nullptr) {
  Fixture fixture;
  ReviewResult one;
  ReviewResult two;
  try {
    one = fixture.review(input);
  } catch (const std::exception& e) {
    return std::string("review threw: ") + e.what();
  } catch (...) {
    return "review threw a non-exception";
  }
  if (std::string broken = detail::checkAnswer(input, one); !broken.empty()) {
    return broken;
  }
  try {
    two = fixture.review(input);
  } catch (const std::exception& e) {
    return std::string("review threw the second time: ") + e.what();
  }
  if (two.httpStatus != one.httpStatus || two.contentType != one.contentType ||
      two.body != one.body) {
    return "the same review answered differently the second time:\n" + one.body + "\n" + two.body;
  }
  if (first != nullptr) {
    *first = std::move(one);
  }
  return {};
}

} // namespace csiop::webhook::fuzz
