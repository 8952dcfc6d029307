// The validating admission decision for DriverDeployments: AdmissionReview
// (admission.k8s.io/v1) in, AdmissionReview out. Pure apart from the cluster
// view it is given (the operator's informer caches) and the reservations it
// keeps, so every rule is unit-tested and fuzzed without a server.
//
// A DriverDeployment is denied when
// - its spec fails validation (the same api/ code as `csi-operator render`),
//   with every error and its field path;
// - an UPDATE changes spec.driverName;
// - another DriverDeployment already uses its driverName, or was admitted with
//   it moments ago and is not in the cache yet (two admissions racing in one
//   process);
// - a CSIDriver of that name exists that this operator does not manage, unless
//   the DriverDeployment carries the annotation csiop.dev/adopt-csidriver: "true";
// - it would put an object into a namespace outside the operator's --driver-namespace list.
// An allowed CREATE or UPDATE of the spec carries what its author must hold themselves
// (authority.hpp), which the Admitter checks with the API server.
// A DELETE is denied while volumes of the driver are in use (PersistentVolumes,
// VolumeAttachments, pods with inline volumes of it), naming a few, unless
// deletionPolicy is Orphan or the annotation csiop.dev/force-delete is "true".
// The operator's finalizer holds the same line when the webhook is bypassed.
// CONNECT is allowed.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <csiop/api/annotations.hpp>
#include <csiop/api/object_kinds.hpp>
#include <csiop/api/types.hpp>
#include <csiop/webhook/authority.hpp>

namespace csiop::webhook {

using api::Json;

// Largest AdmissionReview accepted (object and oldObject of a DriverDeployment,
// each at most the API server's 3 MiB request limit, plus the envelope).
inline constexpr std::size_t kMaxReviewBytes = 7 * 1024 * 1024;
// Deepest nesting of JSON arrays and objects accepted (a DriverDeployment needs
// a dozen levels; the API server allows 10,000).
inline constexpr std::size_t kMaxNestingDepth = 200;

// What the decision reads from the cluster.
struct ClusterView {
  // The DriverDeployments (names) whose spec.driverName is `driverName`.
  std::function<std::vector<std::string>(const std::string& driverName)> driverDeploymentsUsing;
  // The live CSIDriver named `driverName`, or nullptr.
  std::function<const Json*(const std::string& driverName)> csiDriver;
  // What of the driver is in use ("2 PersistentVolumes (a, b)"), "" for nothing; the smoke tests
  // of the DriverDeployment `name`, whose workloads go into `ns`, do not count (its finalizer
  // removes them). May be empty (not set): nothing is known to be in use.
  std::function<std::string(const std::string& driverName, const std::string& name,
                            const std::string& ns)>
      volumesInUse;
  // The kinds spec.objects may hold (the operator's --object-kind flags and the built-in ones).
  std::vector<api::ObjectKind> objectKinds = api::builtinObjectKinds();
  // The namespaces drivers may go into (the operator's --driver-namespace flags); empty: any.
  std::vector<std::string> driverNamespaces = {};
  // The API server's minor version (Kubernetes 1.x), nullopt if unknown: fields it lacks are
  // refused (api::checkServerVersion).
  std::optional<int> serverMinor = std::nullopt;
};

// Driver names admitted recently, so a second DriverDeployment admitted before
// the first reaches the cache is still refused. An entry lasts `ttl`; at most
// `maxEntries` are kept (the oldest goes first). Anyone who reaches the webhook's
// port can send a review, so a reservation is only a claim: the webhook's
// Admitter denies a rival for it only once the API server shows the holder.
class Reservations {
public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  explicit Reservations(Clock now, std::chrono::seconds ttl = std::chrono::seconds(60),
                        std::size_t maxEntries = 4096);

  struct Holder {
    std::string name;
    std::string uid; // as the review said; "" if it had none
  };
  // The DriverDeployment other than `self` holding `driverName`, if any.
  std::optional<Holder> holder(const std::string& driverName, const std::string& self);
  void reserve(const std::string& driverName, const std::string& holder,
               const std::string& uid = {});
  // Drops `driverName`'s reservation if `holder` holds it.
  void release(const std::string& driverName, const std::string& holder);
  std::size_t size() const { return entries_.size(); }

private:
  struct Entry {
    Holder holder;
    std::chrono::steady_clock::time_point expires;
  };
  void expire();
  Clock now_;
  std::chrono::seconds ttl_;
  std::size_t maxEntries_;
  std::map<std::string, Entry> entries_;
};

struct Decision {
  bool allowed = true;
  int code = 200;      // for a denial: 403 (policy) or 422 (invalid)
  std::string reason;  // metav1.StatusReason for a denial: Forbidden, Invalid
  std::string message; // for a denial
  std::vector<std::string> warnings;
  // Denied because of this reservation alone (the rival is not in the cache yet).
  std::optional<Reservations::Holder> rival{};
  // Allowed, a reservation was made for this object (released if the review is denied later).
  bool reserved = false;
  // Allowed: what the requesting user must hold themselves (authority.hpp); empty when the spec
  // did not change.
  std::vector<Requirement> requirements{};
};

// Decides an AdmissionRequest (the `request` of an AdmissionReview).
Decision decide(const Json& request, const ClusterView& cluster, Reservations& reservations);

struct ReviewResult {
  int httpStatus = 200; // 400 when the body is not an AdmissionReview request
  std::string body;     // an AdmissionReview response, or a plain-text error
  std::string contentType = "application/json";
  std::string outcome = "rejected"; // allowed, denied, or rejected (not an AdmissionReview)
};

// The deepest nesting of JSON arrays and objects in `text` (strings skipped);
// stops counting once it exceeds `limit`. Deep input is refused before it is
// parsed, since copying JSON recurses once per level.
std::size_t nestingDepth(std::string_view text, std::size_t limit);

// The AdmissionReview `body` holds, or the answer for a body that is not one (400, 413).
// Never throws.
std::variant<Json, ReviewResult> readReview(std::string_view body);

// Decides the `request` of a review read by readReview; a malformed one gets a 400 denial.
// Never throws.
Decision decideSafely(const Json& request, const ClusterView& cluster, Reservations& reservations);

// The AdmissionReview response to `request` (echoing its uid) for `decision`.
ReviewResult answer(const Json& request, const Decision& decision);

// The whole exchange for what needs no API server: parses `body`, decides, and writes the
// AdmissionReview response echoing the request's uid (the Admitter adds what needs the API
// server: the rival's verification and the author's permissions). Never throws for any input.
ReviewResult review(std::string_view body, const ClusterView& cluster, Reservations& reservations);

} // namespace csiop::webhook
