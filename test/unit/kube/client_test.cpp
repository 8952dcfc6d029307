// Client verbs against a local server that answers like the API server: the requests they make
// (method, path, query, content type, body) and how answers become results and errors.
#include <gtest/gtest.h>

#include <csiop/kube/attempt.hpp>
#include <csiop/kube/client.hpp>
#include <csiop/kube/warning_header.hpp>

#include "test_server.hpp"

namespace csiop::kube {
namespace {

using testing::Reply;
using testing::Request;
using testing::runTask;
using testing::TestServer;
namespace asio = boost::asio;
using namespace resources;

Reply json(const Json& body, int status = 200) {
  Reply r;
  r.status = status;
  r.body = body.dump();
  return r;
}

Json status(int code, const std::string& reason, const std::string& message = "m") {
  return {{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
          {"message", message}, {"reason", reason},   {"code", code}};
}

struct Observed {
  std::string verb;
  std::string resource;
  int code;
};

class ClientTest : public ::testing::Test {
protected:
  void serve(TestServer::Handler handler) {
    server_ = std::make_unique<TestServer>(io_, std::move(handler));
    ClientOptions options;
    options.observer = [this](std::string_view verb, std::string_view resource, int code,
                              std::chrono::nanoseconds duration) {
      EXPECT_GE(duration.count(), 0);
      observed_.push_back({std::string(verb), std::string(resource), code});
    };
    client_ = std::make_unique<Client>(io_.get_executor(), Config{.server = server_->url()},
                                       std::move(options));
  }
  template <class T> T run(asio::awaitable<T> task) { return runTask(io_, std::move(task)); }
  const Request& last() const { return server_->requests().back(); }

  asio::io_context io_;
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<Client> client_;
  std::vector<Observed> observed_;
};

TEST_F(ClientTest, GetReturnsTheObjectAndTellsTheObserver) {
  serve([](const Request&) { return json({{"kind", "ConfigMap"}, {"data", {{"a", "b"}}}}); });
  const Json cm = run(client_->get(configmaps, "ns", "cm"));
  EXPECT_EQ(cm["data"]["a"], "b");
  EXPECT_EQ(last().method, "GET");
  EXPECT_EQ(last().target, "/api/v1/namespaces/ns/configmaps/cm");
  run(client_->get(driverdeployments, "", "hp", {.resourceVersion = "0", .subresource = "status"}));
  EXPECT_EQ(last().target,
            "/apis/csiop.dev/v1alpha1/driverdeployments/hp/status?resourceVersion=0");
  ASSERT_EQ(observed_.size(), 2u);
  EXPECT_EQ(observed_[0].verb, "get");
  EXPECT_EQ(observed_[0].resource, "configmaps");
  EXPECT_EQ(observed_[0].code, 200);
  EXPECT_EQ(observed_[1].resource, "driverdeployments");
}

// The API server's Warning headers (a field it dropped, a deprecated API) reach the client's
// warning observer with the object they concern, and the caller's own list when it asks.
TEST_F(ClientTest, WarningsReachTheObserverAndTheCallersList) {
  std::vector<std::string> heard;
  server_ = std::make_unique<TestServer>(io_, [](const Request&) {
    Reply r = json({{"kind", "DaemonSet"}});
    r.headers = {
        {"Warning", R"(299 - "unknown field \"spec.template.spec.containers[0].mountPth\"")"},
        {"Warning",
         R"(299 - "spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14")"}};
    return r;
  });
  ClientOptions options;
  options.warnings = [&](std::string_view verb, std::string_view resource, std::string_view ns,
                         std::string_view name, std::string_view text) {
    heard.push_back(std::string(verb) + " " + std::string(resource) + " " + std::string(ns) + "/" +
                    std::string(name) + ": " + std::string(text));
  };
  client_ = std::make_unique<Client>(io_.get_executor(), Config{.server = server_->url()},
                                     std::move(options));
  Warnings mine;
  const Json ds = {{"metadata", {{"name", "d"}, {"namespace", "ns"}}}};
  run(client_->apply(daemonsets, ds, {.warnings = &mine}));
  EXPECT_EQ(mine, (Warnings{R"(unknown field "spec.template.spec.containers[0].mountPth")",
                            "spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated "
                            "since v1.14"}));
  run(client_->get(daemonsets, "ns", "d"));
  ASSERT_EQ(heard.size(), 4u);
  EXPECT_EQ(heard[0],
            R"(apply daemonsets ns/d: unknown field "spec.template.spec.containers[0].mountPth")");
  EXPECT_EQ(heard[2].substr(0, 18), "get daemonsets ns/");
  EXPECT_EQ(mine.size(), 2u) << "a request without a list adds nothing to another's";
}

TEST(WarningHeader, TheTextOfAWarningValue) {
  EXPECT_EQ(warningText(R"(299 - "plain text")"), "plain text");
  EXPECT_EQ(
      warningText(
          R"( 299 kube-apiserver "a \"quoted\" word \\ backslash" "Sat, 01 Jan 2000 00:00:00 GMT")"),
      R"(a "quoted" word \ backslash)");
  EXPECT_EQ(warningText("not a warning value "), "not a warning value");
  EXPECT_EQ(warningText(R"(299 - "no closing quote)"), R"(299 - "no closing quote)");
  EXPECT_EQ(warningText(""), "");
}

TEST_F(ClientTest, PodLogIsTheTextOfTheContainersLogWithItsBounds) {
  serve([](const Request& r) {
    if (r.target.find("/forbidden/") != std::string::npos) {
      return json(status(403, "Forbidden", "pods \"p\" is forbidden"), 403);
    }
    Reply text;
    text.body = "line one\nline two\n";
    text.contentType = "text/plain";
    return text;
  });
  const kube::LogOptions options{
      .container = "node-driver-registrar", .tailLines = 6, .limitBytes = 4096, .previous = true};
  EXPECT_EQ(run(client_->podLog("csi", "p", options)), "line one\nline two\n");
  EXPECT_EQ(last().target, "/api/v1/namespaces/csi/pods/p/log?container=node-driver-registrar"
                           "&tailLines=6&limitBytes=4096&previous=true");
  EXPECT_EQ(run(client_->podLog("csi", "p")), "line one\nline two\n");
  EXPECT_EQ(last().target, "/api/v1/namespaces/csi/pods/p/log");
  try {
    run(client_->podLog("forbidden", "p"));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isForbidden());
  }
  ASSERT_EQ(observed_.size(), 3u);
  EXPECT_EQ(observed_[0].verb, "get");
  EXPECT_EQ(observed_[0].resource, "pods/log");
  EXPECT_EQ(observed_[2].code, 403);
}

TEST_F(ClientTest, ErrorAnswersBecomeApiErrors) {
  serve([](const Request& r) {
    if (r.target.find("/gone") != std::string::npos)
      return json(status(404, "NotFound", "configmaps \"gone\" not found"), 404);
    Reply busy = json(status(429, "TooManyRequests"), 429);
    busy.headers = {{"Retry-After", "3"}};
    return busy;
  });
  try {
    run(client_->get(configmaps, "ns", "gone"));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isNotFound());
    EXPECT_EQ(std::string(e.what()),
              "GET /api/v1/namespaces/ns/configmaps/gone: 404 NotFound: configmaps \"gone\" not "
              "found");
  }
  try {
    run(client_->get(configmaps, "ns", "busy"));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isTooManyRequests());
    ASSERT_TRUE(e.retryAfter());
    EXPECT_EQ(e.retryAfter()->count(), 3);
  }
  ASSERT_EQ(observed_.size(), 2u);
  EXPECT_EQ(observed_[0].code, 404);
  EXPECT_EQ(observed_[1].code, 429);
}

TEST_F(ClientTest, TransportErrorsReachTheObserverAsCodeZero) {
  serve([](const Request&) { return Reply{.drop = true}; });
  EXPECT_THROW(run(client_->get(configmaps, "ns", "x")), TransportError);
  ASSERT_EQ(observed_.size(), 1u);
  EXPECT_EQ(observed_[0].code, 0);
}

TEST_F(ClientTest, ANonJsonSuccessIsAProtocolError) {
  serve([](const Request&) { return Reply{.body = "<html>", .contentType = "text/html"}; });
  try {
    run(client_->get(configmaps, "ns", "x"));
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Protocol);
    EXPECT_NE(std::string(e.what()).find("text/html"), std::string::npos) << e.what();
  }
}

