// What is checked before a rollout beyond the fields: the group snapshot API the snapshotter's
// release watches, a node plugin that could not preempt ordinary pods, and sidecar flags the
// image's release does not know.
#include <gtest/gtest.h>

#include <csiop/api/images.hpp>
#include <csiop/render/check.hpp>
#include <csiop/render/prerequisites.hpp>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using testutil::dd;
using testutil::load;

std::vector<std::string> groupSnapshotApis(const std::string& snapshotter) {
  const api::Effective e =
      api::resolve(load(dd("  controller:\n    snapshotter: " + snapshotter + "\n")));
  std::vector<std::string> out;
  for (const auto& a : render::requiredApis(e)) {
    if (a.group == "groupsnapshot.storage.k8s.io") {
      out.push_back(a.str());
    }
  }
  return out;
}

std::vector<std::string> both(const char* version) {
  const std::string prefix = std::string("groupsnapshot.storage.k8s.io/") + version + "/";
  return {prefix + "volumegroupsnapshotclasses", prefix + "volumegroupsnapshotcontents"};
}

TEST(Preflight, TheGroupSnapshotAPIIsTheOneTheSnapshottersReleaseWatches) {
  const std::string image = "registry.k8s.io/sig-storage/csi-snapshotter:";
  const std::string gate = ", args: ['--feature-gates=CSIVolumeGroupSnapshot=true']}";
  EXPECT_EQ(groupSnapshotApis("{enabled: true, image: " + image +
                              "v8.0.1, args: [--enable-volume-group-snapshots]}"),
            both("v1alpha1"));
  EXPECT_EQ(groupSnapshotApis("{enabled: true, image: " + image + "v8.2.0" + gate),
            both("v1beta1"));
  EXPECT_EQ(groupSnapshotApis("{enabled: true, image: " + image + "v8.3.0" + gate),
            both("v1beta1"));
  // external-snapshotter#1385: v8.4 and v8.5 watch v1beta2 only.
  EXPECT_EQ(groupSnapshotApis("{enabled: true, image: " + image + "v8.5.0" + gate),
            both("v1beta2"));
  EXPECT_EQ(groupSnapshotApis("{enabled: true, image: " + image + "v8.6.0" + gate), both("v1"));
  EXPECT_EQ(
      groupSnapshotApis("{enabled: true, image: mirror.example.com/csi-snapshotter:v8.6.0" + gate),
      both("v1"));
}

TEST(Preflight, NoGroupSnapshotAPIIsNeededWithoutGroupSnapshots) {
  const std::string image = "registry.k8s.io/sig-storage/csi-snapshotter:v8.6.0";
  EXPECT_TRUE(groupSnapshotApis("{enabled: true}").empty());
  EXPECT_TRUE(groupSnapshotApis("{enabled: true, image: " + image +
                                ", args: ['--feature-gates=CSIVolumeGroupSnapshot=false']}")
                  .empty());
  EXPECT_TRUE(groupSnapshotApis("{enabled: true, image: " + image +
                                ", args: ['--feature-gates=CSIVolumeGroupSnapshot=true,"
                                "CSIVolumeGroupSnapshot=false']}")
                  .empty());
  EXPECT_TRUE(groupSnapshotApis("{enabled: false, image: " + image +
                                ", args: ['--feature-gates=CSIVolumeGroupSnapshot=true']}")
                  .empty());
  // A vendor's own build: its release is not known.
  EXPECT_TRUE(groupSnapshotApis("{enabled: true, image: example.com/snap:v8.6.0, "
                                "args: ['--feature-gates=CSIVolumeGroupSnapshot=true']}")
                  .empty());
}

std::vector<std::string> lowPriority(const std::string& spec, render::PriorityClasses classes) {
  return render::lowPriorityNodePlugins(api::resolve(load(dd(spec))), classes);
}

