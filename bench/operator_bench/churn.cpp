#include "churn.hpp"

#include <time.h>

#include <memory>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <csiop/api/json_access.hpp>
#include <csiop/kube/errors.hpp>

#include "async.hpp"
#include "report_rows.hpp"
#include "scenarios.hpp"
#include "setup.hpp"

namespace csiop::bench {
namespace {

namespace asio = boost::asio;
namespace r = kube::resources;
using namespace std::chrono_literals;
using api::Json;

constexpr const char* kDeployment = "foreign";
// Pods that use a claim: bound at once to a volume of a driver no DriverDeployment manages.
constexpr const char* kClaimsDeployment = "foreign-claims";
constexpr const char* kClaim = "foreign-data";
constexpr const char* kVolume = "csiop-bench-foreign-volume";
constexpr int kInFlight = 16; // Event writes outstanding at once

std::string nowRfc3339() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The volume and its claim, bound to each other as a static provisioning binds them; the claim's
// pods schedule on any node (no node affinity) and share it (ReadWriteMany).
Json foreignVolume() {
  Json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", kVolume}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {"ReadWriteMany"}},
               {"persistentVolumeReclaimPolicy", "Retain"},
               {"storageClassName", ""},
               {"claimRef", {{"namespace", kForeignNamespace}, {"name", kClaim}}},
               {"csi", {{"driver", "other.example.com"}, {"volumeHandle", "foreign"}}}}}};
  return pv;
}

Json foreignClaim() {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", kClaim}, {"namespace", kForeignNamespace}}},
          {"spec",
           {{"accessModes", {"ReadWriteMany"}},
            {"storageClassName", ""},
            {"volumeName", kVolume},
            {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
}

Json foreignDeployment(const std::string& name, bool claim) {
  Json d = Json::parse(R"json({
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {},
    "spec": {
      "replicas": 0,
      "selector": {"matchLabels": {"app": "foreign"}},
      "template": {
        "metadata": {"labels": {"app": "foreign"}},
        "spec": {
          "terminationGracePeriodSeconds": 0,
          "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]
        }
      }
    }
  })json");
  d["metadata"]["name"] = name;
  d["metadata"]["namespace"] = kForeignNamespace;
  d["spec"]["selector"]["matchLabels"]["app"] = name;
  d["spec"]["template"]["metadata"]["labels"]["app"] = name;
  if (claim) {
    Json& pod = d["spec"]["template"]["spec"];
    pod["volumes"] = {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", kClaim}}}}};
    pod["containers"][0]["volumeMounts"] = {{{"name", "data"}, {"mountPath", "/data"}}};
  }
  return d;
}

struct ForeignPod {
  std::string name;
  std::string uid;
  std::string node;
};

// A Warning Event about `object` (a Pod or a PersistentVolumeClaim of the foreign namespace), as
// its component writes it.
Json warningEvent(const std::string& name, const std::string& kind, const std::string& object,
                  const std::string& uid, const std::string& reason, const std::string& message,
                  const std::string& component, const std::string& host) {
  const std::string now = nowRfc3339();
  Json e = {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"name", name}, {"namespace", kForeignNamespace}}},
            {"involvedObject",
             {{"apiVersion", "v1"},
              {"kind", kind},
              {"namespace", kForeignNamespace},
              {"name", object},
              {"uid", uid}}},
            {"type", "Warning"},
            {"reason", reason},
            {"message", message},
            {"source", {{"component", component}}},
            {"reportingComponent", component},
            {"reportingInstance", host.empty() ? component : host},
            {"firstTimestamp", now},
            {"lastTimestamp", now},
            {"count", 1}};
  if (!host.empty()) {
    e["source"]["host"] = host;
  }
  return e;
}

// One write of a phase: a create (name empty) or a merge patch of the Event `name`.
struct Write {
  std::string name;
  Json body;
};

struct Writes {
  std::vector<Write> writes;
  std::size_t next = 0;
  int workers = 0;
  int done = 0;
  int failed = 0;
  std::vector<std::string> errors;
};

// Never throws (it runs detached): a failed write is counted and its error kept (a few).
asio::awaitable<void> writer(Context& ctx, std::shared_ptr<Writes> state) {
  const std::string ns = kForeignNamespace;
  while (state->next < state->writes.size()) {
    const Write& w = state->writes[state->next++];
    try {
      Json body = w.body;
      if (w.name.empty()) {
        co_await ctx.client.create(r::events, std::move(body));
      } else {
        const std::string name = w.name;
        co_await ctx.client.patch(r::events, ns, name, kube::PatchType::Merge, std::move(body));
      }
      ++state->done;
    } catch (const std::exception& e) {
      ++state->failed;
      if (state->errors.size() < 3) {
        state->errors.push_back(e.what());
      }
    }
  }
  --state->workers;
}

