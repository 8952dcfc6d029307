package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
)

// mountRoot returns a temporary directory for real mounts. The test is skipped unless it
// runs as root; any mount still under the directory when the test ends is unmounted.
func mountRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: the node tests make real bind mounts and must run as root")
	}
	root := t.TempDir()
	t.Cleanup(func() {
		for _, m := range mountsUnder(t, root) {
			if err := unix.Unmount(m, unix.MNT_DETACH); err != nil {
				t.Errorf("cleanup: unmount %s: %v", m, err)
			}
		}
	})
	return root
}

// mountsUnder lists the mount points below dir, innermost last.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(mountInfoFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mounts, err := parseMountInfo(f)
	if err != nil {
		t.Fatal(err)
	}
	var under []string
	for i := len(mounts) - 1; i >= 0; i-- {
		if strings.HasPrefix(mounts[i].mountPoint, canonical(dir)+"/") {
			under = append(under, mounts[i].mountPoint)
		}
	}
	return under
}

// kubeletPaths returns staging and target paths laid out as the kubelet does.
func kubeletPaths(root, id string) (staging, target string) {
	staging = filepath.Join(root, "plugins/kubernetes.io/csi", testDriverName, id, "globalmount")
	target = filepath.Join(root, "pods/pod-uid/volumes/kubernetes.io~csi/pvc-x/mount")
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		panic(err)
	}
	return staging, target
}

func TestVolumeLifecycleWithRealMounts(t *testing.T) {
	root := mountRoot(t)
	stateDir := filepath.Join(root, "csi-data-dir")
	d := startDriver(t, stateDir)
	ctx := testCtx(t)
	id := d.createVolume(t, "pvc-life", 10*mib).GetVolumeId()
	staging, target := kubeletPaths(root, id)

	stage := &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap()}
	for range 2 { // the second call must be a no-op
		if _, err := d.node.NodeStageVolume(ctx, stage); err != nil {
			t.Fatalf("NodeStageVolume: %v", err)
		}
	}
	publish := &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: mountCap()}
	for range 2 {
		if _, err := d.node.NodePublishVolume(ctx, publish); err != nil {
			t.Fatalf("NodePublishVolume: %v", err)
		}
	}
	if got := mountsUnder(t, root); len(got) != 2 {
		t.Errorf("mounts after stage+publish twice: %q, want exactly staging and target", got)
	}

	if err := os.WriteFile(filepath.Join(target, "hello"), []byte("from the pod"), 0o644); err != nil {
		t.Fatalf("writing through the target path: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(stateDir, id, "hello")); err != nil || string(b) != "from the pod" {
		t.Errorf("file in the volume's data dir = %q, %v; want the pod's write", b, err)
	}

	stats, err := d.node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target})
	if err != nil || len(stats.GetUsage()) != 2 || stats.GetUsage()[0].GetUnit() != csi.VolumeUsage_BYTES ||
		stats.GetUsage()[0].GetTotal() <= 0 || stats.GetUsage()[1].GetUnit() != csi.VolumeUsage_INODES {
		t.Errorf("NodeGetVolumeStats = %v, %v", stats, err)
	}

	exp, err := d.ctrl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{
		VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: 20 * mib}})
	if err != nil || exp.GetCapacityBytes() != 20*mib {
		t.Errorf("ControllerExpandVolume while published = %v, %v", exp, err)
	}

	unpublish := &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}
	for range 2 {
		if _, err := d.node.NodeUnpublishVolume(ctx, unpublish); err != nil {
			t.Fatalf("NodeUnpublishVolume: %v", err)
		}
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("target %s still exists after NodeUnpublishVolume (stat: %v)", target, err)
	}
	_, err = d.node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target})
	wantCode(t, "NodeGetVolumeStats after unpublish", err, codes.NotFound)

	for range 2 {
		if _, err := d.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
			t.Fatalf("NodeUnstageVolume: %v", err)
		}
	}
	if got := mountsUnder(t, root); len(got) != 0 {
		t.Errorf("mounts left after unpublish+unstage: %q", got)
	}

	for range 2 {
		if _, err := d.ctrl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatalf("DeleteVolume: %v", err)
		}
	}
	for _, p := range []string{filepath.Join(stateDir, id), filepath.Join(stateDir, id+".json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still exists after DeleteVolume (stat: %v)", p, err)
		}
	}
}

func TestReadOnlyPublish(t *testing.T) {
	root := mountRoot(t)
	d := startDriver(t, filepath.Join(root, "state"))
	ctx := testCtx(t)
	id := d.createVolume(t, "pvc-ro", mib).GetVolumeId()
	staging, target := kubeletPaths(root, id)
	if _, err := d.node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap()}); err != nil {
		t.Fatalf("NodeStageVolume: %v", err)
	}
	publish := &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: mountCap(), Readonly: true}
	if _, err := d.node.NodePublishVolume(ctx, publish); err != nil {
		t.Fatalf("NodePublishVolume(readonly): %v", err)
	}
	if m, mounted, err := mountAt(target); err != nil || !mounted || !m.readOnly() {
		t.Errorf("target mount = %+v (mounted %v, err %v), want read-only", m, mounted, err)
	}
	if err := os.WriteFile(filepath.Join(target, "f"), nil, 0o644); !errors.Is(err, unix.EROFS) {
		t.Errorf("writing to a read-only publish: %v, want EROFS", err)
	}
	if err := os.WriteFile(filepath.Join(staging, "f"), nil, 0o644); err != nil {
		t.Errorf("the staging mount must stay writable: %v", err)
	}
	publish.Readonly = false
	_, err := d.node.NodePublishVolume(ctx, publish)
	wantCode(t, "NodePublishVolume(read-write over read-only)", err, codes.AlreadyExists)

	if _, err := d.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		t.Errorf("NodeUnpublishVolume: %v", err)
	}
	if _, err := d.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
		t.Errorf("NodeUnstageVolume: %v", err)
	}
	if got := mountsUnder(t, root); len(got) != 0 {
		t.Errorf("mounts left: %q", got)
	}
}

func TestEphemeralInlineVolume(t *testing.T) {
	root := mountRoot(t)
	stateDir := filepath.Join(root, "state")
	d := startDriver(t, stateDir)
	ctx := testCtx(t)
	const id = "csi-0123456789abcdef"
	_, target := kubeletPaths(root, id)
	publish := &csi.NodePublishVolumeRequest{VolumeId: id, TargetPath: target, VolumeCapability: mountCap(),
		VolumeContext: map[string]string{ephemeralContextKey: "true"}}
	if _, err := d.node.NodePublishVolume(ctx, publish); err != nil {
		t.Fatalf("NodePublishVolume(ephemeral): %v", err)
	}
	if err := os.WriteFile(filepath.Join(target, "scratch"), []byte("x"), 0o644); err != nil {
		t.Fatalf("writing to the inline volume: %v", err)
	}
	if _, err := os.Stat(filepath.Join(stateDir, id, "scratch")); err != nil {
		t.Errorf("inline volume data not under the state dir: %v", err)
	}
	list, err := d.ctrl.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil || len(list.GetEntries()) != 0 {
		t.Errorf("ListVolumes = %v, %v; inline volumes are not the controller's", list, err)
	}
	if _, err := d.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		t.Fatalf("NodeUnpublishVolume(ephemeral): %v", err)
	}
	for _, p := range []string{target, filepath.Join(stateDir, id), filepath.Join(stateDir, id+".json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still exists after unpublishing the inline volume (stat: %v)", p, err)
		}
	}
	if got := mountsUnder(t, root); len(got) != 0 {
		t.Errorf("mounts left: %q", got)
	}
}
