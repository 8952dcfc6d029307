// render::checkRendered: the pods as rendered after a podTemplatePatch, checked with the
// rules the fields are held to.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <csiop/render/check.hpp>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using testutil::dd;
using testutil::load;

std::vector<std::string> problems(const std::string& yaml) {
  std::vector<std::string> out;
  for (const auto& e : render::checkRendered(load(yaml))) {
    out.push_back(e.message());
  }
  return out;
}

TEST(CheckRendered, EveryExampleIsSound) {
  for (const auto& f :
       std::filesystem::directory_iterator(std::string(CSIOP_SOURCE_DIR) + "/examples")) {
    if (!f.is_regular_file() || f.path().extension() != ".yaml") {
      continue; // examples/operator-values/
    }
    std::ifstream in(f.path());
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    SCOPED_TRACE(f.path().filename().string());
    const auto loaded = api::loadDriverDeployments(text);
    ASSERT_TRUE(loaded.ok());
    for (const auto& object : loaded.objects) {
      EXPECT_TRUE(render::checkRendered(object).empty());
    }
  }
}

TEST(CheckRendered, AHarmlessPatchPasses) {
  EXPECT_EQ(problems(dd(R"(  node:
    podTemplatePatch:
      metadata: {labels: {extra: x}}
      spec:
        containers:
        - name: csi-driver
          env: [{name: A, value: b}]
  controller: {}
)")),
            std::vector<std::string>{});
}

TEST(CheckRendered, SelectorLabelsMustStay) {
  EXPECT_EQ(problems(dd(R"(  controller:
    podTemplatePatch:
      metadata: {labels: {app.kubernetes.io/instance: other}}
)")),
            std::vector<std::string>{
                "spec.controller.podTemplatePatch: Forbidden: after the patch, the pod "
                "template's labels must keep the selector's label "
                "app.kubernetes.io/instance=\"demo\""});
}

TEST(CheckRendered, TheSocketVolumeMustStay) {
  EXPECT_EQ(problems(dd(R"(  node:
    podTemplatePatch:
      spec:
        volumes:
        - {name: socket-dir, $patch: delete}
)")),
            (std::vector<std::string>{
                "spec.node.podTemplatePatch: Forbidden: after the patch, container "
                "\"csi-driver\" mounts volume \"socket-dir\", which the pod does not have",
                "spec.node.podTemplatePatch: Forbidden: after the patch, container "
                "\"node-driver-registrar\" mounts volume \"socket-dir\", which the pod does not "
                "have",
                "spec.node.podTemplatePatch: Forbidden: after the patch, container "
                "\"liveness-probe\" mounts volume \"socket-dir\", which the pod does not have",
                "spec.node.podTemplatePatch: Forbidden: after the patch, the pod has no volume "
                "\"socket-dir\" (the driver's socket directory)"}));
}

TEST(CheckRendered, TheNodeDriverMustStayPrivileged) {
  EXPECT_EQ(problems(dd(R"(  node:
    podTemplatePatch:
      spec:
        containers:
        - name: csi-driver
          securityContext: {privileged: false}
)")),
            (std::vector<std::string>{
                "spec.node.podTemplatePatch: Forbidden: after the patch, container "
                "\"csi-driver\" mounts \"/var/lib/kubelet/pods\" with Bidirectional propagation, "
                "which only a privileged container may do",
                "spec.node.podTemplatePatch: Forbidden: after the patch, container "
                "\"csi-driver\" mounts \"/var/lib/kubelet/plugins\" with Bidirectional "
                "propagation, which only a privileged container may do"}));
}

TEST(CheckRendered, TheDriverAndTheRegistrarMustStay) {
  EXPECT_EQ(problems(dd(R"(  node:
    podTemplatePatch:
      spec:
        containers:
        - {name: csi-driver, $patch: delete}
        - {name: node-driver-registrar, $patch: delete}
)")),
            (std::vector<std::string>{
                "spec.node.podTemplatePatch: Forbidden: after the patch, the pod has no "
                "container \"csi-driver\" (the CSI driver)",
                "spec.node.podTemplatePatch: Forbidden: after the patch, the pod has no "
                "container \"node-driver-registrar\" (it registers the driver with the "
                "kubelet)"}));
}

TEST(CheckRendered, TheDriverMustKeepItsSocketMount) {
  EXPECT_EQ(problems(dd(R"(  controller:
    podTemplatePatch:
      spec:
        containers:
        - name: csi-driver
          volumeMounts:
          - {mountPath: /csi, $patch: delete}
          - {name: socket-dir, mountPath: /plugin}
)")),
            (std::vector<std::string>{
                "spec.controller.podTemplatePatch: Forbidden: after the patch, container "
                "\"csi-driver\" does not mount volume \"socket-dir\" at /csi, where the sidecars "
                "reach its socket"}));
}

TEST(CheckRendered, AddedContainersNeedANameAndAnImage) {
  EXPECT_EQ(problems(dd(R"(  controller:
    podTemplatePatch:
      spec:
        containers:
        - name: helper
        initContainers:
        - {image: busybox}
)")),
            (std::vector<std::string>{
                "spec.controller.podTemplatePatch: Forbidden: after the patch, a container has "
                "no name",
                "spec.controller.podTemplatePatch: Forbidden: after the patch, container "
                "\"helper\" has no image"}));
}

TEST(CheckRendered, LoadingWithTheCheckReportsItLikeAFieldError) {
  const auto loaded = api::loadDriverDeployments(dd(R"(  node:
    podTemplatePatch:
      metadata: {labels: {app.kubernetes.io/component: x}}
)"),
                                                 api::UnknownFields::Strict, render::checkRendered);
  EXPECT_TRUE(loaded.objects.empty());
  EXPECT_EQ(loaded.errors,
            std::vector<std::string>{
                "DriverDeployment \"demo\": spec.node.podTemplatePatch: Forbidden: after the "
                "patch, the pod template's labels must keep the selector's label "
                "app.kubernetes.io/component=\"node-plugin\""});
}

} // namespace
} // namespace csiop