class ChurnRun {
public:
  ChurnRun(Context& ctx, PodWatch& pods, int count, ChurnReport& out)
      : ctx_(ctx), pods_(pods), count_(count), out_(out) {}

  asio::awaitable<void> prepare();
  // Scales the Deployment `deployment` to `replicas` as one measured phase, until its pods are
  // Ready (or gone) and the pods watch is quiet.
  asio::awaitable<void> scalePhase(std::string deployment, int replicas, std::string name);
  asio::awaitable<void> events();
  asio::awaitable<void> cleanUp();

private:
  pid_t pid() const { return ctx_.operatorProcess.pid(); }
  asio::awaitable<void> scale(const std::string& deployment, int replicas);
  // Polls until the Deployment's readyReplicas is `ready` (0: and no pod of it is left); throws
  // on timeout.
  asio::awaitable<void> waitPods(const std::string& deployment, int ready);
  // Waits until the pods watch has heard no change for 2 s.
  asio::awaitable<void> waitPodsQuiet();
  // Sends `writes` (kInFlight at once) as one measured phase.
  asio::awaitable<void> writePhase(std::string name, std::vector<Write> writes);
  asio::awaitable<std::vector<ForeignPod>> listPods();

  Context& ctx_;
  PodWatch& pods_;
  int count_;
  ChurnReport& out_;
};

