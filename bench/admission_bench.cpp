// admission_bench: what the author check adds to a review, against a real API server. The
// webhook's review (webhook::Admitter) with the operator's client asking SubjectAccessReviews,
// next to the pure decision alone, for:
//   admin         the cluster admin (kubernetes-admin, system:masters): one question
//   storage-admin a namespace admin who may also create CSIDrivers, with a node-only driver it
//                 may deploy (admitted after a question per permission)
//   dd-author     a user who may only write DriverDeployments, with the hostpath example
//                 (denied after every question: the most a review asks)
// each with an empty answer cache (a new Admitter per review) and a warm one (the cache of the
// previous review). Prints p50/p99 per case and the questions asked per review.
//
//   test/cluster/up --name bench && build/bench/admission_bench --kubeconfig <its kubeconfig>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <csiop/api/yaml.hpp>
#include <csiop/app/webhook_authority.hpp>
#include <csiop/kube/client.hpp>
#include <csiop/webhook/admitter.hpp>

namespace {

namespace asio = boost::asio;
using csiop::api::Json;
using namespace csiop;
using Clock = std::chrono::steady_clock;

Json example(const std::string& file) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/examples/" + file);
  return api::parseYaml(std::string(std::istreambuf_iterator<char>(in), {})).at(0);
}

Json nodeOnly() {
  return Json::parse(R"({"apiVersion": "csiop.dev/v1alpha1", "kind": "DriverDeployment",
    "metadata": {"name": "bench-node-only"},
    "spec": {"driverName": "bench.csi.example.com", "namespace": "csi-bench",
             "createNamespace": false,
             "csiDriver": {"attachRequired": false, "volumeLifecycleModes": ["Ephemeral"]},
             "driver": {"image": "registry.example.com/driver:v1"}}})");
}

std::string reviewOf(const Json& dd, const std::string& user, std::vector<std::string> groups,
                     int n) {
  const Json review = {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "bench-" + std::to_string(n)},
        {"kind", {{"group", "csiop.dev"}, {"version", "v1alpha1"}, {"kind", "DriverDeployment"}}},
        {"operation", "CREATE"},
        {"dryRun", true},
        {"userInfo", {{"username", user}, {"groups", groups}}},
        {"object", dd}}}};
  return review.dump();
}

// The RBAC of the two users who are not cluster admins.
asio::awaitable<void> setUp(kube::Client& client) {
  namespace r = kube::resources;
  const auto apply = [&](const kube::ResourceRef& ref, const char* yaml) -> asio::awaitable<void> {
    Json object = api::parseYaml(yaml).at(0);
    co_await client.apply(ref, std::move(object));
  };
  co_await apply(r::namespaces, "{apiVersion: v1, kind: Namespace, metadata: {name: csi-bench}}");
  co_await apply(r::clusterroles, R"({apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole,
    metadata: {name: csiop-bench-authors},
    rules: [{apiGroups: [csiop.dev], resources: [driverdeployments], verbs: [create]},
            {apiGroups: [storage.k8s.io], resources: [csidrivers], verbs: [create]}]})");
  co_await apply(r::clusterrolebindings, R"({apiVersion: rbac.authorization.k8s.io/v1,
    kind: ClusterRoleBinding, metadata: {name: csiop-bench-authors},
    roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csiop-bench-authors},
    subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: bench-storage-admin}]})");
  co_await apply(r::rolebindings, R"({apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding,
    metadata: {name: bench-storage-admin, namespace: csi-bench},
    roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin},
    subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: bench-storage-admin}]})");
}

struct Case {
  std::string name;
  Json dd;
  std::string user;
  std::vector<std::string> groups;
  bool admitted;
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0
                   : v[std::min(v.size() - 1,
                                static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"admission_bench: the webhook's review with and without the author check"};
  std::string kubeconfig;
  int iterations = 50;
  app.add_option("--kubeconfig", kubeconfig, "the cluster to ask")->required();
  app.add_option("--iterations", iterations, "reviews per case")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  asio::io_context io;
  kube::Client client(io.get_executor(), kube::loadDefault(kubeconfig, ""));
  const auto run = [&](auto awaitable) {
    auto f = asio::co_spawn(io, std::move(awaitable), asio::use_future);
    io.restart();
    io.run();
    return f.get();
  };
  run(setUp(client));

  webhook::ClusterView cluster{
      [](const std::string&) { return std::vector<std::string>{}; },
      [](const std::string&) -> const Json* { return nullptr; },
      [](const std::string&, const std::string&, const std::string&) { return std::string(); }};
  std::size_t questions = 0;
  webhook::AuthorityApi api = app::kubeAuthority(client);
  const auto ask = api.allowed;
  api.allowed = [&](webhook::UserInfo user, std::vector<webhook::Access> accesses) {
    questions += accesses.size();
    return ask(std::move(user), std::move(accesses));
  };
  webhook::Reservations reservations([] { return Clock::now(); });

  const std::vector<Case> cases = {
      {"admin, hostpath", example("hostpath.yaml"), "kubernetes-admin", {"system:masters"}, true},
      {"storage-admin, node-only", nodeOnly(), "bench-storage-admin", {}, true},
      {"dd-author, hostpath (denied)", example("hostpath.yaml"), "bench-dd-author", {}, false},
  };
  std::printf("%-32s %-6s %10s %10s %10s\n", "case", "cache", "p50 ms", "p99 ms", "questions");
  {
    std::vector<double> pure;
    for (int i = 0; i < iterations; ++i) {
      const std::string body = reviewOf(example("hostpath.yaml"), "kubernetes-admin", {}, i);
      const auto started = Clock::now();
      webhook::review(body, cluster, reservations);
      pure.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
    }
    std::printf("%-32s %-6s %10.3f %10.3f %10d\n", "no author check (pure decision)", "-",
                percentile(pure, 0.5), percentile(pure, 0.99), 0);
  }
  int status = 0;
  for (const Case& c : cases) {
    for (const bool warm : {false, true}) {
      webhook::Admitter shared(cluster, api, reservations, [] { return Clock::now(); });
      std::vector<double> ms;
      questions = 0;
      for (int i = 0; i < iterations; ++i) {
        webhook::Admitter fresh(cluster, api, reservations, [] { return Clock::now(); });
        webhook::Admitter& admitter = warm ? shared : fresh;
        const std::string body = reviewOf(c.dd, c.user, c.groups, i);
        const auto started = Clock::now();
        const webhook::ReviewResult result = run(admitter.review(body));
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
        const bool allowed = Json::parse(result.body)["response"]["allowed"].get<bool>();
        if (allowed != c.admitted) {
          std::fprintf(stderr, "%s: expected %s, got %s\n", c.name.c_str(),
                       c.admitted ? "admitted" : "denied", result.body.c_str());
          status = 1;
        }
      }
      std::printf("%-32s %-6s %10.3f %10.3f %10.1f\n", c.name.c_str(), warm ? "warm" : "cold",
                  percentile(ms, 0.5), percentile(ms, 0.99),
                  static_cast<double>(questions) / iterations);
    }
  }
  return status;
}
