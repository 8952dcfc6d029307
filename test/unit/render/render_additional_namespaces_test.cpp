// spec.additionalNamespaces: namespaces beside the driver's own (OpenEBS LVM LocalPV keeps its
// LVMVolumes in one), created if missing and never owned, with a Role in each for the pods.
#include <gtest/gtest.h>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using api::Json;
using testutil::dd;
using testutil::find;
using testutil::load;
using testutil::ofKind;

const char* kLvm = R"(  controller: {}
  additionalNamespaces:
  - name: openebs
    controllerRbacRules:
    - {apiGroups: [local.openebs.io], resources: [lvmvolumes, lvmsnapshots, lvmnodes], verbs: ['*']}
    nodeRbacRules:
    - {apiGroups: [local.openebs.io], resources: [lvmvolumes, lvmnodes], verbs: [get, list, watch, create, update, patch]}
)";

TEST(RenderAdditionalNamespaces, EachIsCreatedWithoutAnOwnerAndWithoutPodSecurityLabels) {
  const auto objs = render::render(load(dd(kLvm)));
  const Json* ns = find(objs, "Namespace", "openebs", "");
  ASSERT_NE(ns, nullptr);
  EXPECT_FALSE(ns->at("metadata").contains("ownerReferences"));
  EXPECT_FALSE(ns->at("metadata")["labels"].contains("pod-security.kubernetes.io/enforce"))
      << "it runs no pods";
  // The driver's own namespace comes first, as before.
  const auto namespaces = ofKind(objs, "Namespace");
  ASSERT_EQ(namespaces.size(), 2u);
  EXPECT_EQ((*namespaces[0])["metadata"]["name"], "csi-demo");
}

TEST(RenderAdditionalNamespaces, TheRulesAreRolesThereBoundToEachPodsAccount) {
  const auto objs = render::render(load(dd(kLvm)));
  const Json* controller = find(objs, "Role", "csiop:demo:controller-driver", "openebs");
  ASSERT_NE(controller, nullptr);
  EXPECT_EQ(controller->at("rules")[0]["verbs"], Json::array({"*"}));
  const Json* binding = find(objs, "RoleBinding", "csiop:demo:controller-driver", "openebs");
  ASSERT_NE(binding, nullptr);
  EXPECT_EQ(binding->at("subjects"),
            Json::parse(R"([{"kind":"ServiceAccount","name":"demo-controller",)"
                        R"("namespace":"csi-demo"}])"));
  const Json* nodeBinding = find(objs, "RoleBinding", "csiop:demo:node-driver", "openebs");
  ASSERT_NE(nodeBinding, nullptr);
  EXPECT_EQ(nodeBinding->at("subjects")[0]["name"], "demo-node");
  EXPECT_NE(find(objs, "Role", "csiop:demo:node-driver", "openebs"), nullptr);
  // Nothing granted in the driver's own namespace or cluster-wide for them.
  EXPECT_EQ(find(objs, "Role", "csiop:demo:node-driver", "csi-demo"), nullptr);
  EXPECT_EQ(find(objs, "ClusterRole", "csiop:demo:node-driver", ""), nullptr);
}

TEST(RenderAdditionalNamespaces, WithoutCreateNamespaceNoneIsCreated) {
  const auto objs = render::render(load(dd(std::string(kLvm) + "  createNamespace: false\n")));
  EXPECT_TRUE(ofKind(objs, "Namespace").empty());
  EXPECT_NE(find(objs, "Role", "csiop:demo:controller-driver", "openebs"), nullptr);
}

} // namespace
} // namespace csiop
