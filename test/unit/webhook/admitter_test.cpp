// The review with what needs the API server: the author's permissions (SubjectAccessReviews,
// answered here by a fake) and a reservation's rival, verified before it denies.
#include <gtest/gtest.h>

#include <set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <csiop/webhook/admitter.hpp>

#include "review_fixtures.hpp"

namespace csiop::webhook {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::example;
using testing::hostpath;
using testing::request;
using testing::reviewBody;

// The API server as the Admitter sees it.
struct FakeApi {
  std::function<bool(const UserInfo&, const Access&)> may = [](auto&, auto&) { return true; };
  std::map<std::string, Json> roles;             // name -> rules
  std::map<std::string, Json> driverDeployments; // name -> object
  std::size_t questions = 0;
  bool broken = false;
  // readyVolumesInUse: what it answers (nullopt: not set), and the drivers it was asked for.
  std::optional<bool> volumesReady;
  std::vector<std::string> readied;

  AuthorityApi api() {
    AuthorityApi out;
    out.allowed = [this](UserInfo user,
                         std::vector<Access> accesses) -> asio::awaitable<std::vector<bool>> {
      if (broken) {
        throw std::runtime_error("connection refused");
      }
      std::vector<bool> answers;
      for (const Access& a : accesses) {
        ++questions;
        answers.push_back(may(user, a));
      }
      co_return answers;
    };
    out.roleRules = [this](RoleRef role) -> asio::awaitable<std::optional<Json>> {
      std::optional<Json> rules;
      if (const auto it = roles.find(role.name); it != roles.end()) {
        rules = it->second;
      }
      co_return rules;
    };
    out.driverDeployment = [this](std::string name) -> asio::awaitable<std::optional<Json>> {
      std::optional<Json> stored;
      if (const auto it = driverDeployments.find(name); it != driverDeployments.end()) {
        stored = it->second;
      }
      co_return stored;
    };
    if (volumesReady) {
      out.readyVolumesInUse = [this](std::string driverName) -> asio::awaitable<bool> {
        readied.push_back(driverName);
        co_return *volumesReady;
      };
    }
    return out;
  }
};

Json as(Json r, const std::string& user, std::vector<std::string> groups = {}) {
  r["userInfo"] = {{"username", user}, {"groups", groups}};
  return r;
}

class AdmitterTest : public ::testing::Test {
protected:
  Json reviewOf(const Json& request) {
    const ClusterView view = cluster.view();
    Admitter admitter(
        view, fake.api(), reservations, [] { return std::chrono::steady_clock::now(); },
        AdmitterOptions{.claimGrace = 200ms, .claimPoll = 10ms});
    return run(admitter, request);
  }
  Json run(Admitter& admitter, const Json& request) {
    auto result = asio::co_spawn(io, admitter.review(reviewBody(request)), asio::use_future);
    io.restart();
    io.run();
    const ReviewResult r = result.get();
    EXPECT_EQ(r.httpStatus, 200) << r.body;
    return Json::parse(r.body).at("response");
  }