TEST_F(ClientTest, ListEncodesSelectorsAndFillsTypeMeta) {
  serve([](const Request&) {
    return json(
        {{"kind", "ConfigMapList"},
         {"metadata", {{"resourceVersion", "42"}, {"continue", "tok"}, {"remainingItemCount", 3}}},
         {"items", {{{"metadata", {{"name", "a"}}}}}}});
  });
  const auto page = run(client_->list(
      configmaps, "ns",
      {.labelSelector = "app in (a,b),tier!=db", .fieldSelector = "metadata.name=a", .limit = 2}));
  EXPECT_EQ(last().target,
            "/api/v1/namespaces/ns/configmaps?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb"
            "&fieldSelector=metadata.name%3Da&limit=2");
  EXPECT_EQ(page.resourceVersion, "42");
  EXPECT_EQ(page.continueToken, "tok");
  EXPECT_EQ(page.remainingItemCount, 3);
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0].dump(),
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})");
  run(client_->list(pods, ""));
  EXPECT_EQ(last().target, "/api/v1/pods");
  EXPECT_EQ(observed_.back().verb, "list");
  // Everything but A-Z a-z 0-9 - . _ ~ is percent-encoded, '/' and UTF-8 bytes too.
  run(client_->list(pods, "", {.labelSelector = "app.kubernetes.io/name=csi,env notin (dev)"}));
  EXPECT_EQ(last().target,
            "/api/v1/pods?labelSelector=app.kubernetes.io%2Fname%3Dcsi%2Cenv%20notin%20%28dev%29");
  run(client_->list(pods, "", {.fieldSelector = "spec.nodeName=n\xc3\xa9~1+2"}));
  EXPECT_EQ(last().target, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn%C3%A9~1%2B2");
}

