// api::sidecarRelease and api::unknownFlags: which kubernetes-csi release an image is, and the
// flags it accepts.
#include <gtest/gtest.h>

#include <csiop/api/sidecar_releases.hpp>

namespace csiop::api {
namespace {

std::string release(std::string_view image) {
  const auto r = sidecarRelease(image);
  return r ? std::string(r->name) + " " + r->version.str() : "-";
}

TEST(SidecarReleases, TheImagesNameAndReleaseTag) {
  EXPECT_EQ(release("registry.k8s.io/sig-storage/csi-snapshotter:v8.2.1"),
            "csi-snapshotter v8.2.1");
  EXPECT_EQ(release("mirror.example.com:5000/k8s/csi-provisioner:v5.0.1@sha256:0123abcd"),
            "csi-provisioner v5.0.1");
  EXPECT_EQ(release("livenessprobe:v2.19.0"), "livenessprobe v2.19.0");
  EXPECT_EQ(release("registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.17.0"),
            "csi-node-driver-registrar v2.17.0");
  // Not a release tag, not a kubernetes-csi name, no tag.
  for (const char* image :
       {"registry.k8s.io/sig-storage/csi-snapshotter:latest",
        "registry.k8s.io/sig-storage/csi-snapshotter:v8.2.1-custom",
        "registry.k8s.io/sig-storage/csi-snapshotter:v8.2",
        "registry.k8s.io/sig-storage/csi-snapshotter:8.2.1",
        "registry.k8s.io/sig-storage/csi-snapshotter", "mirror.example.com:5000/csi-snapshotter",
        "registry.k8s.io/sig-storage/snapshot-controller:v8.2.1",
        "example.com/csi-snapshotter-fork:v8.2.1",
        "registry.k8s.io/sig-storage/csi-snapshotter:v99999.0.0", ""}) {
    EXPECT_EQ(release(image), "-") << image;
  }
}

TEST(SidecarReleases, TheDefaultImagesAreInTheTable) {
  for (const ImageDefault& d : imageDefaults()) {
    const auto r = sidecarRelease(std::string(d.name) + ":" + std::string(d.tag));
    ASSERT_TRUE(r.has_value()) << d.name;
    const auto known = knownReleases(d.component);
    ASSERT_TRUE(known.has_value()) << d.name;
    EXPECT_LE(known->first, r->version) << d.name;
    EXPECT_GE(known->second, r->version) << d.name << ": regenerate the flag table";
    EXPECT_TRUE(unknownFlags(*r, {"--v=2", "--csi-address=/csi/csi.sock"}).has_value()) << d.name;
  }
}

TEST(SidecarReleases, APatchReleaseNewerThanTheTableBehavesAsItsMinor) {
  const auto newest = knownReleases(Component::Snapshotter);
  ASSERT_TRUE(newest.has_value());
  SidecarRelease later{Component::Snapshotter, "csi-snapshotter", newest->second};
  later.version.patch += 7;
  const auto found = unknownFlags(later, {"--v=2", "--no-such-flag"});
  ASSERT_TRUE(found.has_value());
  ASSERT_EQ(found->size(), 1U);
  EXPECT_EQ((*found)[0].index, 1U);
  EXPECT_EQ((*found)[0].flag, "no-such-flag");
  // A minor release the table does not hold is not judged.
  later.version.minor += 1;
  EXPECT_FALSE(unknownFlags(later, {"--no-such-flag"}).has_value());
}

} // namespace
} // namespace csiop::api
