#include <csiop/runtime/events.hpp>

#include <chrono>
#include <ctime>

#include <spdlog/spdlog.h>

namespace csiop::runtime {

std::string nowRfc3339() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

EventRecorder::EventRecorder(kube::Client& client, std::function<std::string()> now)
    : client_(client), now_(std::move(now)) {}

boost::asio::awaitable<void> EventRecorder::record(const kube::Json& object, bool warning,
                                                   std::string reason, std::string message) {
  const kube::Json& meta = object["metadata"];
  const std::string name = meta.value("name", std::string());
  const std::string time = now_();
  kube::Json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"generateName", name + "."}, {"namespace", "default"}}},
      {"involvedObject",
       {{"apiVersion", object.value("apiVersion", std::string())},
        {"kind", object.value("kind", std::string())},
        {"name", name},
        {"uid", meta.value("uid", std::string())},
        {"resourceVersion", meta.value("resourceVersion", std::string())}}},
      {"reason", reason},
      {"message", message},
      {"type", warning ? "Warning" : "Normal"},
      {"source", {{"component", "csi-operator"}}},
      {"reportingComponent", "csi-operator"},
      {"firstTimestamp", time},
      {"lastTimestamp", time},
      {"count", 1},
  };
  try {
    co_await client_.create(kube::resources::events, std::move(event));
  } catch (const std::exception& e) {
    spdlog::warn("recording event {} for {}: {}", reason, name, e.what());
  }
}

} // namespace csiop::runtime