Json page(const std::vector<std::string>& names, const std::string& rv, const std::string& next) {
  Json items = Json::array();
  for (const auto& n : names)
    items.push_back({{"metadata", {{"name", n}}}});
  Json metadata = {{"resourceVersion", rv}};
  if (!next.empty())
    metadata["continue"] = next;
  return {{"kind", "ConfigMapList"}, {"metadata", metadata}, {"items", items}};
}

TEST_F(ClientTest, ListAllFollowsContinueTokens) {
  serve([](const Request& r) {
    if (r.target.find("continue=p2") != std::string::npos)
      return json(page({"c", "d"}, "7", "p3"));
    if (r.target.find("continue=p3") != std::string::npos)
      return json(page({"e"}, "7", ""));
    return json(page({"a", "b"}, "7", "p2"));
  });
  const auto all = run(client_->listAll(configmaps, "ns", {.resourceVersion = "0", .limit = 2}));
  ASSERT_EQ(all.items.size(), 5u);
  EXPECT_EQ(all.items[4]["metadata"]["name"], "e");
  EXPECT_EQ(all.items[4]["kind"], "ConfigMap");
  EXPECT_EQ(all.resourceVersion, "7");
  EXPECT_TRUE(all.continueToken.empty());
  const auto& requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].target, "/api/v1/namespaces/ns/configmaps?resourceVersion=0&limit=2");
  // A continue token pins the snapshot; a resourceVersion must not come with it.
  EXPECT_EQ(requests[1].target, "/api/v1/namespaces/ns/configmaps?continue=p2&limit=2");
  EXPECT_EQ(requests[2].target, "/api/v1/namespaces/ns/configmaps?continue=p3&limit=2");
  run(client_->listAll(configmaps, "ns"));
  EXPECT_EQ(server_->requests()[3].target, "/api/v1/namespaces/ns/configmaps?limit=500");
}

// The filter sees every item as its page comes, may change it, and drops what it refuses.
TEST_F(ClientTest, ListAllFiltersItemsPageByPage) {
  serve([](const Request& r) {
    if (r.target.find("continue=p2") != std::string::npos)
      return json(page({"c", "d"}, "7", ""));
    return json(page({"a", "b"}, "7", "p2"));
  });
  std::vector<std::string> seen;
  const kube::Client::ItemFilter keep = [&seen](Json& item) {
    const std::string name = item["metadata"]["name"];
    seen.push_back(name);
    item = {{"metadata", {{"name", name}}}}; // cut down
    return name != "b" && name != "c";
  };
  const auto all = run(client_->listAll(configmaps, "ns", {.limit = 2}, keep));
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "d"}));
  ASSERT_EQ(all.items.size(), 2u);
  EXPECT_EQ(all.items[0], (Json{{"metadata", {{"name", "a"}}}}));
  EXPECT_EQ(all.items[1]["metadata"]["name"], "d");
  EXPECT_EQ(all.resourceVersion, "7");
}

