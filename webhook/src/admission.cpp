#include <csiop/webhook/admission.hpp>

#include <algorithm>

#include <csiop/api/annotations.hpp>
#include <csiop/api/codec.hpp>
#include <csiop/api/defaults.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/json_parse.hpp>
#include <csiop/api/load.hpp>
#include <csiop/api/validation.hpp>
#include <csiop/render/check.hpp>
#include <csiop/render/render.hpp>

namespace csiop::webhook {
namespace {

using api::member;
using api::metadataField;
using api::stringField;

Decision deny(int code, std::string reason, std::string message) {
  return Decision{false, code, std::move(reason), std::move(message), {}};
}

// The loader prefixes each line with `DriverDeployment "name": `; the response names the
// object once.
std::string withoutObjectPrefix(const std::string& line) {
  const std::string prefix = "DriverDeployment \"";
  if (line.rfind(prefix, 0) == 0) {
    if (const auto end = line.find("\": "); end != std::string::npos) {
      return line.substr(end + 3);
    }
  }
  return line;
}

std::string label(const Json& object, const char* key) {
  return stringField(member(member(object, "metadata"), "labels"), key);
}

Decision decideDelete(const Json& request, const ClusterView& cluster) {
  const Json& old = member(request, "oldObject");
  const Json& spec = member(old, "spec");
  const std::string driverName = stringField(spec, "driverName");
  if (!old.is_object() || driverName.empty() ||
      !member(member(old, "metadata"), "deletionTimestamp").is_null()) {
    return Decision{}; // nothing to judge, or already being deleted: the finalizer decides
  }
  Decision allowed;
  if (api::isTrue(spec, "paused")) {
    allowed.warnings.push_back("spec.paused is true: the deletion waits until it is false");
  }
  if (stringField(spec, "deletionPolicy", "Delete") == "Orphan" || !cluster.volumesInUse) {
    return allowed;
  }
  const std::string name = metadataField(old, "name");
  const std::string ns = api::driverNamespaceOf(name, stringField(spec, "namespace"));
  const std::string inUse = cluster.volumesInUse(driverName, name, ns);
  if (inUse.empty()) {
    return allowed;
  }
  const api::Flag force = api::flagAnnotation(old, api::kForceDeleteAnnotation);
  if (force == api::Flag::Yes) {
    allowed.warnings.push_back("deleting driver " + driverName + " although " + inUse +
                               " still use it (" + api::kForceDeleteAnnotation + "=true)");
    return allowed;
  }
  std::string message = "DriverDeployment \"" + name + "\" is in use: " + inUse + " use driver " +
                        driverName +
                        ", and would be stranded without it (nothing could detach, unmount or "
                        "delete them). Delete them first, set spec.deletionPolicy: Orphan to "
                        "leave the driver running unmanaged, or annotate " +
                        api::kForceDeleteAnnotation + "=true to delete it anyway";
  if (force == api::Flag::Invalid) {
    message += " (" + std::string(api::kForceDeleteAnnotation) + " is \"" +
               api::annotationValue(old, api::kForceDeleteAnnotation) +
               "\", which is neither \"true\" nor \"false\")";
  }
  return deny(403, "Forbidden", message);
}

// Whether what the operator makes of the object may differ from before: a CREATE, or an UPDATE
// of the spec or the annotations (the operator's own updates, its finalizer, change neither).
bool specChanged(const Json& request) {
  if (stringField(request, "operation") != "UPDATE") {
    return true;
  }
  const Json& object = member(request, "object");
  const Json& old = member(request, "oldObject");
  return member(object, "spec") != member(old, "spec") ||
         member(member(object, "metadata"), "annotations") !=
             member(member(old, "metadata"), "annotations");
}

// Unknown fields in the embedded Kubernetes objects (the API server keeps them in a
// DriverDeployment, where the CRD preserves them) answered the way the writer asked for its own
// fields: fieldValidation Strict (kubectl's default) refuses them, Ignore says nothing, and Warn
// (the API server's default) warns.
api::UnknownFields unknownFieldsAsAsked(const Json& request) {
  const std::string asked = stringField(member(request, "options"), "fieldValidation");
  if (asked == "Strict") {
    return api::UnknownFields::Strict;
  }
  return asked == "Ignore" ? api::UnknownFields::Ignore : api::UnknownFields::Warn;
}

// "" when every namespaced object of `rendered` is in one of `allowed` (or `allowed` is empty),
// else the denial's message naming the first that is not.
std::string outsideDriverNamespaces(const std::vector<Json>& rendered,
                                    const std::vector<std::string>& allowed) {
  if (allowed.empty()) {
    return {};
  }
  for (const Json& object : rendered) {
    const std::string ns = metadataField(object, "namespace");
    if (!ns.empty() && std::find(allowed.begin(), allowed.end(), ns) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) {
        list += (list.empty() ? "" : ", ") + a;
      }
      return "spec.namespace: Forbidden: this DriverDeployment would put " +
             stringField(object, "kind") + " " + metadataField(object, "name") +
             " into namespace " + ns + "; this operator deploys drivers only into " + list +
             " (its --driver-namespace flags, the chart's rbac.driverNamespaces)";
    }
  }
  return {};
}

} // namespace