  asio::io_context io;
  testing::ClusterState cluster;
  Reservations reservations{[] { return std::chrono::steady_clock::now(); }};
  FakeApi fake;
};

TEST_F(AdmitterTest, AClusterAdminIsAdmittedWithOneQuestion) {
  fake.may = [](const UserInfo& u, const Access& a) {
    return u.username == "admin" && a == everything();
  };
  const Json response = reviewOf(as(request("CREATE", example("hostpath.yaml")), "admin"));
  EXPECT_TRUE(response["allowed"].get<bool>()) << response.dump();
  EXPECT_EQ(fake.questions, 1u);
}

TEST_F(AdmitterTest, AUserWhoMayDoEverythingItNeedsIsAdmitted) {
  // Not `*` on `*`, but every permission the hostpath driver's objects need.
  fake.may = [](const UserInfo&, const Access& a) { return !(a == everything()); };
  const Json response = reviewOf(as(request("CREATE", example("hostpath.yaml")), "storage-admin"));
  EXPECT_TRUE(response["allowed"].get<bool>()) << response.dump();
  EXPECT_GT(fake.questions, 10u);
}

TEST_F(AdmitterTest, AUserWhoMayOnlyCreateDriverDeploymentsIsDeniedNamingWhatTheyLack) {
  fake.may = [](const UserInfo&, const Access&) { return false; };
  const Json response = reviewOf(as(request("CREATE", example("hostpath.yaml")), "mallory"));
  EXPECT_FALSE(response["allowed"].get<bool>());
  EXPECT_EQ(response["status"]["code"], 403);
  const std::string message = response["status"]["message"];
  EXPECT_NE(message.find("user \"mallory\" may not do"), std::string::npos) << message;
  EXPECT_NE(message.find("create namespaces cluster-wide"), std::string::npos) << message;
  // The reservation made while deciding is released: the name is free for someone else.
  EXPECT_EQ(reservations.size(), 0u);
}

TEST_F(AdmitterTest, ABindingOfAForeignRoleIsComparedWithTheRoleWhenBindIsLacking) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["namespace"] = "kube-system";
  dd["spec"]["objects"] = Json::parse(R"([{
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
    "metadata": {"name": "b"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "powerful"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                  "name": "system:authenticated"}]}])");
  fake.roles["powerful"] =
      Json::parse(R"([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}])");
  // Everything but `bind`, `*` and listing the secrets of kube-system.
  fake.may = [](const UserInfo&, const Access& a) {
    return !(a == everything()) && a.verb != "bind" &&
           !(a.resource == "secrets" && a.verb == "list" && a.namespace_ == "kube-system");
  };
  Json response = reviewOf(as(request("CREATE", dd), "ns-admin"));
  EXPECT_FALSE(response["allowed"].get<bool>());
  const std::string message = response["status"]["message"];
  EXPECT_NE(message.find("spec.objects[0]: RoleBinding kube-system/b binds ClusterRole powerful: "
                         "needs list secrets in namespace kube-system (or bind "
                         "clusterroles.rbac.authorization.k8s.io \"powerful\" in namespace "
                         "kube-system)"),
            std::string::npos)
      << message;

  // Holding what the role grants is enough, as for the API server.
  fake.may = [](const UserInfo&, const Access& a) {
    return !(a == everything()) && a.verb != "bind";
  };
  response = reviewOf(as(request("CREATE", dd, {}, "uid-2"), "ns-admin"));
  EXPECT_TRUE(response["allowed"].get<bool>()) << response.dump();
}

TEST_F(AdmitterTest, AnUpdateThatChangesNoSpecAsksNothing) {
  fake.may = [](const UserInfo&, const Access&) { return false; };
  Json after = example("hostpath.yaml");
  after["metadata"]["finalizers"] = Json::array({"csiop.dev/cleanup"});
  const Json response = reviewOf(
      as(request("UPDATE", after, example("hostpath.yaml")), "system:serviceaccount:x:op"));
  EXPECT_TRUE(response["allowed"].get<bool>()) << response.dump();
  EXPECT_EQ(fake.questions, 0u);
}

TEST_F(AdmitterTest, AnswersAreRememberedForAWhile) {
  fake.may = [](const UserInfo& u, const Access& a) {
    return u.username == "admin" && a == everything();
  };
  const ClusterView view = cluster.view();
  Admitter admitter(view, fake.api(), reservations,
                    [] { return std::chrono::steady_clock::now(); });
  run(admitter, as(request("CREATE", example("hostpath.yaml"), {}, "a"), "admin"));
  run(admitter, as(request("CREATE", example("hostpath.yaml"), {}, "b"), "admin"));
  EXPECT_EQ(fake.questions, 1u);
  EXPECT_EQ(admitter.cachedAccesses(), 1u);
}

TEST_F(AdmitterTest, AnApiServerThatCannotBeAskedDenies) {
  fake.broken = true;
  const Json response = reviewOf(as(request("CREATE", example("hostpath.yaml")), "admin"));
  EXPECT_FALSE(response["allowed"].get<bool>());
  EXPECT_NE(response["status"]["message"].get<std::string>().find("connection refused"),
            std::string::npos);
}

TEST_F(AdmitterTest, TwoAdmissionsRacingAreCaughtOnceTheFirstIsStored) {
  Json first = hostpath("first", "race.csi.k8s.io");
  first["metadata"]["uid"] = "uid-first";
  ASSERT_TRUE(reviewOf(as(request("CREATE", first), "admin"))["allowed"].get<bool>());
  // Stored by the API server, not in the cache yet.
  fake.driverDeployments["first"] = first;
  const Json second =
      reviewOf(as(request("CREATE", hostpath("second", "race.csi.k8s.io")), "admin"));
  EXPECT_FALSE(second["allowed"].get<bool>());
  EXPECT_NE(second["status"]["message"].get<std::string>().find(
                "being claimed by DriverDeployment \"first\""),
            std::string::npos)
      << second.dump();
}

