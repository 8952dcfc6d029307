// Defaulting: what an unset field becomes.
#include <gtest/gtest.h>

#include <csiop/api/defaults.hpp>

#include "../common/render_test_util.hpp"

namespace csiop::api {
namespace {

using testutil::dd;
using testutil::load;

TEST(Defaults, MinimalSpec) {
  const Effective e = resolve(load(dd("")));
  EXPECT_EQ(e.namespace_, "csi-demo");
  EXPECT_TRUE(e.createNamespace);
  EXPECT_EQ(e.deletionPolicy, "Delete");
  EXPECT_TRUE(e.csiDriver.attachRequired);
  EXPECT_FALSE(e.csiDriver.podInfoOnMount);
  EXPECT_EQ(e.csiDriver.volumeLifecycleModes, std::vector<std::string>{"Persistent"});
  EXPECT_EQ(e.csiDriver.fsGroupPolicy, "ReadWriteOnceWithFSType");
  EXPECT_FALSE(e.csiDriver.tokenRequests.has_value());
  EXPECT_EQ(e.node.kubeletDir, "/var/lib/kubelet");
  EXPECT_EQ(e.node.pod.priorityClassName, "system-node-critical");
  EXPECT_EQ(e.node.tolerations, defaults::nodeTolerations());
  EXPECT_EQ(e.node.registrarHttp.flag(), ":9809");
  EXPECT_TRUE(e.node.livenessProbe.enabled);
  EXPECT_EQ(e.node.livenessProbe.http.flag(), ":9808");
  EXPECT_EQ(e.node.registrar.securityContext, defaults::sidecarSecurityContext());
  EXPECT_EQ(e.node.registrar.image, defaultImage(Component::NodeDriverRegistrar, ""));
  EXPECT_EQ(e.node.registrar.resources, defaults::sidecarResources());
  EXPECT_EQ(e.node.driver.imagePullPolicy, "IfNotPresent");
  EXPECT_TRUE(e.node.driver.resources.is_null());
  EXPECT_FALSE(e.controller.has_value());
}

TEST(Defaults, Controller) {
  const Effective e = resolve(load(dd("  controller: {}\n")));
  ASSERT_TRUE(e.controller);
  const auto& c = *e.controller;
  EXPECT_EQ(c.kind, "Deployment");
  EXPECT_EQ(c.replicas, 1);
  EXPECT_EQ(c.pod.priorityClassName, "system-cluster-critical");
  const std::vector<std::pair<Component, bool>> enabled = {{Component::Provisioner, true},
                                                           {Component::Attacher, true},
                                                           {Component::Resizer, false},
                                                           {Component::Snapshotter, false},
                                                           {Component::HealthMonitor, false}};
  for (const auto& [component, on] : enabled) {
    EXPECT_EQ(c.sidecar(component)->enabled, on);
    EXPECT_FALSE(c.sidecar(component)->leaderElection.enabled);
  }
  EXPECT_EQ(c.sidecar(Component::Provisioner)->http.port, 8080);
  EXPECT_EQ(c.sidecar(Component::HealthMonitor)->http.port, 8084);
}

TEST(Defaults, HttpEndpointsAsUpstreamWritesThem) {
  EXPECT_FALSE(parseHttpEndpoint("")->enabled); // none
  const auto all = parseHttpEndpoint(":8080");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->host, "");
  EXPECT_EQ(all->port, 8080);
  EXPECT_FALSE(all->loopback());
  for (const char* local : {"localhost:1", "127.0.0.1:29653", "[::1]:9808"}) {
    const auto e = parseHttpEndpoint(local);
    ASSERT_TRUE(e) << local;
    EXPECT_TRUE(e->loopback()) << local;
    EXPECT_EQ(e->flag(), local);
  }
  EXPECT_FALSE(parseHttpEndpoint("0.0.0.0:9808")->loopback());
  for (const char* bad : {"8080", "localhost", ":0", ":65536", ":80x", "::1:80", "a b:1", ":"}) {
    EXPECT_FALSE(parseHttpEndpoint(bad)) << bad;
  }
}

TEST(Defaults, AttacherFollowsAttachRequired) {
  const Effective e = resolve(load(dd("  csiDriver: {attachRequired: false}\n  controller: {}\n")));
  EXPECT_FALSE(e.controller->sidecar(Component::Attacher)->enabled);
}

TEST(Defaults, LeaderElectionFollowsReplicasThenControllerThenSidecar) {
  Effective e = resolve(load(dd("  controller: {replicas: 2}\n")));
  EXPECT_TRUE(e.controller->sidecar(Component::Provisioner)->leaderElection.enabled);
  e = resolve(load(dd("  controller: {leaderElection: {enabled: true, retryPeriod: 2s}, "
                      "attacher: {leaderElection: {enabled: false}}}\n")));
  EXPECT_TRUE(e.controller->sidecar(Component::Provisioner)->leaderElection.enabled);
  EXPECT_EQ(e.controller->sidecar(Component::Provisioner)->leaderElection.retryPeriod, "2s");
  EXPECT_FALSE(e.controller->sidecar(Component::Attacher)->leaderElection.enabled);
  EXPECT_EQ(e.controller->sidecar(Component::Attacher)->leaderElection.retryPeriod, "2s");
}

TEST(Defaults, TrailingSlashesAreTrimmed) {
  const Effective e =
      resolve(load(dd("  imageRegistry: mirror.example.com/csi//\n  node: {kubeletDir: /k/}\n")));
  EXPECT_EQ(e.imageRegistry, "mirror.example.com/csi");
  EXPECT_EQ(e.node.kubeletDir, "/k");
  EXPECT_EQ(e.node.registrar.image,
            defaultImage(Component::NodeDriverRegistrar, "mirror.example.com/csi"));
}

TEST(Defaults, ExplicitEmptyListsStayEmpty) {
  // `tolerations: []` opts out of the tolerate-everything default.
  const Effective e = resolve(load(dd("  node: {tolerations: []}\n")));
  EXPECT_EQ(e.node.tolerations, Json::array());
}

// spec.rollout: the defaults its description documents, whether it is absent, empty or only
// names the type.
TEST(Defaults, RolloutIsUnverifiedWithTheDocumentedPolicy) {
  for (const char* spec : {"", "  rollout: {}\n", "  rollout: {type: Verified}\n"}) {
    SCOPED_TRACE(spec);
    const EffectiveRollout r = resolve(load(dd(spec))).rollout;
    EXPECT_EQ(r.verified, std::string(spec).find("Verified") != std::string::npos);
    EXPECT_EQ(r.canaryNodes, 1);
    EXPECT_TRUE(r.canarySelector.empty());
    EXPECT_EQ(r.batchSize, "25%");
    EXPECT_EQ(r.soakSeconds, 60);
    EXPECT_EQ(r.gateTimeoutSeconds, 300);
    EXPECT_EQ(r.progressDeadlineSeconds, 600);
    EXPECT_TRUE(r.rollBack);
    EXPECT_FALSE(r.paused);
  }
}

TEST(Defaults, RolloutReadsEveryField) {
  const EffectiveRollout r = resolve(load(dd(R"(  rollout:
    type: Verified
    canary: {nodes: 3, nodeSelector: {pool: canary}}
    batchSize: 4
    soakSeconds: 0
    gateTimeoutSeconds: 30
    progressDeadlineSeconds: 90
    onFailure: Hold
    paused: true
)")))
                                 .rollout;
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.canaryNodes, 3);
  EXPECT_EQ(r.canarySelector, (StringMap{{"pool", "canary"}}));
  EXPECT_EQ(r.batchSize, 4);
  EXPECT_EQ(r.soakSeconds, 0);
  EXPECT_EQ(r.gateTimeoutSeconds, 30);
  EXPECT_EQ(r.progressDeadlineSeconds, 90);
  EXPECT_FALSE(r.rollBack);
  EXPECT_TRUE(r.paused);
  EXPECT_EQ(resolve(load(dd("  rollout: {type: Verified, batchSize: '10%'}\n"))).rollout.batchSize,
            "10%");
}

} // namespace
} // namespace csiop::api
