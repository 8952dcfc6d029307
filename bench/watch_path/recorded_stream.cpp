#include "recorded_stream.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <csiop/api/rfc3339.hpp>

#include "../node_plugin_pod.hpp"

namespace csiop::bench {
namespace {

using api::Json;

// When the first pod was added; each event comes 100 ms after the one before.
const api::WallTime kFirstEvent = *api::parseRfc3339("2026-11-27T02:15:18Z");

std::string at(std::size_t event) {
  return api::formatRfc3339(kFirstEvent + std::chrono::milliseconds(100) * event);
}

std::string formatted(const char* format, std::size_t value) {
  char buffer[128];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// What the kubelet reports of a pod at each of its updates.
enum class Stage {
  Pending,           // scheduled, nothing started (as added)
  Creating,          // containers being created
  Starting,          // running, not ready yet
  Ready,             // every container ready
  ContainerUnready,  // the last container fails its readiness probe
  ContainerCrashed,  // the first container exited; CrashLoopBackOff
  ContainerRestarted // running again, ready
};

// The stage of a pod's update `update` (0: its ADDED event): started, ready, then round and round.
Stage stageOf(std::size_t update) {
  static constexpr Stage kStart[] = {Stage::Pending, Stage::Creating, Stage::Starting,
                                     Stage::Ready};
  static constexpr Stage kRound[] = {Stage::ContainerUnready, Stage::Ready, Stage::ContainerCrashed,
                                     Stage::ContainerRestarted};
  return update < 4 ? kStart[update] : kRound[(update - 4) % 4];
}

class StreamPod {
public:
  StreamPod(const Json& running, std::size_t index) : pod_(running), index_(index) {
    Json& meta = pod_["metadata"];
    meta["name"] = meta["generateName"].get<std::string>() + formatted("%05zx", index + 0x7a2c1);
    meta["uid"] = formatted("0b3e2c57-6a1f-4f3e-9a52-%012zx", index);
    pod_["spec"]["nodeName"] = formatted("kwok-node-%zu", index);
    ip_ = "10.0." + std::to_string(index / 250) + "." + std::to_string(index % 250 + 1);
    for (const Json& c : pod_["spec"]["containers"]) {
      containers_.push_back(c["name"].get<std::string>());
      images_.push_back(c["image"].get<std::string>());
    }
    restarts_.assign(containers_.size(), 0);
    containerStarted_.assign(containers_.size(), std::string());
  }

  // The pod at its next update, event `event` of the stream, with resourceVersion `version`.
  const Json& update(std::size_t event, std::size_t version) {
    const std::string now = at(event);
    Json& meta = pod_["metadata"];
    meta["resourceVersion"] = std::to_string(version);
    if (updates_ == 0) {
      meta["creationTimestamp"] = now;
    }
    meta["managedFields"][1]["time"] = now;
    status(stageOf(updates_), now);
    ++updates_;
    return pod_;
  }

  // The pod marked for deletion at event `event` (its grace period of 30 s running).
  const Json& markDeleted(std::size_t event, std::size_t version) {
    Json& meta = pod_["metadata"];
    meta["deletionTimestamp"] = at(event + 300);
    meta["deletionGracePeriodSeconds"] = 30;
    return withVersion(version);
  }

  // The pod as it is, with resourceVersion `version` (its DELETED event).
  const Json& withVersion(std::size_t version) {
    pod_["metadata"]["resourceVersion"] = std::to_string(version);
    return pod_;
  }

private:
  void status(Stage stage, const std::string& now) {
    if (stage == Stage::Pending) {
      pod_["status"] = {{"phase", "Pending"},
                        {"conditions", Json::array({condition("PodScheduled", true, now)})},
                        {"qosClass", "Burstable"}};
      return;
    }
    Json& status = pod_["status"];
    status["hostIP"] = ip_;
    status["hostIPs"] = Json::array({{{"ip", ip_}}});
    if (stage == Stage::Creating) {
      status["startTime"] = now;
      Json statuses = Json::array();
      for (std::size_t i = 0; i < containers_.size(); ++i) {
        statuses.push_back(
            containerStatus(i, false, {{"waiting", {{"reason", "ContainerCreating"}}}}));
      }
      status["containerStatuses"] = statuses;
      status["conditions"] =
          Json::array({condition("PodReadyToStartContainers", false, now),
                       condition("Initialized", true, now), notReady("Ready", now),
                       notReady("ContainersReady", now), condition("PodScheduled", true, now)});
      return;
    }
    status["phase"] = "Running";
    status["podIP"] = ip_;
    status["podIPs"] = Json::array({{{"ip", ip_}}});
    setCondition("PodReadyToStartContainers", condition("PodReadyToStartContainers", true, now));
    const std::size_t first = 0;
    const std::size_t last = containers_.size() - 1;
    switch (stage) {
    case Stage::Starting:
      for (std::size_t i = 0; i < containers_.size(); ++i) {
        containerStarted_[i] = now;
        running(i, false);
      }
      break;
    case Stage::Ready:
      for (std::size_t i = 0; i < containers_.size(); ++i) {
        running(i, true);
      }
      break;
    case Stage::ContainerUnready:
      running(last, false);
      break;
    case Stage::ContainerCrashed:
      crashed(first, now);
      break;
    case Stage::ContainerRestarted:
      containerStarted_[first] = now;
      running(first, true);
      break;
    default:
      break;
    }
    const bool ready = stage == Stage::Ready || stage == Stage::ContainerRestarted;
    setCondition("Ready", ready ? condition("Ready", true, now) : notReady("Ready", now));
    setCondition("ContainersReady", ready ? condition("ContainersReady", true, now)
                                          : notReady("ContainersReady", now));
  }

  static Json condition(const char* type, bool status, const std::string& now) {
    return {{"type", type},
            {"status", status ? "True" : "False"},
            {"lastProbeTime", nullptr},
            {"lastTransitionTime", now}};
  }

  // A readiness condition False, naming the containers not ready.
  Json notReady(const char* type, const std::string& now) const {
    Json c = condition(type, false, now);
    c["reason"] = "ContainersNotReady";
    std::string names;
    for (const Json& s : pod_["status"]["containerStatuses"]) {
      if (s["ready"] == false) {
        names += (names.empty() ? "" : " ") + s["name"].get<std::string>();
      }
    }
    c["message"] = "containers with unready status: [" + names + "]";
    return c;
  }

  void setCondition(const std::string& type, Json value) {
    for (Json& c : pod_["status"]["conditions"]) {
      if (c["type"] == type) {
        if (c["status"] != value["status"]) { // the time of a transition only
          c = std::move(value);
        }
        return;
      }
    }
  }

  Json containerStatus(std::size_t i, bool ready, Json state) const {
    Json s = {{"name", containers_[i]},
              {"image", images_[i]},
              {"imageID", images_[i] + "@sha256:" + std::string(64, 'c')},
              {"ready", ready},
              {"restartCount", restarts_[i]},
              {"started", state.contains("running")},
              {"state", std::move(state)}};
    return s;
  }

  void running(std::size_t i, bool ready) {
    Json& s = pod_["status"]["containerStatuses"][i];
    const Json lastState = s.value("lastState", Json::object());
    s = containerStatus(i, ready, {{"running", {{"startedAt", containerStarted_[i]}}}});
    s["lastState"] = lastState;
    s["containerID"] = formatted("containerd://%064zx", (index_ + 1) << 16 | i << 8 | restarts_[i]);
  }

  void crashed(std::size_t i, const std::string& now) {
    Json& s = pod_["status"]["containerStatuses"][i];
    ++restarts_[i];
    const Json terminated = {{"exitCode", 1},
                             {"reason", "Error"},
                             {"startedAt", containerStarted_[i]},
                             {"finishedAt", now},
                             {"containerID", s.value("containerID", "")}};
    s = containerStatus(
        i, false,
        {{"waiting",
          {{"reason", "CrashLoopBackOff"},
           {"message", "back-off 10s restarting failed container=" + containers_[i] +
                           " pod=" + pod_["metadata"]["name"].get<std::string>() + "_" +
                           pod_["metadata"]["namespace"].get<std::string>() + "(" +
                           pod_["metadata"]["uid"].get<std::string>() + ")"}}}});
    s["lastState"] = {{"terminated", terminated}};
  }

  Json pod_;
  std::size_t index_;
  std::string ip_;
  std::vector<std::string> containers_;
  std::vector<std::string> images_;
  std::vector<std::size_t> restarts_;
  std::vector<std::string> containerStarted_;
  std::size_t updates_ = 0;
};

void writeEvent(std::ostream& out, const char* type, const Json& pod) {
  out << Json{{"type", type}, {"object", pod}}.dump() << '\n';
}

} // namespace

void writeRecordedStream(std::ostream& out, const StreamShape& shape) {
  if (shape.pods == 0 || shape.events < 3 * shape.pods) {
    throw std::invalid_argument("a stream of " + std::to_string(shape.events) + " events of " +
                                std::to_string(shape.pods) +
                                " pods does not fit: each pod needs 3 events at least");
  }
  const Json running = runningNodePluginPod();
  std::vector<StreamPod> pods;
  for (std::size_t i = 0; i < shape.pods; ++i) {
    pods.emplace_back(running, i);
  }
  std::size_t event = 0;
  const auto version = [&] { return event + 2; };
  for (; event < shape.pods; ++event) {
    writeEvent(out, "ADDED", pods[event].update(event, version()));
  }
  const std::size_t updatesEnd = shape.events - 2 * shape.pods;
  for (; event < updatesEnd; ++event) {
    writeEvent(out, "MODIFIED", pods[event % shape.pods].update(event, version()));
  }
  for (StreamPod& pod : pods) {
    writeEvent(out, "MODIFIED", pod.markDeleted(event, version()));
    ++event;
  }
  for (StreamPod& pod : pods) {
    writeEvent(out, "DELETED", pod.withVersion(version()));
    ++event;
  }
}

} // namespace csiop::bench