TEST_F(AdmitterTest, ARivalSeenInTheCacheDeniesWithoutAskingTheApiServer) {
  ASSERT_TRUE(
      reviewOf(as(request("CREATE", hostpath("first", "race.csi.k8s.io")), "admin"))["allowed"]
          .get<bool>());
  cluster.driverDeployments["first"] = "race.csi.k8s.io";
  EXPECT_FALSE(
      reviewOf(as(request("CREATE", hostpath("second", "race.csi.k8s.io")), "admin"))["allowed"]
          .get<bool>());
}

TEST_F(AdmitterTest, AForgedReviewsReservationDeniesNobody) {
  // Sent straight to the webhook's port: nothing of it is ever stored.
  Json forged = hostpath("forged", "ebs.csi.aws.com");
  forged["metadata"]["uid"] = "made-up";
  ASSERT_TRUE(reviewOf(as(request("CREATE", forged), "admin"))["allowed"].get<bool>());
  ASSERT_EQ(reservations.size(), 1u);
  // A stored object of that name but for another driver does not make it real either.
  fake.driverDeployments["forged"] = hostpath("forged", "other.csi.k8s.io");
  const auto started = std::chrono::steady_clock::now();
  const Json genuine =
      reviewOf(as(request("CREATE", hostpath("aws-ebs", "ebs.csi.aws.com")), "admin"));
  EXPECT_TRUE(genuine["allowed"].get<bool>()) << genuine.dump();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 200ms); // waited for the claim's grace
  // The genuine one holds the name now, once stored.
  fake.driverDeployments["aws-ebs"] = hostpath("aws-ebs", "ebs.csi.aws.com");
  EXPECT_FALSE(
      reviewOf(as(request("CREATE", hostpath("third", "ebs.csi.aws.com")), "admin"))["allowed"]
          .get<bool>());
}

TEST_F(AdmitterTest, ARivalDeniedForItsAuthorityFreesTheName) {
  fake.may = [](const UserInfo& u, const Access&) { return u.username == "admin"; };
  EXPECT_FALSE(
      reviewOf(as(request("CREATE", hostpath("first", "free.csi.k8s.io")), "mallory"))["allowed"]
          .get<bool>());
  EXPECT_TRUE(
      reviewOf(as(request("CREATE", hostpath("second", "free.csi.k8s.io")), "admin"))["allowed"]
          .get<bool>());
}

TEST(Reservations, AreBoundedAndReleasedByTheirHolderOnly) {
  std::chrono::steady_clock::time_point now{};
  Reservations r([&] { return now; }, std::chrono::seconds(60), 3);
  for (int i = 0; i < 10; ++i) {
    r.reserve("d" + std::to_string(i), "dd" + std::to_string(i));
    now += 1s;
  }
  EXPECT_EQ(r.size(), 3u);
  r.release("d9", "someone-else");
  EXPECT_TRUE(r.holder("d9", "x"));
  r.release("d9", "dd9");
  EXPECT_FALSE(r.holder("d9", "x"));
}

// A DELETE's decision reads what of the driver is in use; the pods with inline volumes are
// listed only then (the operator keeps them only while a decision needs them), and their
// readiness is awaited first. When they cannot be listed in time the review still answers with
// what it knows, and says the finalizer waits for the rest.
TEST_F(AdmitterTest, ADeleteReadiesWhatIsInUseFirstAndSaysSoWhenItCouldNot) {
  const Json dd = example("hostpath.yaml");
  const std::string driver = dd["spec"]["driverName"];
  cluster.inUse[driver] = "1 PersistentVolume (pv-1)";
  fake.volumesReady = true;
  Json response = reviewOf(as(request("DELETE", Json(), dd), "admin"));
  EXPECT_FALSE(response["allowed"].get<bool>()) << response.dump();
  EXPECT_EQ(fake.readied, std::vector<std::string>{driver});

  cluster.inUse.clear();
  fake.volumesReady = false;
  response = reviewOf(as(request("DELETE", Json(), dd), "admin"));
  EXPECT_TRUE(response["allowed"].get<bool>()) << response.dump();
  ASSERT_TRUE(response.contains("warnings")) << response.dump();
  EXPECT_NE(response["warnings"].dump().find("could not be listed in time: the deletion waits"),
            std::string::npos)
      << response.dump();

  fake.readied.clear();
  (void)reviewOf(as(request("CREATE", dd), "admin"));
  EXPECT_TRUE(fake.readied.empty()) << "only a DELETE reads what is in use";
}

} // namespace
} // namespace csiop::webhook