Reservations::Reservations(Clock now, std::chrono::seconds ttl, std::size_t maxEntries)
    : now_(std::move(now)), ttl_(ttl), maxEntries_(std::max<std::size_t>(maxEntries, 1)) {}

void Reservations::expire() {
  const auto now = now_();
  std::erase_if(entries_, [&](const auto& e) { return e.second.expires <= now; });
}

std::optional<Reservations::Holder> Reservations::holder(const std::string& driverName,
                                                         const std::string& self) {
  expire();
  const auto it = entries_.find(driverName);
  if (it == entries_.end() || it->second.holder.name == self) {
    return std::nullopt;
  }
  return it->second.holder;
}

void Reservations::reserve(const std::string& driverName, const std::string& holder,
                           const std::string& uid) {
  expire();
  if (!entries_.contains(driverName) && entries_.size() >= maxEntries_) {
    // Full (a flood of reviews for made-up names): the one closest to its end goes.
    entries_.erase(std::min_element(entries_.begin(), entries_.end(), [](auto& a, auto& b) {
      return a.second.expires < b.second.expires;
    }));
  }
  entries_.insert_or_assign(driverName, Entry{Holder{holder, uid}, now_() + ttl_});
}

void Reservations::release(const std::string& driverName, const std::string& holder) {
  if (const auto it = entries_.find(driverName);
      it != entries_.end() && it->second.holder.name == holder) {
    entries_.erase(it);
  }
}