TEST(Preflight, ANodePluginThatCannotPreemptOrdinaryPodsIsReported) {
  const render::PriorityClasses cluster{{{"system-node-critical", 2000001000},
                                         {"system-cluster-critical", 2000000000},
                                         {"batch-low", -10},
                                         {"normal", 0},
                                         {"tenant-high", 1000}},
                                        0};
  EXPECT_TRUE(lowPriority("", cluster).empty()); // system-node-critical
  EXPECT_TRUE(lowPriority("  node: {priorityClassName: tenant-high}\n", cluster).empty());
  EXPECT_TRUE(lowPriority("  node: {priorityClassName: not-there}\n", cluster).empty());
  EXPECT_EQ(lowPriority("  node: {priorityClassName: \"\"}\n", cluster),
            std::vector<std::string>{
                "spec.node.priorityClassName: the node plugin's pods run at priority 0 (no "
                "PriorityClass), no higher than pods that name no PriorityClass (0): on a full "
                "node they cannot preempt one and the driver is never registered there; name a "
                "higher class (system-node-critical by default)"});
  EXPECT_EQ(lowPriority("  node: {priorityClassName: normal}\n", cluster).size(), 1U);
  // A globalDefault class above the node plugin's: every pod that names none outranks it.
  render::PriorityClasses raised = cluster;
  raised.defaultPriority = 1000;
  const auto lines = lowPriority("  node: {priorityClassName: tenant-high}\n", raised);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_NE(lines[0].find("priority 1000 (PriorityClass tenant-high), no higher than pods that "
                          "name no PriorityClass (1000)"),
            std::string::npos)
      << lines[0];
}

std::vector<std::string> problems(const std::string& spec) {
  std::vector<std::string> out;
  for (const auto& e : render::checkRendered(load(dd(spec)))) {
    out.push_back(e.message());
  }
  return out;
}

TEST(Preflight, AFlagTheSnapshottersReleaseDoesNotKnowIsRefusedAtItsArgument) {
  const auto found = problems(R"(  controller:
    snapshotter:
      enabled: true
      image: registry.k8s.io/sig-storage/csi-snapshotter:v8.2.1
      args: [--timeout=150s, --enable-volume-group-snapshots=true]
)");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0],
            "spec.controller.snapshotter.args[1]: Invalid value: "
            "\"--enable-volume-group-snapshots=true\": csi-snapshotter v8.2.1 has no flag "
            "--enable-volume-group-snapshots (\"flag provided but not defined\": the container "
            "exits at start; csi-snapshotter v8.1.1 was the last release with it, v8.2.0 the "
            "first without)");
}

TEST(Preflight, AFlagThatCameLaterIsRefusedWithTheReleaseThatBroughtIt) {
  const auto found = problems(R"(  controller:
    snapshotter:
      enabled: true
      image: registry.k8s.io/sig-storage/csi-snapshotter:v8.1.1
      args: [--feature-gates=CSIVolumeGroupSnapshot=true]
)");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0],
            "spec.controller.snapshotter.args[0]: Invalid value: "
            "\"--feature-gates=CSIVolumeGroupSnapshot=true\": csi-snapshotter v8.1.1 has no flag "
            "--feature-gates (\"flag provided but not defined\": the container exits at start; "
            "it came in v8.2.0)");
}

TEST(Preflight, AMisspelledFlagIsRefused) {
  const auto found = problems(R"(  node:
    registrar: {args: [--v=2, --kubelet-registraton-path=/x]}
)");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_NE(found[0].find("spec.node.registrar.args[1]: Invalid value: "
                          "\"--kubelet-registraton-path=/x\": csi-node-driver-registrar "),
            std::string::npos)
      << found[0];
  EXPECT_NE(found[0].find("has no flag --kubelet-registraton-path"), std::string::npos);
}

TEST(Preflight, TheOperatorsOwnFlagsAreCheckedAtTheImage) {
  // The operator passes --leader-election-lease-duration for leaderElection.leaseDuration;
  // csi-provisioner has it from v3.0.0 on.
  const auto found = problems(R"(  controller:
    leaderElection: {enabled: true, leaseDuration: 30s}
    provisioner: {image: "registry.k8s.io/sig-storage/csi-provisioner:v2.2.2"}
)");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0],
            "spec.controller.provisioner.image: Invalid value: "
            "\"registry.k8s.io/sig-storage/csi-provisioner:v2.2.2\": csi-provisioner v2.2.2 has "
            "no flag --leader-election-lease-duration (\"flag provided but not defined\": the "
            "container exits at start; it came in v3.0.0); the operator passes it for this "
            "sidecar's settings: choose a newer release");
  // A release older than any in the table is not judged.
  EXPECT_TRUE(problems(R"(  node:
    livenessProbe: {image: registry.k8s.io/sig-storage/livenessprobe:v1.1.0}
)")
                  .empty());
}