// With a field mask each item is built with only those fields; the list's own metadata (its
// resourceVersion, the continue token) is read whole.
TEST_F(ClientTest, ListAllBuildsOnlyTheMaskedFieldsOfEachItem) {
  serve([](const Request& r) {
    Json p = page({"a", "b"}, "7", r.target.find("continue=p2") == std::string::npos ? "p2" : "");
    for (auto& item : p["items"]) {
      item["data"] = {{"k", "v"}};
      item["metadata"]["labels"] = {{"x", "y"}};
    }
    return json(p);
  });
  const FieldMask names = FieldMask().keep({"metadata", "name"});
  const auto all = run(client_->listAll(configmaps, "ns", {.limit = 2, .fields = &names}));
  ASSERT_EQ(all.items.size(), 4u);
  EXPECT_EQ(all.items[0],
            (Json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "a"}}}}));
  EXPECT_EQ(all.resourceVersion, "7");
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(ClientTest, ListAllStartsOverUnpaginatedWhenTheContinueTokenExpired) {
  serve([](const Request& r) {
    if (r.target.find("continue=") != std::string::npos)
      return json(status(410, "Expired", "The provided continue parameter is too old"), 410);
    if (r.target.find("limit=") == std::string::npos)
      return json(page({"a", "b", "c"}, "9", ""));
    return json(page({"a"}, "8", "p2"));
  });
  const auto all = run(client_->listAll(configmaps, "ns", {.limit = 1}));
  ASSERT_EQ(all.items.size(), 3u);
  EXPECT_EQ(all.resourceVersion, "9");
  EXPECT_EQ(server_->requests().size(), 3u);
  EXPECT_EQ(server_->requests()[2].target, "/api/v1/namespaces/ns/configmaps");
}

TEST_F(ClientTest, CreatePostsWithTheFieldManager) {
  serve([](const Request& r) { return json(Json::parse(r.body), 201); });
  const Json created = run(client_->create(
      configmaps, {{"metadata", {{"name", "a"}, {"namespace", "ns"}}}, {"data", {{"k", "v"}}}},
      {.dryRun = true}));
  EXPECT_EQ(last().method, "POST");
  EXPECT_EQ(last().target, "/api/v1/namespaces/ns/configmaps?dryRun=All&fieldManager=csi-operator");
  EXPECT_EQ(last().headers.at("content-type"), "application/json");
  EXPECT_EQ(created.dump(), R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",)"
                            R"("namespace":"ns"},"data":{"k":"v"}})");
  EXPECT_EQ(observed_.back().verb, "create");
  EXPECT_THROW(run(client_->create(configmaps, {{"metadata", {{"name", "a"}}}})),
               std::invalid_argument);
}

TEST_F(ClientTest, ApplyIsAServerSideApplyPatch) {
  serve([](const Request& r) { return json(Json::parse(r.body)); });
  run(client_->apply(csidrivers,
                     {{"metadata", {{"name", "x.example.com"}}}, {"spec", Json::object()}}));
  EXPECT_EQ(last().method, "PATCH");
  EXPECT_EQ(
      last().target,
      "/apis/storage.k8s.io/v1/csidrivers/x.example.com?fieldManager=csi-operator&force=true");
  EXPECT_EQ(last().headers.at("content-type"), "application/apply-patch+yaml");
  const Json body = Json::parse(last().body);
  EXPECT_EQ(body["apiVersion"], "storage.k8s.io/v1");
  EXPECT_EQ(body["kind"], "CSIDriver");
  EXPECT_EQ(observed_.back().verb, "apply");

  run(client_->apply(
      driverdeployments, {{"metadata", {{"name", "hp"}}}, {"status", Json::object()}},
      {.dryRun = true, .force = false, .fieldManager = "tester", .subresource = "status"}));
  EXPECT_EQ(last().target,
            "/apis/csiop.dev/v1alpha1/driverdeployments/hp/status?dryRun=All&fieldManager=tester");
  EXPECT_THROW(run(client_->apply(configmaps, {{"metadata", {{"namespace", "ns"}}}})),
               std::invalid_argument); // no name
}

