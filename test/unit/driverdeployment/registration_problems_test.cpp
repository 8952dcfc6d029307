#include <gtest/gtest.h>

#include <map>

#include <csiop/driverdeployment/registrar_logs.hpp>
#include <csiop/driverdeployment/registration_problems.hpp>

#include "cached_pods.hpp"

namespace csiop::driverdeployment {
namespace {

using Json = nlohmann::ordered_json;
using namespace std::chrono_literals;

constexpr const char* kDriver = "hostpath.csi.k8s.io";

api::WallTime at(const char* text) {
  return api::parseRfc3339OrEpoch(text);
}

// A node plugin pod on `node`, Ready since `readySince` ("" : not Ready), with these container
// statuses.
Json pluginPod(const std::string& node, const std::string& readySince, Json containers = {}) {
  Json conditions = Json::array();
  if (!readySince.empty()) {
    conditions.push_back(
        {{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", readySince}});
  } else {
    conditions.push_back({{"type", "Ready"}, {"status", "False"}});
  }
  Json status = {{"phase", "Running"}, {"conditions", conditions}};
  if (!containers.is_null()) {
    status["containerStatuses"] = std::move(containers);
  }
  return Json{{"metadata",
               {{"namespace", "csi-hostpath"},
                {"name", "hostpath-node-" + node},
                {"uid", "uid-" + node},
                {"creationTimestamp", "2026-11-29T10:00:00Z"}}},
              {"spec", {{"nodeName", node}}},
              {"status", std::move(status)}};
}

Json restartedRegistrar(int restarts, const std::string& message) {
  return Json::array({{{"name", "node-driver-registrar"},
                       {"restartCount", restarts},
                       {"state", {{"running", {{"startedAt", "2026-11-29T10:05:00Z"}}}}},
                       {"lastState",
                        {{"terminated",
                          {{"exitCode", 1},
                           {"reason", "Error"},
                           {"message", message},
                           {"finishedAt", "2026-11-29T10:04:59Z"}}}}}}});
}

struct Fixture {
  std::vector<CachedPod> pods;
  std::map<std::string, CachedCSINode> csiNodes;

  RegistrationProblems at(api::WallTime now) const {
    return registrationProblems(
        test::podPointers(pods),
        [this](const std::string& node) -> const CachedCSINode* {
          const auto found = csiNodes.find(node);
          return found == csiNodes.end() ? nullptr : &found->second;
        },
        kDriver, now);
  }
};

TEST(RegistrationProblems, ANodeThatListsTheDriverIsNotReported) {
  Fixture f{test::decoded({pluginPod("a", "2026-11-29T10:00:00Z")}),
            {{"a", CachedCSINode{"a", {"other.csi", kDriver}}}}};
  const RegistrationProblems p = f.at(at("2026-11-29T11:00:00Z"));
  EXPECT_TRUE(p.nodes.empty());
  EXPECT_FALSE(p.recheckAt);
}

TEST(RegistrationProblems, AReadyPodIsGivenTheGracePeriodThenReportedNotRegistered) {
  Fixture f{test::decoded({pluginPod("a", "2026-11-29T10:00:00Z")}),
            {{"a", CachedCSINode{"a", {"other.csi"}}}}};
  const RegistrationProblems early = f.at(at("2026-11-29T10:00:10Z"));
  EXPECT_TRUE(early.nodes.empty());
  ASSERT_TRUE(early.recheckAt);
  EXPECT_EQ(*early.recheckAt, at("2026-11-29T10:00:30Z"));

  const RegistrationProblems late = f.at(at("2026-11-29T10:00:30Z"));
  ASSERT_EQ(late.nodes.size(), 1u);
  const UnregisteredNode& n = late.nodes[0];
  EXPECT_EQ(n.node, "a");
  EXPECT_EQ(n.reason, registration::kNotRegistered);
  EXPECT_EQ(n.pod, "hostpath-node-a");
  EXPECT_EQ(n.podNamespace, "csi-hostpath");
  EXPECT_FALSE(n.previousLog);
  EXPECT_NE(n.message.find("Ready since 2026-11-29T10:00:00Z"), std::string::npos) << n.message;
  EXPECT_NE(n.message.find("plugins_registry"), std::string::npos) << n.message;
  EXPECT_FALSE(late.recheckAt);
  // The same message on the next pass: no status write from the clock alone.
  EXPECT_EQ(f.at(at("2026-11-29T10:07:00Z")).nodes, late.nodes);
}

TEST(RegistrationProblems, ANodeWithoutACSINodeIsToldApart) {
  Fixture f{test::decoded({pluginPod("a", "2026-11-29T10:00:00Z")}), {}};
  const RegistrationProblems p = f.at(at("2026-11-29T10:01:00Z"));
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_EQ(p.nodes[0].reason, registration::kNoCSINode);
  EXPECT_NE(p.nodes[0].message.find("no CSINode"), std::string::npos);
}

TEST(RegistrationProblems, ARestartedRegistrarIsReportedWithItsLastExitEvenWhileNotReady) {
  Fixture f{test::decoded({pluginPod(
                "a", "", restartedRegistrar(3, "plugin registration failed:\ndial unix"))}),
            {{"a", CachedCSINode{"a", {}}}}};
  const RegistrationProblems p = f.at(at("2026-11-29T10:05:01Z"));
  ASSERT_EQ(p.nodes.size(), 1u);
  const UnregisteredNode& n = p.nodes[0];
  EXPECT_EQ(n.reason, registration::kRegistrarRestarting);
  EXPECT_TRUE(n.previousLog);
  EXPECT_EQ(n.restarts, 3);
  EXPECT_EQ(n.message, "the registrar of plugin pod hostpath-node-a restarted 3 times; its last "
                       "run ended at 2026-11-29T10:04:59Z with exit code 1 (Error): plugin "
                       "registration failed: / dial unix");
}

TEST(RegistrationProblems, APodNotReadyWithoutRegistrarRestartsIsThePodsOwnStory) {
  Fixture f{test::decoded({pluginPod("a", "")}), {{"a", CachedCSINode{"a", {}}}}};
  EXPECT_TRUE(f.at(at("2026-11-29T11:00:00Z")).nodes.empty());
}

TEST(RegistrationProblems, OneReportPerNodeFromItsNewestPodSortedByNode) {
  Json old = pluginPod("b", "2026-11-29T09:00:00Z");
  Json newer = pluginPod("b", "2026-11-29T10:00:00Z", restartedRegistrar(1, "x"));
  newer["metadata"]["name"] = "hostpath-node-b2";
  newer["metadata"]["uid"] = "uid-b2";
  newer["metadata"]["creationTimestamp"] = "2026-11-29T10:00:00Z";
  old["metadata"]["creationTimestamp"] = "2026-11-29T09:00:00Z";
  Json deleting = pluginPod("c", "2026-11-29T09:00:00Z");
  deleting["metadata"]["deletionTimestamp"] = "2026-11-29T10:00:00Z";
  Fixture f{test::decoded({old, pluginPod("a", "2026-11-29T09:00:00Z"), newer, deleting}), {}};
  const RegistrationProblems p = f.at(at("2026-11-29T11:00:00Z"));
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.nodes[0].node, "a");
  EXPECT_EQ(p.nodes[1].node, "b");
  EXPECT_EQ(p.nodes[1].pod, "hostpath-node-b2");
  EXPECT_EQ(p.nodes[1].reason, registration::kRegistrarRestarting);
}

TEST(RegistrationProblems, PrintableLineKeepsAStatusMessageValidAndBounded) {
  EXPECT_EQ(printableLine("a\r\nb\n\nc\td", 100), "a / b / c d");
  EXPECT_EQ(printableLine("caf\xc3\xa9", 100), "caf??");
  EXPECT_EQ(printableLine(std::string(50, 'x'), 10), std::string(10, 'x'));
  EXPECT_EQ(printableLine("\n\nx", 10), "x");
}

TEST(RegistrarLogs, TheLastLinesAreKeptSqueezedAndCut) {
  using Lines = std::vector<std::string>;
  EXPECT_EQ(logLines(""), Lines{});
  EXPECT_EQ(logLines("one\n\ntwo  \nthree\n", 2), (Lines{"two", "three"}));
  EXPECT_EQ(logLines("only"), Lines{"only"});
  EXPECT_EQ(logLines("I1129 12:09:55.952750       1 main.go:145] \"Version\""),
            Lines{"I1129 12:09:55.952750 1 main.go:145] \"Version\""});
  EXPECT_EQ(logLines(std::string(1000, 'y') + "\n"),
            Lines{std::string(kRegistrarLogLineMax, 'y') + "..."});
}

TEST(RegistrarLogs, TheKubeletsCannotReadAnswerIsToldFromALog) {
  // The kubelet answers 200 with this text when the container's log file is gone.
  EXPECT_EQ(kubeletLogError("unable to retrieve container logs for containerd://4f2a9c"),
            "unable to retrieve container logs for containerd://4f2a9c");
  EXPECT_EQ(kubeletLogError("unable to retrieve container logs for containerd://4f2a9c\n"),
            "unable to retrieve container logs for containerd://4f2a9c");
  EXPECT_EQ(kubeletLogError("I1129 main.go:145] Version\nunable to retrieve container logs for x"),
            std::nullopt)
      << "a log that quotes the text is a log";
  EXPECT_EQ(kubeletLogError(""), std::nullopt);
  EXPECT_EQ(kubeletLogError("E1129 connection refused"), std::nullopt);
  // The CRI log reader's, when the exited container's log file is not (or no longer) there.
  const std::string missing =
      "failed to try resolving symlinks in path \"/var/log/pods/csi_node-x_4b6c/"
      "node-driver-registrar/0.log\": lstat /var/log/pods/csi_node-x_4b6c/"
      "node-driver-registrar/0.log: no such file or directory";
  EXPECT_EQ(kubeletLogError(missing), printableLine(missing, kRegistrarLogLineMax));
  EXPECT_NE(kubeletLogError("failed to open log file \"/var/log/pods/x/0.log\": EACCES"),
            std::nullopt);
  EXPECT_EQ(kubeletLogError("I1129 main.go:145] failed to open log file"), std::nullopt)
      << "a line of the registrar that mentions it is a log";
}

TEST(RegistrarLogs, TheTailThatFitsIsQuotedTheEndFirst) {
  const std::vector<std::string> lines = {"first", "second", "the error"};
  EXPECT_EQ(quotedTail(lines, 1000), "\"first\" / \"second\" / \"the error\"");
  // "... / " (6) + "second" quoted (8) + " / " (3) + "the error" quoted (11) = 28
  EXPECT_EQ(quotedTail(lines, 28), "... / \"second\" / \"the error\"");
  EXPECT_EQ(quotedTail(lines, 27), "... / \"the error\"");
  EXPECT_EQ(quotedTail(lines, 3), "... / \"the error\"") << "the last line, whatever the budget";
  EXPECT_EQ(quotedTail({}, 100), "");
}

TEST(RegistrarLogs, ALogIsReadAgainAfterTheRefreshOrARestartAndForgottenWithItsPod) {
  RegistrarLogs logs;
  const auto t0 = RegistrarLogs::Clock::time_point{} + 1h;
  UnregisteredNode node{"a", "csi", "p", "uid-p", registration::kNotRegistered, "m", false, 0};
  EXPECT_TRUE(logs.due(node, t0));
  EXPECT_EQ(logs.noteFor(node, 1000), "");
  logs.record(node, {"Registration Server started"}, "", t0);
  EXPECT_FALSE(logs.due(node, t0 + 59s));
  EXPECT_TRUE(logs.due(node, t0 + kRegistrarLogRefresh));
  EXPECT_EQ(logs.noteFor(node, 1000),
            "; the registrar's log ends: \"Registration Server started\"");

  UnregisteredNode restarted = node;
  restarted.reason = registration::kRegistrarRestarting;
  restarted.previousLog = true;
  restarted.restarts = 1;
  EXPECT_TRUE(logs.due(restarted, t0 + 1s));
  logs.record(restarted, {}, "the operator may not read pods/log", t0 + 1s);
  EXPECT_EQ(logs.noteFor(restarted, 1000), "; the exited registrar's log could not be read (the "
                                           "operator may not read pods/log)");
  logs.record(restarted, {}, "", t0 + 2s);
  EXPECT_EQ(logs.noteFor(restarted, 1000), "; the exited registrar's log is empty");

  EXPECT_EQ(logs.readAgainIn(), kRegistrarLogRefresh);

  // The kubelet could not read the file: read again soon, then at the usual pace.
  restarted.restarts = 2;
  logs.record(restarted, {}, "unable to retrieve container logs for containerd://c1", t0 + 3s,
              true);
  EXPECT_EQ(logs.noteFor(restarted, 1000), "; the exited registrar's log could not be read "
                                           "(unable to retrieve container logs for "
                                           "containerd://c1)");
  EXPECT_EQ(logs.readAgainIn(), kRegistrarLogRetry);
  EXPECT_FALSE(logs.due(restarted, t0 + 3s + kRegistrarLogRetry - 1s));
  EXPECT_TRUE(logs.due(restarted, t0 + 3s + kRegistrarLogRetry));
  logs.record(restarted, {"E1 connection refused"}, "", t0 + 14s, true);
  EXPECT_EQ(logs.readAgainIn(), kRegistrarLogRefresh) << "passing only for a failed read";
  EXPECT_FALSE(logs.due(restarted, t0 + 14s + kRegistrarLogRetry));

  logs.retain({"uid-other"});
  EXPECT_EQ(logs.size(), 0u);
  EXPECT_TRUE(logs.due(node, t0 + 3s));
}

} // namespace
} // namespace csiop::driverdeployment