// What lets an admission skip the check: every flag the operator passes, with every setting
// that adds one, is one the default image's release accepts. The images are named (as the
// defaults) so that the check runs.
TEST(Preflight, TheDefaultImagesAcceptEveryFlagTheOperatorPasses) {
  const auto image = [](api::Component c) { return api::defaultImage(c, ""); };
  using C = api::Component;
  const std::string nodePlugins = "  csiDriver: {storageCapacity: true}\n"
                                  "  node:\n"
                                  "    registrar: {image: " +
                                  image(C::NodeDriverRegistrar) +
                                  ", httpPort: 9809}\n"
                                  "    livenessProbe: {image: " +
                                  image(C::LivenessProbe) +
                                  "}\n"
                                  "  windowsNode:\n"
                                  "    driver: {image: example.com/driver:v1-windows}\n"
                                  "    registrar: {image: " +
                                  image(C::NodeDriverRegistrar) +
                                  "}\n"
                                  "    livenessProbe: {image: " +
                                  image(C::LivenessProbe) + "}\n";
  const std::string sidecars = "    replicas: 2\n"
                               "    leaderElection: {enabled: true, leaseDuration: 30s, "
                               "renewDeadline: 20s, retryPeriod: 5s}\n"
                               "    attacher: {image: " +
                               image(C::Attacher) +
                               "}\n"
                               "    resizer: {enabled: true, image: " +
                               image(C::Resizer) +
                               "}\n"
                               "    snapshotter: {enabled: true, image: " +
                               image(C::Snapshotter) +
                               "}\n"
                               "    healthMonitor: {enabled: true, image: " +
                               image(C::HealthMonitor) +
                               "}\n"
                               "    livenessProbe: {image: " +
                               image(C::LivenessProbe) + "}\n";
  // A provisioner in the controller, and one on every node.
  const std::string central = nodePlugins + "  controller:\n" + sidecars +
                              "    provisioner: {image: " + image(C::Provisioner) + "}\n";
  EXPECT_EQ(problems(central), std::vector<std::string>{});
  std::string onEveryNode =
      nodePlugins + "  controller:\n" + sidecars + "    provisioner: {enabled: false}\n";
  onEveryNode.replace(onEveryNode.find("  windowsNode:"), 0,
                      "    provisioner: {enabled: true, image: " + image(C::Provisioner) +
                          ", httpPort: 8090, immediateBinding: false, baseDelay: 1s, "
                          "maxDelay: 10s}\n");
  EXPECT_EQ(problems(onEveryNode), std::vector<std::string>{});
  // And the check did run: the same with a flag no release has.
  std::string bad = central;
  bad.replace(bad.find("resizer: {enabled: true,"), 24, "resizer: {enabled: true, args: [--nope],");
  EXPECT_EQ(problems(bad).size(), 1U);
}

TEST(Preflight, ProvisionerLongFlagsNeedTwoDashes) {
  const auto found = problems(R"(  controller:
    provisioner: {args: [-v=2, -timeout=30s]}
)");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0],
            "spec.controller.provisioner.args[1]: Invalid value: \"-timeout=30s\": "
            "csi-provisioner reads its flags with pflag, where -timeout is a run of one-letter "
            "flags (\"unknown shorthand flag\": the container exits at start); write --timeout");
}

TEST(Preflight, ImagesTheTableDoesNotKnowAreNotChecked) {
  EXPECT_TRUE(problems(R"(  controller:
    snapshotter:
      enabled: true
      image: example.com/vendor/csi-snapshotter-fork:v8.2.1
      args: [--enable-volume-group-snapshots=true, --anything]
    provisioner: {image: "registry.k8s.io/sig-storage/csi-provisioner:v99.0.0", args: [--new-flag]}
    attacher: {command: [/wrapper], args: [--wrapper-flag]}
)")
                  .empty());
}

} // namespace
} // namespace csiop