TEST_F(ClientTest, PatchUsesTheContentTypeOfItsKind) {
  serve([](const Request&) { return json(Json::object()); });
  run(client_->patch(deployments, "ns", "d", PatchType::StrategicMerge,
                     {{"spec", {{"replicas", 2}}}}));
  EXPECT_EQ(last().headers.at("content-type"), "application/strategic-merge-patch+json");
  EXPECT_EQ(last().target, "/apis/apps/v1/namespaces/ns/deployments/d?fieldManager=csi-operator");
  run(client_->patch(deployments, "ns", "d", PatchType::Merge, {{"a", 1}},
                     {.subresource = "scale"}));
  EXPECT_EQ(last().headers.at("content-type"), "application/merge-patch+json");
  EXPECT_EQ(last().target,
            "/apis/apps/v1/namespaces/ns/deployments/d/scale?fieldManager=csi-operator");
  run(client_->patch(nodes, "", "n1", PatchType::JsonPatch,
                     Json::parse(R"([{"op":"add","path":"/metadata/labels/a","value":"b"}])")));
  EXPECT_EQ(last().headers.at("content-type"), "application/json-patch+json");
  EXPECT_EQ(last().target, "/api/v1/nodes/n1?fieldManager=csi-operator");
  EXPECT_EQ(last().body, R"([{"op":"add","path":"/metadata/labels/a","value":"b"}])");
}

TEST_F(ClientTest, UpdatePutsTheObjectOrItsStatus) {
  serve([](const Request& r) { return json(Json::parse(r.body)); });
  run(client_->update(driverdeployments,
                      {{"apiVersion", "csiop.dev/v1alpha1"},
                       {"kind", "DriverDeployment"},
                       {"metadata", {{"name", "hp"}, {"resourceVersion", "5"}}},
                       {"status", {{"observedGeneration", 1}}}},
                      {.subresource = "status"}));
  EXPECT_EQ(last().method, "PUT");
  EXPECT_EQ(last().target,
            "/apis/csiop.dev/v1alpha1/driverdeployments/hp/status?fieldManager=csi-operator");
  EXPECT_EQ(Json::parse(last().body)["metadata"]["resourceVersion"], "5");
  EXPECT_EQ(observed_.back().verb, "update");
}

TEST_F(ClientTest, RemoveSendsDeleteOptions) {
  serve([](const Request&) { return json({{"kind", "Status"}, {"status", "Success"}}); });
  run(client_->remove(configmaps, "ns", "a",
                      {.propagationPolicy = Propagation::Foreground,
                       .preconditionUid = "u-1",
                       .preconditionResourceVersion = "9",
                       .gracePeriodSeconds = 0}));
  EXPECT_EQ(last().method, "DELETE");
  EXPECT_EQ(last().target, "/api/v1/namespaces/ns/configmaps/a");
  EXPECT_EQ(last().body, R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":)"
                         R"("Foreground","preconditions":{"uid":"u-1","resourceVersion":"9"},)"
                         R"("gracePeriodSeconds":0})");
  run(client_->remove(namespaces, "", "ns", {.dryRun = true}));
  EXPECT_EQ(last().body, R"({"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]})");
  EXPECT_EQ(observed_.back().verb, "delete");
  EXPECT_THROW(run(client_->remove(configmaps, "", "a")), std::invalid_argument);
}

// getOpt and removeIfExists: a missing object is an answer, not an error; any other error is
// still one.
TEST_F(ClientTest, GetOptAndRemoveIfExistsAnswerAMissingObjectWithoutAnError) {
  serve([](const Request& r) {
    if (r.target.find("/gone") != std::string::npos)
      return json(status(404, "NotFound"), 404);
    if (r.target.find("/secret") != std::string::npos)
      return json(status(403, "Forbidden"), 403);
    if (r.method == "DELETE")
      return json({{"kind", "Status"}, {"status", "Success"}});
    return json({{"kind", "ConfigMap"}, {"metadata", {{"name", "here"}}}});
  });
  const std::optional<Json> here = run(client_->getOpt(configmaps, "ns", "here"));
  ASSERT_TRUE(here);
  EXPECT_EQ((*here)["metadata"]["name"], "here");
  EXPECT_EQ(run(client_->getOpt(configmaps, "ns", "gone")), std::nullopt);
  EXPECT_THROW(run(client_->getOpt(configmaps, "ns", "secret")), ApiError);
  EXPECT_TRUE(run(client_->removeIfExists(configmaps, "ns", "here")));
  EXPECT_FALSE(run(client_->removeIfExists(configmaps, "ns", "gone")));
  EXPECT_THROW(run(client_->removeIfExists(configmaps, "ns", "secret")), ApiError);
  EXPECT_EQ(observed_.back().verb, "delete");
}