asio::awaitable<void> ChurnRun::prepare() {
  const std::string ns = kForeignNamespace;
  co_await ctx_.client.removeIfExists(r::namespaces, "", ns);
  const auto deadline = Clock::now() + ctx_.timeout();
  while ((co_await ctx_.client.getOpt(r::namespaces, "", ns)).has_value()) {
    if (Clock::now() >= deadline) {
      throw std::runtime_error("namespace " + ns + " left by an earlier run is not gone");
    }
    co_await pause(500ms);
  }
  Json namespaceObject = {
      {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
  co_await ctx_.client.create(r::namespaces, std::move(namespaceObject));
  // Pods may be created only once the namespace's default ServiceAccount exists.
  const std::string account = "default";
  while (!(co_await ctx_.client.getOpt(r::serviceaccounts, ns, account)).has_value()) {
    if (Clock::now() >= deadline) {
      throw std::runtime_error("no ServiceAccount default in " + ns);
    }
    co_await pause(200ms);
  }
  Json deployment = foreignDeployment(kDeployment, false);
  co_await ctx_.client.create(r::deployments, std::move(deployment));
  co_await ctx_.client.removeIfExists(r::persistentvolumes, "", kVolume);
  while ((co_await ctx_.client.getOpt(r::persistentvolumes, "", kVolume)).has_value()) {
    if (Clock::now() >= deadline) {
      throw std::runtime_error(std::string("PersistentVolume ") + kVolume +
                               " left by an earlier run is not gone");
    }
    co_await pause(500ms);
  }
  Json volume = foreignVolume();
  co_await ctx_.client.create(r::persistentvolumes, std::move(volume));
  Json claim = foreignClaim();
  co_await ctx_.client.create(r::persistentvolumeclaims, std::move(claim));
  Json claims = foreignDeployment(kClaimsDeployment, true);
  co_await ctx_.client.create(r::deployments, std::move(claims));
}

asio::awaitable<void> ChurnRun::scale(const std::string& deployment, int replicas) {
  const std::string ns = kForeignNamespace;
  const std::string name = deployment;
  Json patch = {{"spec", {{"replicas", replicas}}}};
  co_await ctx_.client.patch(r::deployments, ns, name, kube::PatchType::Merge, std::move(patch));
}

asio::awaitable<void> ChurnRun::waitPods(const std::string& deployment, int ready) {
  const std::string ns = kForeignNamespace;
  const std::string name = deployment;
  const auto deadline = Clock::now() + ctx_.timeout();
  auto reported = Clock::now();
  for (;;) {
    const Json d = co_await ctx_.client.get(r::deployments, ns, name);
    const Json& status = api::member(d, "status");
    const int readyNow = status.contains("readyReplicas") ? status["readyReplicas"].get<int>() : 0;
    if (readyNow == ready) {
      if (ready > 0) {
        co_return;
      }
      const std::string selector = "app=" + name;
      kube::ListOptions one;
      one.limit = 1;
      one.labelSelector = selector;
      if ((co_await ctx_.client.list(r::pods, ns, one)).items.empty()) {
        co_return;
      }
    }
    if (Clock::now() >= deadline) {
      throw std::runtime_error("foreign pods: " + std::to_string(readyNow) + " ready, not " +
                               std::to_string(ready) + ", after " +
                               std::to_string(ctx_.options.timeoutSeconds) + " s");
    }
    if (Clock::now() - reported >= 10s) {
      reported = Clock::now();
      progress("foreign pods ready " + std::to_string(readyNow) + ", waiting for " +
               std::to_string(ready) + "; pod changes " +
               std::to_string(static_cast<long>(pods_.changes().total())));
    }
    co_await pause(500ms);
  }
}

asio::awaitable<void> ChurnRun::waitPodsQuiet() {
  double last = -1;
  while (pods_.changes().total() != last) {
    last = pods_.changes().total();
    co_await pause(2s);
  }
}

asio::awaitable<void> ChurnRun::scalePhase(std::string deployment, int replicas, std::string name) {
  progress("foreign churn: " + name);
  const PodChanges before = pods_.changes();
  const PhaseMeter phase(pid());
  CpuMeter cpu(pid());
  co_await scale(deployment, replicas);
  co_await waitPods(deployment, replicas);
  co_await waitPodsQuiet();
  ChurnPhase p;
  p.name = std::move(name);
  p.unit = "pod changes";
  p.cpu = cpu.finish();
  p.changes = (pods_.changes() - before).total();
  p.memoryAfter = readMemory(pid());
  p.load = phase.finish(p.name);
  out_.phases.push_back(std::move(p));
}

asio::awaitable<std::vector<ForeignPod>> ChurnRun::listPods() {
  const std::string ns = kForeignNamespace;
  const std::string selector = std::string("app=") + kDeployment;
  kube::ListOptions plain;
  plain.labelSelector = selector;
  const kube::ListResult list = co_await ctx_.client.listAll(r::pods, ns, plain);
  std::vector<ForeignPod> out;
  for (const Json& pod : list.items) {
    out.push_back({api::metadataField(pod, "name"), api::metadataField(pod, "uid"),
                   api::stringField(api::member(pod, "spec"), "nodeName")});
  }
  co_return out;
}

asio::awaitable<void> ChurnRun::writePhase(std::string name, std::vector<Write> writes) {
  progress("foreign churn: " + name);
  const auto state = std::make_shared<Writes>();
  state->writes = std::move(writes);
  const PhaseMeter phase(pid());
  CpuMeter cpu(pid());
  state->workers = kInFlight;
  for (int i = 0; i < kInFlight; ++i) {
    asio::co_spawn(ctx_.client.executor(), writer(ctx_, state), asio::detached);
  }
  const std::function<bool()> finished = [&] { return state->workers == 0; };
  if (!co_await waitUntil(ctx_, finished, ctx_.timeout())) {
    throw std::runtime_error(name + ": the writes did not finish in time");
  }
  co_await pause(2s); // what the watches deliver after the last write
  ChurnPhase p;
  p.name = std::move(name);
  p.unit = "Event writes";
  p.cpu = cpu.finish();
  p.changes = state->done;
  p.failedWrites = state->failed;
  p.memoryAfter = readMemory(pid());
  p.load = phase.finish(p.name);
  out_.phases.push_back(std::move(p));
  for (auto& e : state->errors) {
    out_.writeErrors.push_back(std::move(e));
  }
}

asio::awaitable<void> ChurnRun::events() {
  const std::vector<ForeignPod> pods = co_await listPods();
  std::vector<Write> backOff;
  std::vector<Write> failedMount;
  std::vector<Write> again;
  for (const ForeignPod& pod : pods) {
    backOff.push_back({"", warningEvent(pod.name + ".backoff", "Pod", pod.name, pod.uid, "BackOff",
                                        "Back-off restarting failed container app in pod " +
                                            pod.name + "_" + kForeignNamespace,
                                        "kubelet", pod.node)});
    failedMount.push_back(
        {"", warningEvent(pod.name + ".mount", "Pod", pod.name, pod.uid, "FailedMount",
                          "MountVolume.SetUp failed for volume \"config\" : configmap "
                          "\"app-config\" not found",
                          "kubelet", pod.node)});
    again.push_back({pod.name + ".mount", Json{{"count", 2}, {"lastTimestamp", nowRfc3339()}}});
  }
  std::vector<Write> provisioning;
  for (std::size_t i = 0; i < pods.size() / 4; ++i) {
    const std::string claim = "claim-" + std::to_string(i);
    provisioning.push_back(
        {"", warningEvent(claim + ".provisioning", "PersistentVolumeClaim", claim,
                          "00000000-0000-0000-0000-" + std::to_string(100000000000 + i),
                          "ProvisioningFailed",
                          "failed to provision volume with StorageClass \"other\": rpc error: "
                          "code = ResourceExhausted desc = quota exceeded",
                          "other.example.com_other-controller-0_4f1c2a", "")});
  }
  const std::size_t n = pods.size();
  co_await writePhase(std::to_string(n) + " BackOff Events (selected by no watch)",
                      std::move(backOff));
  co_await writePhase(std::to_string(n) + " FailedMount Events of foreign pods",
                      std::move(failedMount));
  co_await writePhase(std::to_string(n) + " FailedMount Events again (count 2)", std::move(again));
  co_await writePhase(std::to_string(n / 4) + " ProvisioningFailed Events of another provisioner",
                      std::move(provisioning));
  CacheSizes caches = co_await readCacheSizes(ctx_);
  out_.cacheObjects = std::move(caches.objects);
  out_.cacheHeapBytes = std::move(caches.heapBytes);
}

asio::awaitable<void> ChurnRun::cleanUp() {
  co_await ctx_.client.removeIfExists(r::persistentvolumes, "", kVolume);
  const std::vector<std::string> names = {kForeignNamespace};
  co_await deleteNamespaces(ctx_, names);
  const auto deadline = Clock::now() + ctx_.timeout();
  const std::string ns = kForeignNamespace;
  while ((co_await ctx_.client.getOpt(r::namespaces, "", ns)).has_value()) {
    if (Clock::now() >= deadline) {
      throw std::runtime_error("namespace " + ns + " not gone after the churn");
    }
    co_await pause(500ms);
  }
}

} // namespace

asio::awaitable<void> runChurn(Context& ctx, PodWatch& podWatch, int pods, ChurnReport& out) {
  out.pods = pods;
  ChurnRun run(ctx, podWatch, pods, out);
  co_await run.prepare();
  co_await run.scalePhase(kDeployment, pods, std::to_string(pods) + " foreign pods up");
  co_await run.events();
  co_await run.scalePhase(kDeployment, 0, std::to_string(pods) + " foreign pods down");
  const int withClaims = pods / 2;
  co_await run.scalePhase(kClaimsDeployment, withClaims,
                          std::to_string(withClaims) + " foreign pods with a claim up");
  co_await run.scalePhase(kClaimsDeployment, 0,
                          std::to_string(withClaims) + " foreign pods with a claim down");
  co_await run.cleanUp();
}

void printChurnReport(std::ostream& out, const ChurnReport& c) {
  out << "\nforeign churn in namespace " << kForeignNamespace << " (" << c.pods
      << " pods of a Deployment, no volume; their Warning Events; then " << c.pods / 2
      << " pods sharing a claim of another driver's volume)\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-52s %8s %10s %12s %16s\n", "phase", "changes", "CPU s",
                "ms / 1,000", "RSS / anon MiB");
  out << line;
  for (const ChurnPhase& p : c.phases) {
    const double cpu = p.cpu ? p.cpu->cpuSeconds : -1;
    const std::string per = p.cpu && p.changes > 0
                                ? format("%.1f", p.cpu->cpuSeconds * 1e6 / p.changes)
                                : std::string("-");
    const std::string memory = format("%.1f", static_cast<double>(p.memoryAfter.rssKb) / 1024.0) +
                               " / " +
                               format("%.1f", static_cast<double>(p.memoryAfter.anonKb) / 1024.0);
    std::snprintf(line, sizeof line, "  %-52s %8.0f %10.2f %12s %16s\n", p.name.c_str(), p.changes,
                  cpu, per.c_str(), memory.c_str());
    out << line;
    if (p.failedWrites > 0) {
      out << "    " << p.failedWrites << " writes failed\n";
    }
  }
  out << "  (changes: pod changes as the benchmark's pods watch saw them, or Events written; "
         "CPU: the operator's, from the phase's start to 2 s after its last change)\n";
  for (const auto& e : c.writeErrors) {
    out << "  write error: " << e << "\n";
  }
  if (!c.cacheObjects.empty()) {
    out << "  the operator's caches after the Events:\n";
    cacheHeapRows(out, c.cacheObjects, c.cacheHeapBytes);
  }
  out << "  the machine during each phase:\n";
  for (const ChurnPhase& p : c.phases) {
    printPhase(out, p.load);
  }
}

} // namespace csiop::bench