Decision decide(const Json& request, const ClusterView& cluster, Reservations& reservations) {
  const Json& kind = member(request, "kind");
  const std::string group = stringField(kind, "group");
  const std::string kindName = stringField(kind, "kind");
  if (group != "csiop.dev" || kindName != "DriverDeployment") {
    return deny(400, "BadRequest",
                "this webhook validates csiop.dev DriverDeployments, not " +
                    (group.empty() ? "" : group + "/") + (kindName.empty() ? "?" : kindName));
  }
  const std::string operation = stringField(request, "operation");
  if (operation == "DELETE") {
    return decideDelete(request, cluster);
  }
  if (operation == "CONNECT") {
    return Decision{};
  }
  if (operation != "CREATE" && operation != "UPDATE") {
    return deny(400, "BadRequest", "unsupported operation \"" + operation + "\"");
  }
  const Json& object = member(request, "object");
  if (!object.is_object()) {
    return deny(400, "BadRequest", "the AdmissionReview request has no object");
  }

  Decision allowed;
  const bool changed = specChanged(request);
  const api::Loaded loaded = api::loadDriverDeployment(
      object, changed ? unknownFieldsAsAsked(request) : api::UnknownFields::Ignore,
      render::admissionCheck(cluster.objectKinds, cluster.serverMinor));
  // The spec's warnings go to whoever changes the spec; a write that leaves it as it was (the
  // operator's finalizer, a label) would only repeat them.
  if (changed) {
    for (const auto& w : loaded.warnings) {
      allowed.warnings.push_back(withoutObjectPrefix(w));
    }
  }
  const std::string name = metadataField(object, "name");
  if (!loaded.ok()) {
    std::string message = "DriverDeployment \"" + name + "\" is invalid: ";
    for (std::size_t i = 0; i < loaded.errors.size(); ++i) {
      message += (i == 0 ? "" : "; ") + withoutObjectPrefix(loaded.errors[i]);
    }
    return deny(422, "Invalid", message);
  }
  const std::string driverName = loaded.objects.front().spec.driverName;
  if (api::flagAnnotation(object, api::kForceDeleteAnnotation) == api::Flag::Invalid) {
    return deny(422, "Invalid",
                "DriverDeployment \"" + name + "\" is invalid: metadata.annotations[" +
                    api::kForceDeleteAnnotation + "]: Unsupported value: \"" +
                    api::annotationValue(object, api::kForceDeleteAnnotation) +
                    "\": supported values: \"true\", \"false\"");
  }
  if (loaded.objects.front().spec.paused.value_or(false) &&
      !member(member(object, "metadata"), "deletionTimestamp").is_null()) {
    allowed.warnings.push_back(
        "spec.paused is true on a DriverDeployment being deleted: its objects are kept, and the "
        "deletion waits, until spec.paused is false");
  }

  if (operation == "UPDATE") {
    // The rules about changes (driverName is immutable) are the API's: the old object as the
    // API server holds it, decoded as far as it decodes (it was admitted once).
    const Json& oldObject = member(request, "oldObject");
    if (oldObject.is_object()) {
      const api::Validation change =
          api::validateUpdate(api::decode(oldObject).object, loaded.objects.front());
      if (!change.ok()) {
        std::string message = "DriverDeployment \"" + name + "\" is invalid: ";
        for (std::size_t i = 0; i < change.errors.size(); ++i) {
          message += (i == 0 ? "" : "; ") + change.errors[i].message();
        }
        return deny(422, "Invalid", message);
      }
    }
    // Being deleted, it claims nothing any more: whose the driver name is does not matter,
    // and refusing would block the operator's finalizer removal (after an Orphan deletion the
    // CSIDriver is no longer managed, so it would look foreign).
    if (!member(member(member(request, "oldObject"), "metadata"), "deletionTimestamp").is_null()) {
      return allowed;
    }
  }

  std::vector<std::string> holders = cluster.driverDeploymentsUsing(driverName);
  std::erase(holders, name);
  std::sort(holders.begin(), holders.end());
  if (!holders.empty()) {
    return deny(403, "Forbidden",
                "spec.driverName: Duplicate value: \"" + driverName +
                    "\": already used by DriverDeployment \"" + holders.front() +
                    "\"; one driver name has one DriverDeployment");
  }
  if (const auto recent = reservations.holder(driverName, name)) {
    Decision denied = deny(403, "Forbidden",
                           "spec.driverName: Duplicate value: \"" + driverName +
                               "\": being claimed by DriverDeployment \"" + recent->name +
                               "\", admitted moments ago");
    denied.rival = recent;
    return denied;
  }
  if (const Json* driver = cluster.csiDriver(driverName);
      driver != nullptr && label(*driver, api::kOwnerLabel).empty()) {
    if (api::annotationValue(object, api::kAdoptAnnotation) != "true") {
      return deny(403, "Forbidden",
                  "spec.driverName: Forbidden: CSIDriver \"" + driverName +
                      "\" already exists and is not managed by csi-operator (installed by hand "
                      "or by another tool); delete it, or annotate this DriverDeployment with " +
                      api::kAdoptAnnotation + "=true to take it over");
    }
    allowed.warnings.push_back(
        "CSIDriver \"" + driverName +
        "\" is not managed by csi-operator; this DriverDeployment adopts it");
  }
  if (specChanged(request)) {
    const std::vector<Json> rendered = render::render(loaded.objects.front());
    if (const std::string outside = outsideDriverNamespaces(rendered, cluster.driverNamespaces);
        !outside.empty()) {
      return deny(403, "Forbidden", outside);
    }
    allowed.requirements = requirements(loaded.objects.front(), rendered, cluster.objectKinds);
  }
  if (!api::isTrue(request, "dryRun")) {
    reservations.reserve(driverName, name, metadataField(object, "uid"));
    allowed.reserved = true;
  }
  return allowed;
}

