#include <csiop/api/images.hpp>

#include <array>
#include <stdexcept>

// A test build stands for a later operator release with other default images: it appends
// CSIOP_IMAGE_TAG_SUFFIX to every tag (test/e2e/CMakeLists.txt, csi-operator-next).
#ifndef CSIOP_IMAGE_TAG_SUFFIX
#define CSIOP_IMAGE_TAG_SUFFIX ""
#endif

namespace csiop::api {
namespace {

constexpr std::array kImages = {
    ImageDefault{Component::NodeDriverRegistrar, "csi-node-driver-registrar",
                 "v2.17.0" CSIOP_IMAGE_TAG_SUFFIX, "node-driver-registrar", "registrar"},
    ImageDefault{Component::LivenessProbe, "livenessprobe", "v2.19.0" CSIOP_IMAGE_TAG_SUFFIX,
                 "livenessprobe", "livenessProbe"},
    ImageDefault{Component::Provisioner, "csi-provisioner", "v6.3.0" CSIOP_IMAGE_TAG_SUFFIX,
                 "external-provisioner", "provisioner"},
    ImageDefault{Component::Attacher, "csi-attacher", "v4.12.0" CSIOP_IMAGE_TAG_SUFFIX,
                 "external-attacher", "attacher"},
    ImageDefault{Component::Resizer, "csi-resizer", "v2.2.1" CSIOP_IMAGE_TAG_SUFFIX,
                 "external-resizer", "resizer"},
    ImageDefault{Component::Snapshotter, "csi-snapshotter", "v8.6.0" CSIOP_IMAGE_TAG_SUFFIX,
                 "external-snapshotter", "snapshotter"},
    ImageDefault{Component::HealthMonitor, "csi-external-health-monitor-controller",
                 "v0.18.0" CSIOP_IMAGE_TAG_SUFFIX, "external-health-monitor", "healthMonitor"},
};

} // namespace

std::span<const ImageDefault> imageDefaults() {
  return kImages;
}

const ImageDefault& imageDefault(Component component) {
  for (const auto& image : kImages) {
    if (image.component == component) {
      return image;
    }
  }
  throw std::logic_error("no default image for component");
}

std::string defaultImage(Component component, std::string_view registry) {
  const auto& image = imageDefault(component);
  std::string out(registry.empty() ? kDefaultRegistry : registry);
  out += '/';
  out += image.name;
  out += ':';
  out += image.tag;
  return out;
}

} // namespace csiop::api
