// Writes the fuzzer's seed corpus: `review_corpus DIR` (re)writes DIR/*.json,
// one AdmissionReview body per file, from the examples and the fixed cluster of
// review_harness.hpp. The first word of a file name is what the replay test
// expects webhook::review to answer: allow, deny400, deny403, deny422 (a 200
// AdmissionReview) or http400 (a plain-text 400). Files of other names (crash
// reproducers) are held to the invariants only.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <csiop/api/yaml.hpp>

#include "review_harness.hpp"

namespace {

using csiop::api::Json;
namespace fuzz = csiop::webhook::fuzz;

Json example(const std::string& file) {
  std::ifstream in(std::string(CSIOP_EXAMPLES_DIR) + "/" + file);
  if (!in) {
    throw std::runtime_error("cannot read examples/" + file);
  }
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  return csiop::api::parseYaml(text).at(0);
}

Json request(const std::string& operation, const Json& object, const Json& oldObject,
             const std::string& uid) {
  const Json kind = {{"group", "csiop.dev"}, {"version", "v1alpha1"}, {"kind", "DriverDeployment"}};
  const Json resource = {
      {"group", "csiop.dev"}, {"version", "v1alpha1"}, {"resource", "driverdeployments"}};
  const Json& named = object.is_object() ? object : oldObject;
  Json r = {
      {"uid", uid},
      {"kind", kind},
      {"resource", resource},
      {"requestKind", kind},
      {"requestResource", resource},
      {"name", named.is_object() ? named["metadata"].value("name", "") : ""},
      {"operation", operation},
      {"userInfo",
       {{"username", "kubernetes-admin"}, {"groups", {"system:masters", "system:authenticated"}}}},
      {"object", object},
      {"oldObject", oldObject},
      {"dryRun", false},
      {"options",
       {{"apiVersion", "meta.k8s.io/v1"},
        {"kind", operation == "DELETE"   ? "DeleteOptions"
                 : operation == "UPDATE" ? "UpdateOptions"
                                         : "CreateOptions"}}}};
  return r;
}

Json review(const Json& req) {
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", req}};
}

Json withDriver(Json object, const std::string& name, const std::string& driverName) {
  object["metadata"]["name"] = name;
  object["spec"]["driverName"] = driverName;
  return object;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: review_corpus DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  std::vector<std::pair<std::string, std::string>> seeds;
  int serial = 0;
  const auto uid = [&serial] {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "705ab4f5-6393-11e8-b7cc-%012d", ++serial);
    return std::string(buffer);
  };
  const auto add = [&seeds](std::string name, const Json& body) {
    seeds.emplace_back(std::move(name), body.dump());
  };

  // Every example, through every operation the API server may send.
  for (const std::string file : {"hostpath", "inline-ephemeral", "nfs"}) {
    const Json dd = example(file + ".yaml");
    add("allow-create-" + file, review(request("CREATE", dd, nullptr, uid())));
    add("allow-update-" + file, review(request("UPDATE", dd, dd, uid())));
    add("allow-delete-" + file, review(request("DELETE", nullptr, dd, uid())));
  }
  const Json hostpath = example("hostpath.yaml");
  const Json nfs = example("nfs.yaml");

  {
    Json r = request("CREATE", hostpath, nullptr, uid());
    r["dryRun"] = true;
    add("allow-create-dry-run", review(r));
  }
  add("allow-connect", review(request("CONNECT", hostpath, nullptr, uid())));
  {
    // The minimal request: no resource, no userInfo, no oldObject.
    const Json r = {{"uid", uid()},
                    {"kind", {{"group", "csiop.dev"}, {"kind", "DriverDeployment"}}},
                    {"operation", "CREATE"},
                    {"object", hostpath}};
    add("allow-create-minimal", review(r));
  }
  {
    // Unknown fields are pruned, as the API server does.
    Json dd = hostpath;
    dd["spec"]["unknownField"] = {{"nested", 1}};
    dd["status"] = {{"observedGeneration", 3}};
    add("allow-create-unknown-fields", review(request("CREATE", dd, nullptr, uid())));
  }