std::size_t nestingDepth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) {
        return deepest;
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

ReviewResult badRequest(std::string message) {
  // Parse errors quote the input: keep the answer printable ASCII.
  for (char& c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) {
      c = '?';
    }
  }
  return ReviewResult{400, std::move(message) + "\n", "text/plain; charset=utf-8"};
}

} // namespace

std::variant<Json, ReviewResult> readReview(std::string_view body) {
  if (body.size() > kMaxReviewBytes) {
    return ReviewResult{413,
                        "request body of " + std::to_string(body.size()) +
                            " bytes is over the limit of " + std::to_string(kMaxReviewBytes) + "\n",
                        "text/plain; charset=utf-8"};
  }
  if (nestingDepth(body, kMaxNestingDepth) > kMaxNestingDepth) {
    return badRequest("JSON nested deeper than " + std::to_string(kMaxNestingDepth) + " levels");
  }
  Json in;
  try {
    // Linear in the number of keys, and bounded in members and items (json_parse.hpp).
    in = api::parseJson(body);
  } catch (const api::JsonError& e) { // syntax, numbers out of a double's range, limits
    return badRequest(std::string("malformed JSON: ") + e.what());
  }
  if (!in.is_object() || stringField(in, "apiVersion") != "admission.k8s.io/v1" ||
      stringField(in, "kind") != "AdmissionReview") {
    return badRequest("expected an admission.k8s.io/v1 AdmissionReview");
  }
  const Json& request = member(in, "request");
  if (!request.is_object()) {
    return badRequest("the AdmissionReview has no request");
  }
  if (stringField(request, "uid").empty()) {
    return badRequest("the AdmissionReview request has no uid");
  }
  return Json(request);
}

Decision decideSafely(const Json& request, const ClusterView& cluster, Reservations& reservations) {
  try {
    return decide(request, cluster, reservations);
  } catch (const std::exception& e) {
    // A field of an unexpected type in an otherwise well-formed review.
    return deny(400, "BadRequest", std::string("malformed AdmissionReview request: ") + e.what());
  }
}

ReviewResult answer(const Json& request, const Decision& decision) {
  Json response = {{"uid", stringField(request, "uid")}, {"allowed", decision.allowed}};
  if (!decision.allowed) {
    response["status"] = {
        {"code", decision.code}, {"reason", decision.reason}, {"message", decision.message}};
  }
  if (!decision.warnings.empty()) {
    response["warnings"] = decision.warnings;
  }
  const Json out = {{"apiVersion", "admission.k8s.io/v1"},
                    {"kind", "AdmissionReview"},
                    {"response", std::move(response)}};
  return ReviewResult{200, out.dump(-1, ' ', false, Json::error_handler_t::replace),
                      "application/json", decision.allowed ? "allowed" : "denied"};
}

ReviewResult review(std::string_view body, const ClusterView& cluster, Reservations& reservations) {
  auto read = readReview(body);
  if (auto* result = std::get_if<ReviewResult>(&read)) {
    return std::move(*result);
  }
  const Json& request = std::get<Json>(read);
  return answer(request, decideSafely(request, cluster, reservations));
}

} // namespace csiop::webhook