// attempt(): the outcome of a request as a value, to branch on without a catch.
TEST_F(ClientTest, AttemptTurnsApiAndTransportErrorsIntoValues) {
  serve([](const Request& r) {
    if (r.target.find("/taken") != std::string::npos)
      return json(status(409, "AlreadyExists", "configmaps \"taken\" already exists"), 409);
    if (r.target.find("/stale") != std::string::npos)
      return json(status(409, "Conflict"), 409);
    if (r.target.find("/broken") != std::string::npos)
      return Reply{.body = "not json"};
    return json({{"kind", "ConfigMap"}});
  });
  const auto ok = run(attempt(client_->get(configmaps, "ns", "fine")));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok.value()["kind"], "ConfigMap");
  EXPECT_EQ(ok.message(), "");

  const auto taken = run(attempt(client_->get(configmaps, "ns", "taken")));
  EXPECT_FALSE(taken);
  EXPECT_TRUE(taken.alreadyExists());
  EXPECT_FALSE(taken.conflict());
  ASSERT_NE(taken.apiError(), nullptr);
  EXPECT_EQ(taken.apiError()->code(), 409);
  EXPECT_NE(taken.message().find("already exists"), std::string::npos) << taken.message();
  EXPECT_THROW(taken.rethrow(), ApiError);

  const auto stale = run(attempt(client_->get(configmaps, "ns", "stale")));
  EXPECT_TRUE(stale.conflict());
  EXPECT_FALSE(stale.alreadyExists());

  const auto broken = run(attempt(client_->get(configmaps, "ns", "broken")));
  EXPECT_FALSE(broken);
  EXPECT_EQ(broken.apiError(), nullptr);
  EXPECT_FALSE(broken.message().empty());
  EXPECT_THROW(broken.rethrow(), TransportError);

  const auto removed = run(attempt([this]() -> asio::awaitable<void> {
    co_await client_->remove(configmaps, "ns", "taken");
  }()));
  EXPECT_TRUE(removed.alreadyExists());
}

TEST_F(ClientTest, DiscoveryAndVersion) {
  serve([](const Request& r) {
    if (r.target == "/apis/storage.k8s.io/v1")
      return json({{"kind", "APIResourceList"},
                   {"groupVersion", "storage.k8s.io/v1"},
                   {"resources",
                    {{{"name", "csidrivers"},
                      {"kind", "CSIDriver"},
                      {"namespaced", false},
                      {"verbs", {"get", "list"}}},
                     {{"name", "csistoragecapacities"}, {"namespaced", true}}}}});
    if (r.target == "/openapi/v3/api/v1?hash=AB12")
      return json({{"openapi", "3.0.0"}});
    if (r.target == "/version")
      return json({{"major", "1"},
                   {"minor", "36"},
                   {"gitVersion", "v1.36.4"},
                   {"platform", "linux/amd64"}});
    return json(status(404, "NotFound"), 404);
  });
  const auto list = run(client_->discovery("storage.k8s.io", "v1"));
  ASSERT_TRUE(list);
  EXPECT_EQ(list->groupVersion, "storage.k8s.io/v1");
  ASSERT_TRUE(list->find("csidrivers"));
  EXPECT_FALSE(list->find("csidrivers")->namespaced);
  EXPECT_EQ(list->find("csidrivers")->verbs, (std::vector<std::string>{"get", "list"}));
  EXPECT_TRUE(list->find("csistoragecapacities")->namespaced);
  EXPECT_FALSE(run(client_->discovery("bogus.example.com", "v1")));
  EXPECT_TRUE(run(client_->serves("storage.k8s.io", "v1", "csidrivers")));
  EXPECT_FALSE(run(client_->serves("storage.k8s.io", "v1", "volumeattachments")));
  EXPECT_FALSE(run(client_->serves("bogus.example.com", "v1", "x")));
  const auto v = run(client_->version());
  EXPECT_EQ(v.gitVersion, "v1.36.4");
  EXPECT_EQ(v.minor, "36");
  EXPECT_EQ(v.raw["platform"], "linux/amd64");
  EXPECT_EQ(observed_.back().verb, "version");
  EXPECT_EQ(observed_.front().verb, "discovery");
  EXPECT_EQ(run(client_->getPath("/openapi/v3/api/v1?hash=AB12")), Json({{"openapi", "3.0.0"}}));
  EXPECT_EQ(observed_.back().verb, "get");
}

} // namespace
} // namespace csiop::kube