  // The cluster of review_harness.hpp.
  add("deny403-create-duplicate-driver",
      review(request("CREATE", withDriver(hostpath, "second", fuzz::kHeldDriver), nullptr, uid())));
  {
    const Json own = withDriver(hostpath, fuzz::kHeldBy, fuzz::kHeldDriver);
    add("allow-update-holder-of-driver", review(request("UPDATE", own, own, uid())));
  }
  add("deny403-create-claimed-driver",
      review(request("CREATE", withDriver(nfs, "late", fuzz::kClaimedDriver), nullptr, uid())));
  add("allow-create-claimant",
      review(request("CREATE", withDriver(nfs, fuzz::kClaimedBy, fuzz::kClaimedDriver), nullptr,
                     uid())));
  add("deny403-create-foreign-csidriver",
      review(
          request("CREATE", withDriver(hostpath, "taker", fuzz::kForeignDriver), nullptr, uid())));
  {
    Json dd = withDriver(hostpath, "taker", fuzz::kForeignDriver);
    dd["metadata"]["annotations"] = {{csiop::api::kAdoptAnnotation, "true"}};
    add("allow-create-adopt-foreign-csidriver", review(request("CREATE", dd, nullptr, uid())));
    dd["metadata"]["annotations"][csiop::api::kAdoptAnnotation] = "yes";
    add("deny403-create-adopt-not-true", review(request("CREATE", dd, nullptr, uid())));
  }
  {
    // Deleting a driver whose volumes are in use, and the ways that are allowed.
    Json dd = withDriver(hostpath, "inuse", fuzz::kInUseDriver);
    add("deny403-delete-volumes-in-use", review(request("DELETE", nullptr, dd, uid())));
    dd["metadata"]["annotations"] = {{csiop::api::kForceDeleteAnnotation, "true"}};
    add("allow-delete-forced", review(request("DELETE", nullptr, dd, uid())));
    dd["metadata"]["annotations"][csiop::api::kForceDeleteAnnotation] = "yes";
    add("deny403-delete-force-not-true", review(request("DELETE", nullptr, dd, uid())));
    add("deny422-create-force-delete-not-a-bool", review(request("CREATE", dd, nullptr, uid())));
    dd["metadata"].erase("annotations");
    dd["spec"]["deletionPolicy"] = "Orphan";
    add("allow-delete-orphan-in-use", review(request("DELETE", nullptr, dd, uid())));
    dd["spec"]["deletionPolicy"] = "Delete";
    dd["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z";
    add("allow-delete-already-deleting", review(request("DELETE", nullptr, dd, uid())));
    // The finalizer's removal after an Orphan deletion: the CSIDriver looks foreign by then.
    Json orphaned = withDriver(hostpath, "orphaned", fuzz::kForeignDriver);
    orphaned["spec"]["deletionPolicy"] = "Orphan";
    orphaned["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z";
    orphaned["metadata"]["finalizers"] = Json::array({"csiop.dev/cleanup"});
    Json released = orphaned;
    released["metadata"]["finalizers"] = Json::array();
    add("allow-update-finalizer-removal-after-orphan",
        review(request("UPDATE", released, orphaned, uid())));
  }
  add("allow-create-managed-csidriver",
      review(request("CREATE", withDriver(hostpath, "managed", fuzz::kManagedDriver), nullptr,
                     uid())));

  // Invalid specs and updates.
  {
    const Json renamed = withDriver(hostpath, "hostpath", "other.csi.example.com");
    add("deny422-update-driver-name-changed", review(request("UPDATE", renamed, hostpath, uid())));
  }
  {
    Json dd = hostpath;
    dd["spec"].erase("driverName");
    add("deny422-create-no-driver-name", review(request("CREATE", dd, nullptr, uid())));
  }
  add("deny422-create-bad-driver-name",
      review(request("CREATE", withDriver(hostpath, "hostpath", "-Not_A.Name-"), nullptr, uid())));
  {
    Json dd = hostpath;
    dd["spec"]["controller"]["replicas"] = "two";
    dd["spec"]["driver"].erase("image");
    dd["metadata"]["name"] = "Upper_Case";
    add("deny422-create-several-errors", review(request("CREATE", dd, nullptr, uid())));
  }
  {
    Json dd = hostpath;
    dd["metadata"]["name"] = "h\u00e9llo-\u4e16\u754c-" + std::string(80, 'x');
    add("deny422-create-unicode-long-name", review(request("CREATE", dd, nullptr, uid())));
  }
  {
    Json dd = hostpath;
    dd["kind"] = "Deployment";
    dd["apiVersion"] = "apps/v1";
    add("deny422-create-wrong-object-kind", review(request("CREATE", dd, nullptr, uid())));
  }
  {
    Json dd = hostpath;
    dd["spec"] = "not an object";
    add("deny422-create-spec-string", review(request("CREATE", dd, nullptr, uid())));
  }

  // Requests this webhook refuses to judge.
  {
    Json r = request("CREATE", hostpath, nullptr, uid());
    r["kind"] = {{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}};
    add("deny400-other-kind", review(r));
    r["kind"] = "DriverDeployment";
    add("deny400-kind-string", review(r));
  }
  add("deny400-unsupported-operation", review(request("PATCH", hostpath, nullptr, uid())));
  add("deny400-create-without-object", review(request("CREATE", nullptr, nullptr, uid())));
  {
    Json r = request("CREATE", hostpath, nullptr, uid());
    r["object"] = Json::array({hostpath});
    add("deny400-create-object-array", review(r));
  }

  // The inputs of issue "Hardened", cut to the fuzzer's 64 KiB, in a DriverDeployment that is
  // valid without them.
  {
    const Json minimal = {{"apiVersion", "csiop.dev/v1alpha1"},
                          {"kind", "DriverDeployment"},
                          {"metadata", {{"name", "demo"}}},
                          {"spec",
                           {{"driverName", "demo.csi.example.com"},
                            {"driver", {{"image", "example.com/driver:v1"}}},
                            {"controller", Json::object()}}}};
    const auto create = [&](const Json::json_pointer& at, const Json& value) {
      Json dd = minimal;
      dd[at] = value;
      return review(request("CREATE", dd, nullptr, uid()));
    };
    add("allow-hostile-minimal", create(Json::json_pointer("/spec/paused"), false));
    std::string pipe = "a";
    for (int i = 0; i < 20'000; ++i) {
      pipe += "-a";
    }
    add("deny422-hostile-csi-proxy-pipe-40kb",
        create(Json::json_pointer("/spec/windowsNode/csiProxyPipes"), {pipe + "-v1"}));
    for (const std::size_t n : {30, 60}) {
      add("deny422-hostile-kubelet-dir-backtracker-" + std::to_string(n),
          create(Json::json_pointer("/spec/windowsNode/kubeletDir"),
                 "C:\\" + std::string(n, 'a') + "*"));
    }
    const std::string digits(60'000, '7');
    add("allow-hostile-configmap-value-60000-digits",
        create(Json::json_pointer("/spec/configMaps"),
               {{{"name", "config"}, {"data", {{"k", digits}}}}}));
    Json many = Json::object();
    for (int i = 0; i < 5'000; ++i) {
      many["k" + std::to_string(i)] = "v";
    }
    add("allow-hostile-5000-keys",
        create(Json::json_pointer("/spec/configMaps"), {{{"name", "config"}, {"data", many}}}));
    add("deny422-hostile-huge-percentage",
        create(Json::json_pointer("/spec/controller/podDisruptionBudget"),
               {{"maxUnavailable", "99999999999999999999%"}}));
    add("deny422-hostile-lease-timings",
        create(Json::json_pointer("/spec/controller/leaderElection"),
               {{"leaseDuration", "9999999999999h"}, {"retryPeriod", "1ns"}}));
    // What a Json cannot hold, as text: a number beyond a double, nesting beyond the limit.
    const std::string body = create(Json::json_pointer("/spec/paused"), false).dump();
    const auto replaced = [&body](const std::string& by) {
      std::string text = body;
      const std::string what = "\"paused\":false";
      return text.replace(text.find(what), what.size(), by);
    };
    seeds.emplace_back("http400-hostile-number-60000-digits", replaced("\"paused\":" + digits));
    seeds.emplace_back("http400-hostile-nesting-201",
                       replaced("\"x\":" + std::string(201, '[') + std::string(201, ']')));
  }

  // Not AdmissionReviews at all.
  const std::string valid = review(request("CREATE", hostpath, nullptr, "7f0b2a9c-uid")).dump();
  seeds.emplace_back("http400-truncated", valid.substr(0, valid.size() / 2));
  seeds.emplace_back("http400-empty", "");
  seeds.emplace_back("http400-array", "[]");
  seeds.emplace_back("http400-yaml", "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\n");
  {
    Json r = review(request("CREATE", hostpath, nullptr, uid()));
    r["apiVersion"] = "admission.k8s.io/v1beta1";
    add("http400-v1beta1", r);
    r["apiVersion"] = "admission.k8s.io/v1";
    r["kind"] = "TokenReview";
    add("http400-other-review-kind", r);
    r["kind"] = "AdmissionReview";
    r["request"]["uid"] = "";
    add("http400-empty-uid", r);
    r["request"]["uid"] = 42;
    add("http400-uid-number", r);
    r["request"] = nullptr;
    add("http400-null-request", r);
    r.erase("request");
    r["response"] = {{"uid", "x"}, {"allowed", true}};
    add("http400-response-not-request", r);
  }
  seeds.emplace_back("http400-invalid-utf8",
                     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                     "\"request\":{\"uid\":\"\xff\xfe\"}}");

  for (const auto& [name, body] : seeds) {
    std::ofstream out(dir / (name + ".json"), std::ios::binary | std::ios::trunc);
    out << body;
    if (!out) {
      std::cerr << "cannot write " << (dir / (name + ".json")).string() << "\n";
      return 1;
    }
  }
  std::cout << "wrote " << seeds.size() << " seeds to " << dir.string() << "\n";
  return 0;
}
