#include <csiop/driverdeployment/operator_update.hpp>

#include <gtest/gtest.h>

namespace csiop::driverdeployment {
namespace {

Json workload(const std::string& registrar, const std::string& driverArgs = "--v=2") {
  Json containers = Json::array();
  containers.push_back({{"name", "driver"}, {"image", "driver:v1"}, {"args", {driverArgs}}});
  containers.push_back({{"name", "node-driver-registrar"}, {"image", registrar}});
  Json w = {{"kind", "DaemonSet"}, {"metadata", {{"name", "demo-node"}, {"namespace", "csi"}}}};
  w["spec"]["template"]["spec"]["containers"] = std::move(containers);
  return w;
}

RenderStamp stamp(const std::string& digest, const std::string& by) {
  return {"3", digest, by};
}

TEST(RenderStamp, IsWrittenAndReadBackAsAnnotations) {
  Json w = workload("registrar:v1");
  EXPECT_EQ(stampOf(w), RenderStamp{});
  setStamp(w, {"7", "abc", "1.2.0"});
  EXPECT_EQ(w["metadata"]["annotations"]["csiop.dev/spec-generation"], "7");
  EXPECT_EQ(w["metadata"]["annotations"]["csiop.dev/spec-digest"], "abc");
  EXPECT_EQ(w["metadata"]["annotations"]["csiop.dev/rendered-by"], "1.2.0");
  EXPECT_EQ(stampOf(w), (RenderStamp{"7", "abc", "1.2.0"}));
  // An empty stamp leaves no annotation behind (an unstamped workload compared as it is).
  setStamp(w, {});
  EXPECT_FALSE(w["metadata"].contains("annotations")) << w.dump();
}

TEST(WorkloadSpecDigest, IgnoresWhatNoWorkloadIsRenderedFrom) {
  const Json spec = {{"driverName", "d"},
                     {"driver", {{"image", "driver:v1"}}},
                     {"node", {{"kubeletDir", "/var/lib/kubelet"}}},
                     {"controller", {{"replicas", 2}}},
                     {"rollout", {{"type", "Verified"}, {"soakSeconds", 60}}}};
  const auto node = [](const Json& s) { return workloadSpecDigest(s, WorkloadPart::NodePlugin); };
  const auto controller = [](const Json& s) {
    return workloadSpecDigest(s, WorkloadPart::Controller);
  };
  EXPECT_EQ(node(spec).size(), 32u);
  Json other = spec;
  other["storageClasses"] = {{{"name", "fast"}}};
  other["paused"] = false;
  other["operatorUpdates"] = "Automatic";
  other["deletionPolicy"] = "Orphan";
  other["rollout"]["soakSeconds"] = 600;
  EXPECT_EQ(node(other), node(spec));
  EXPECT_EQ(controller(other), controller(spec));
  // The rollout's type decides the DaemonSet's update strategy.
  other["rollout"]["type"] = "Unverified";
  EXPECT_NE(node(other), node(spec));
  // Each workload's own section counts for it alone.
  other = spec;
  other["controller"]["replicas"] = 3;
  EXPECT_EQ(node(other), node(spec));
  EXPECT_NE(controller(other), controller(spec));
  other = spec;
  other["node"]["kubeletDir"] = "/data/kubelet";
  EXPECT_NE(node(other), node(spec));
  EXPECT_EQ(controller(other), controller(spec));
  // ... but the controller's sidecars that run in the node plugin count for it.
  other = spec;
  other["controller"]["placement"] = "NodePlugin";
  EXPECT_NE(node(other), node(spec));
  // What both are rendered from counts for both.
  other = spec;
  other["driver"]["image"] = "driver:v2";
  EXPECT_NE(node(other), node(spec));
  EXPECT_NE(controller(other), controller(spec));
}

TEST(ChangeOrigin, TellsTheSpecTheOperatorAndDriftApart) {
  // The same spec, rendered by another operator: the operator's change.
  EXPECT_EQ(changeOrigin({stamp("a", "1.0"), stamp("a", "1.1"), "h", "h", false}),
            ChangeOrigin::Operator);
  // The same spec and operator: someone edited the workload.
  EXPECT_EQ(changeOrigin({stamp("a", "1.1"), stamp("a", "1.1"), "h", "h", false}),
            ChangeOrigin::Drift);
  // Another spec, whichever operator: the admin's change.
  EXPECT_EQ(changeOrigin({stamp("a", "1.0"), stamp("b", "1.1"), "h", "h", false}),
            ChangeOrigin::Spec);
  // The configuration its pods read changed.
  EXPECT_EQ(changeOrigin({stamp("a", "1.0"), stamp("a", "1.1"), "h", "i", false}),
            ChangeOrigin::Spec);
  // No stamp (an earlier operator wrote it): the operator's change if the status shows the
  // spec's generation reconciled already, else the spec's.
  EXPECT_EQ(changeOrigin({RenderStamp{}, stamp("a", "1.1"), "h", "h", true}),
            ChangeOrigin::Operator);
  EXPECT_EQ(changeOrigin({RenderStamp{}, stamp("a", "1.1"), "h", "h", false}), ChangeOrigin::Spec);
}

TEST(DescribeChange, ImagesFirstThenTheOtherPaths) {
  const Json live = workload("registrar:v1");
  EXPECT_EQ(describeChange(live, workload("registrar:v2"), 8),
            std::vector<std::string>{"container node-driver-registrar: image registrar:v1 -> "
                                     "registrar:v2"});
  EXPECT_EQ(describeChange(live, workload("registrar:v2", "--v=5"), 8),
            (std::vector<std::string>{
                "container node-driver-registrar: image registrar:v1 -> registrar:v2",
                ".spec.template.spec.containers[0].args[0]"}));
  Json added = workload("registrar:v1");
  added["spec"]["template"]["spec"]["containers"].push_back(
      {{"name", "liveness-probe"}, {"image", "livenessprobe:v2"}});
  EXPECT_EQ(describeChange(live, added, 8),
            std::vector<std::string>{"container liveness-probe added (livenessprobe:v2)"});
  EXPECT_EQ(describeChange(added, live, 8),
            std::vector<std::string>{"container liveness-probe removed"});
  // At most `max` lines.
  EXPECT_EQ(describeChange(live, workload("registrar:v2", "--v=5"), 1).size(), 1u);
  EXPECT_TRUE(describeChange(live, live, 8).empty());
}

} // namespace
} // namespace csiop::driverdeployment
