#include <csiop/driverdeployment/pod_creation.hpp>

#include <csiop/api/json_access.hpp>
#include <csiop/api/rfc3339.hpp>
#include <csiop/driverdeployment/registration_problems.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;
using api::member;
using api::stringField;

// The longest refusal quoted (a webhook's answer can be long).
constexpr std::size_t kMaxRefusal = 480;

std::int64_t number(const Json& object, const char* key) {
  const Json& value = member(object, key);
  return value.is_number_integer() ? value.get<std::int64_t>() : 0;
}

// When the Event last happened: series.lastObservedTime, lastTimestamp, eventTime, or its
// creation.
api::WallTime lastSeen(const Json& event) {
  for (const std::string& text :
       {stringField(member(event, "series"), "lastObservedTime"),
        stringField(event, "lastTimestamp"), stringField(event, "eventTime"),
        stringField(member(event, "metadata"), "creationTimestamp")}) {
    if (const auto time = api::parseRfc3339(text)) {
      return *time;
    }
  }
  return {};
}

// Whether the workload has fewer pods than it wants (those it could not create among them).
bool shortOfPods(const Json& workload, const std::string& kind) {
  const Json& status = member(workload, "status");
  if (kind == "DaemonSet") {
    return number(status, "desiredNumberScheduled") > number(status, "currentNumberScheduled");
  }
  return number(member(workload, "spec"), "replicas") > number(status, "replicas");
}

// The controllers' messages name the pod they tried ("pods \"x-node-7f2kq\" is forbidden"), a new
// name each try for a DaemonSet's: without it the line stays the same from try to try.
std::string withoutPodName(std::string message) {
  const std::string marker = "pods \"";
  const auto start = message.find(marker);
  if (start == std::string::npos) {
    return message;
  }
  const auto end = message.find('"', start + marker.size());
  if (end == std::string::npos) {
    return message;
  }
  message.erase(start + marker.size() - 1, end - (start + marker.size() - 1) + 2);
  return message;
}

// The event recorder's prefix for an Event that aggregates others.
std::string withoutAggregation(std::string message) {
  const std::string prefix = "(combined from similar events): ";
  if (message.starts_with(prefix)) {
    message.erase(0, prefix.size());
  }
  return message;
}

std::string line(const std::string& kind, const Json& workload, const std::string& why) {
  const Json& meta = member(workload, "metadata");
  return kind + " " + stringField(meta, "namespace") + "/" + stringField(meta, "name") +
         " cannot create its pods: " +
         printableLine(withoutPodName(withoutAggregation(why)), kMaxRefusal);
}

} // namespace

std::string workloadKey(const std::string& kind, const std::string& ns, const std::string& name) {
  return kind + "/" + ns + "/" + name;
}

std::string involvedObjectKey(const Json& event) {
  const Json& involved = member(event, "involvedObject");
  return workloadKey(stringField(involved, "kind"), stringField(involved, "namespace"),
                     stringField(involved, "name"));
}

std::optional<std::string> podCreationFailure(const Json& workload,
                                              const std::vector<const Json*>& events) {
  const std::string kind = stringField(workload, "kind");
  if (kind == "Deployment") {
    const Json& conditions = member(member(workload, "status"), "conditions");
    if (conditions.is_array()) {
      for (const Json& c : conditions) {
        if (stringField(c, "type") == "ReplicaFailure" && stringField(c, "status") == "True") {
          return line(kind, workload, stringField(c, "message"));
        }
      }
    }
    return std::nullopt;
  }
  if (!shortOfPods(workload, kind)) {
    return std::nullopt;
  }
  const std::string uid = stringField(member(workload, "metadata"), "uid");
  const Json* latest = nullptr;
  for (const Json* event : events) {
    const std::string involved = stringField(member(*event, "involvedObject"), "uid");
    if (!involved.empty() && involved != uid) {
      continue; // an earlier workload of the same name
    }
    if (latest == nullptr || lastSeen(*event) > lastSeen(*latest)) {
      latest = event;
    }
  }
  if (latest == nullptr) {
    return std::nullopt;
  }
  return line(kind, workload, stringField(*latest, "message"));
}

} // namespace csiop::driverdeployment
