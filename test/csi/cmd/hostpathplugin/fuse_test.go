package main

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	"csi-operator/test/csi/internal/csiconn"
	"csi-operator/test/csi/internal/fixturecli/clitest"
)

// fuseContext is the volume context of a fuse-mode volume.
var fuseContext = map[string]string{mountModeKey: mountModeFuse}

// fuseRoot is mountRoot for tests that make real FUSE mounts: they are skipped unless they
// run as root and /dev/fuse can be opened.
func fuseRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: the FUSE tests mount FUSE file systems (mount(2) with /dev/fuse) and must run as root")
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("skipped: /dev/fuse is not usable (%v); the FUSE tests need it", err)
	}
	f.Close()
	return mountRoot(t)
}

// createFuseVolume creates a volume with the StorageClass parameter mountMode: fuse and
// checks that the mode comes back as volume context.
func createFuseVolume(t *testing.T, ctrl csi.ControllerClient, name string) *csi.Volume {
	t.Helper()
	resp, err := ctrl.CreateVolume(testCtx(t), &csi.CreateVolumeRequest{
		Name:               name,
		CapacityRange:      &csi.CapacityRange{RequiredBytes: mib},
		VolumeCapabilities: []*csi.VolumeCapability{mountCap()},
		Parameters:         map[string]string{mountModeKey: mountModeFuse},
	})
	if err != nil {
		t.Fatalf("CreateVolume(%s, fuse): %v", name, err)
	}
	if !maps.Equal(resp.GetVolume().GetVolumeContext(), fuseContext) {
		t.Fatalf("CreateVolume(%s, fuse) volume_context = %v, want %v", name, resp.GetVolume().GetVolumeContext(), fuseContext)
	}
	return resp.GetVolume()
}

// wantFuseMount checks that target is one of this driver's FUSE mounts.
func wantFuseMount(t *testing.T, target string, readOnly bool) {
	t.Helper()
	m, mounted, err := mountAt(target)
	if err != nil || !mounted || m.fsType != "fuse."+fuseSubtype || m.readOnly() != readOnly {
		t.Errorf("mount at %s = %+v (mounted %v, err %v); want type fuse.%s, readonly %v", target, m, mounted, err, fuseSubtype, readOnly)
	}
}

// asUser runs f on an OS thread whose user and group IDs are uid (the thread ends with the
// goroutine), as a process of a pod running as that user would.
func asUser(t *testing.T, uid int, f func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded afterwards
		// Raw syscalls change this thread only (Go's Setresuid changes every thread).
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
			done <- e
			return
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
			done <- e
			return
		}
		f()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatalf("switching a thread to uid %d: %v", uid, err)
	}
}

func TestMountModeParameter(t *testing.T) {
	d := startDriver(t, t.TempDir())
	ctx := testCtx(t)
	_, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-bad", VolumeCapabilities: []*csi.VolumeCapability{mountCap()},
		Parameters: map[string]string{mountModeKey: "nfs"}})
	wantCode(t, "CreateVolume(mountMode nfs)", err, codes.InvalidArgument)

	bind, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-bind", VolumeCapabilities: []*csi.VolumeCapability{mountCap()},
		Parameters: map[string]string{mountModeKey: mountModeBind}})
	if err != nil || len(bind.GetVolume().GetVolumeContext()) != 0 {
		t.Errorf("CreateVolume(mountMode bind) = %v, %v; want a volume without volume context", bind, err)
	}
	fuseVol := createFuseVolume(t, d.ctrl, "pvc-fuse")
	again := createFuseVolume(t, d.ctrl, "pvc-fuse")
	if again.GetVolumeId() != fuseVol.GetVolumeId() {
		t.Errorf("second CreateVolume(pvc-fuse) = %s, want %s", again.GetVolumeId(), fuseVol.GetVolumeId())
	}
	_, err = d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-fuse", VolumeCapabilities: []*csi.VolumeCapability{mountCap()}})
	wantCode(t, "CreateVolume(pvc-fuse) without mountMode", err, codes.AlreadyExists)

	list, err := d.ctrl.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil {
		t.Fatalf("ListVolumes: %v", err)
	}
	for _, e := range list.GetEntries() {
		want := map[string]string(nil)
		if e.GetVolume().GetVolumeId() == fuseVol.GetVolumeId() {
			want = fuseContext
		}
		if !maps.Equal(e.GetVolume().GetVolumeContext(), want) {
			t.Errorf("ListVolumes: volume %s has volume_context %v, want %v", e.GetVolume().GetVolumeId(), e.GetVolume().GetVolumeContext(), want)
		}
	}

	_, err = d.node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: "csi-x", TargetPath: filepath.Join(t.TempDir(), "t"),
		VolumeCapability: mountCap(), VolumeContext: map[string]string{ephemeralContextKey: "true", mountModeKey: "FUSE"}})
	wantCode(t, "NodePublishVolume(mountMode FUSE)", err, codes.InvalidArgument)
}

func TestFuseVolumeLifecycle(t *testing.T) {
	root := fuseRoot(t)
	stateDir := filepath.Join(root, "state")
	d := startDriver(t, stateDir)
	ctx := testCtx(t)
	vol := createFuseVolume(t, d.ctrl, "pvc-fuse")
	id := vol.GetVolumeId()
	dataDir := filepath.Join(stateDir, id)
	staging, target := kubeletPaths(root, id)
	if _, err := d.node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging,
		VolumeCapability: mountCap(), VolumeContext: vol.GetVolumeContext()}); err != nil {
		t.Fatalf("NodeStageVolume: %v", err)
	}
	publish := &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target,
		VolumeCapability: mountCap(), VolumeContext: vol.GetVolumeContext()}
	for range 2 { // the second call must be a no-op
		if _, err := d.node.NodePublishVolume(ctx, publish); err != nil {
			t.Fatalf("NodePublishVolume(fuse): %v", err)
		}
	}
	wantFuseMount(t, target, false)
	if got := mountsUnder(t, root); len(got) != 2 {
		t.Errorf("mounts after stage+publish(twice): %q, want exactly staging and target", got)
	}

	// Through the FUSE mount into the data directory, and back.
	if err := os.WriteFile(filepath.Join(target, "hello"), []byte("through FUSE"), 0o644); err != nil {
		t.Fatalf("writing through the FUSE mount: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, "hello")); err != nil || string(b) != "through FUSE" {
		t.Errorf("file in the data dir = %q, %v; want the write made through the FUSE mount", b, err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "direct"), []byte("in the data dir"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(target, "direct")); err != nil || string(b) != "in the data dir" {
		t.Errorf("reading through the FUSE mount = %q, %v; want the data dir's file", b, err)
	}

	// A pod running as another user gets in (allow_other), the file modes apply to it
	// (default_permissions), and what it creates is its own.
	dir, err := os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	const nobody = 65534
	var createErr, readOwnErr, readPrivateErr error
	asUser(t, nobody, func() {
		fd, err := unix.Openat(int(dir.Fd()), "by-nobody", unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			_, createErr = unix.Write(fd, []byte("nobody was here"))
			unix.Close(fd)
		} else {
			createErr = err
		}
		if fd, err := unix.Openat(int(dir.Fd()), "hello", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
		} else {
			readOwnErr = err
		}
		if fd, err := unix.Openat(int(dir.Fd()), "direct", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
		} else {
			readPrivateErr = err
		}
	})
	if createErr != nil || readOwnErr != nil {
		t.Errorf("as uid %d through the FUSE mount: create %v, read a 0644 file %v; want both to work", nobody, createErr, readOwnErr)
	}
	if !errors.Is(readPrivateErr, unix.EACCES) {
		t.Errorf("as uid %d, reading a 0600 file of root: %v, want EACCES", nobody, readPrivateErr)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(dataDir, "by-nobody"), &st); err != nil || st.Uid != nobody {
		t.Errorf("file created by uid %d: owner %d (stat error %v), want %d", nobody, st.Uid, err, nobody)
	}

	stats, err := d.node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target})
	if err != nil || len(stats.GetUsage()) != 2 || stats.GetUsage()[0].GetTotal() <= 0 {
		t.Errorf("NodeGetVolumeStats on the FUSE mount = %v, %v", stats, err)
	}

	publish.Readonly = true
	_, err = d.node.NodePublishVolume(ctx, publish)
	wantCode(t, "NodePublishVolume(read-only over read-write)", err, codes.AlreadyExists)

	dir.Close()
	unpublish := &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}
	for range 2 {
		if _, err := d.node.NodeUnpublishVolume(ctx, unpublish); err != nil {
			t.Fatalf("NodeUnpublishVolume(fuse): %v", err)
		}
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("target %s still exists after NodeUnpublishVolume (stat: %v)", target, err)
	}
	if _, err := d.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
		t.Fatalf("NodeUnstageVolume: %v", err)
	}
	if got := mountsUnder(t, root); len(got) != 0 {
		t.Errorf("mounts left: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, "hello")); err != nil || string(b) != "through FUSE" {
		t.Errorf("data after unpublish = %q, %v; the volume's data must stay", b, err)
	}
}

func TestFuseReadOnlyPublish(t *testing.T) {
	root := fuseRoot(t)
	d := startDriver(t, filepath.Join(root, "state"))
	ctx := testCtx(t)
	vol := createFuseVolume(t, d.ctrl, "pvc-fuse-ro")
	id := vol.GetVolumeId()
	staging, target := kubeletPaths(root, id)
	if _, err := d.node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap()}); err != nil {
		t.Fatalf("NodeStageVolume: %v", err)
	}
	if err := os.WriteFile(filepath.Join(staging, "existing"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	publish := &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target,
		VolumeCapability: mountCap(), VolumeContext: vol.GetVolumeContext(), Readonly: true}
	if _, err := d.node.NodePublishVolume(ctx, publish); err != nil {
		t.Fatalf("NodePublishVolume(fuse, readonly): %v", err)
	}
	wantFuseMount(t, target, true)
	if b, err := os.ReadFile(filepath.Join(target, "existing")); err != nil || string(b) != "data" {
		t.Errorf("reading through the read-only FUSE mount = %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(target, "f"), nil, 0o644); !errors.Is(err, unix.EROFS) {
		t.Errorf("writing to a read-only FUSE publish: %v, want EROFS", err)
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

func TestFuseEphemeralInlineVolume(t *testing.T) {
	root := fuseRoot(t)
	stateDir := filepath.Join(root, "state")
	d := startDriver(t, stateDir)
	ctx := testCtx(t)
	const id = "csi-fedcba9876543210"
	_, target := kubeletPaths(root, id)
	publish := &csi.NodePublishVolumeRequest{VolumeId: id, TargetPath: target, VolumeCapability: mountCap(),
		VolumeContext: map[string]string{ephemeralContextKey: "true", mountModeKey: mountModeFuse}}
	if _, err := d.node.NodePublishVolume(ctx, publish); err != nil {
		t.Fatalf("NodePublishVolume(ephemeral, fuse): %v", err)
	}
	wantFuseMount(t, target, false)
	if err := os.WriteFile(filepath.Join(target, "scratch"), []byte("x"), 0o644); err != nil {
		t.Fatalf("writing to the inline FUSE volume: %v", err)
	}
	if _, err := os.Stat(filepath.Join(stateDir, id, "scratch")); err != nil {
		t.Errorf("inline volume data not under the state dir: %v", err)
	}
	if _, err := d.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		t.Fatalf("NodeUnpublishVolume(ephemeral, fuse): %v", err)
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

// TestFuseMountBreaksWhenThePluginExits runs the plugin in a child process (this test binary
// running main), publishes a fuse volume through it and ends the child: the mount must then
// fail with ENOTCONN, as a FUSE-based driver's does when its node plugin restarts, and a new
// plugin process must still unpublish it (or publish over it).
func TestFuseMountBreaksWhenThePluginExits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		signal    syscall.Signal
		republish bool // publish again over the dead mount before unpublishing
	}{
		{"SIGTERM", syscall.SIGTERM, false},
		{"SIGKILL", syscall.SIGKILL, false},
		{"SIGKILL then publish again", syscall.SIGKILL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fuseRoot(t)
			stateDir := filepath.Join(root, "state")
			socket := filepath.Join(root, "csi.sock")
			child := clitest.Command("--endpoint=unix://"+socket, "--nodeid="+testNodeID,
				"--drivername="+testDriverName, "--statedir="+stateDir)
			var logs bytes.Buffer
			child.Stdout, child.Stderr = &logs, &logs
			if err := child.Start(); err != nil {
				t.Fatalf("starting the plugin in a child process: %v", err)
			}
			exited := make(chan error, 1)
			go func() { exited <- child.Wait() }()
			waited := false
			t.Cleanup(func() {
				if !waited {
					_ = child.Process.Kill()
					<-exited
				}
			})

			ctx := testCtx(t)
			dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			conn, err := csiconn.Dial(dialCtx, socket, time.Second)
			if err != nil {
				t.Fatalf("dialing the child plugin: %v", err)
			}
			defer conn.Close()
			ctrl, node := csi.NewControllerClient(conn), csi.NewNodeClient(conn)
			vol := createFuseVolume(t, ctrl, "pvc-crash")
			id := vol.GetVolumeId()
			staging, target := kubeletPaths(root, id)
			if _, err := node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap()}); err != nil {
				t.Fatalf("NodeStageVolume: %v", err)
			}
			publish := &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target,
				VolumeCapability: mountCap(), VolumeContext: vol.GetVolumeContext()}
			if _, err := node.NodePublishVolume(ctx, publish); err != nil {
				t.Fatalf("NodePublishVolume(fuse) in the child: %v", err)
			}
			if err := os.WriteFile(filepath.Join(target, "before"), []byte("written while served"), 0o644); err != nil {
				t.Fatalf("writing through the child's FUSE mount: %v", err)
			}

			if err := child.Process.Signal(tc.signal); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				waited = true
				if tc.signal == syscall.SIGTERM && err != nil {
					t.Errorf("the plugin exited with %v after SIGTERM, want status 0; output:\n%s", err, logs.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("the plugin did not exit within 20s of %v", tc.signal)
			}

			// The mount is still there, but nobody serves it.
			if _, mounted, err := mountAt(target); err != nil || !mounted {
				t.Errorf("after the plugin exited, mounted at %s = %v (%v); want the dead mount still there", target, mounted, err)
			}
			if _, err := os.Stat(target); !errors.Is(err, syscall.ENOTCONN) {
				t.Errorf("stat of the FUSE mount after the plugin exited: %v, want ENOTCONN", err)
			}
			if _, err := os.ReadFile(filepath.Join(target, "before")); !errors.Is(err, syscall.ENOTCONN) {
				t.Errorf("reading through the FUSE mount after the plugin exited: %v, want ENOTCONN", err)
			}
			if b, err := os.ReadFile(filepath.Join(stateDir, id, "before")); err != nil || string(b) != "written while served" {
				t.Errorf("data dir after the plugin exited: %q, %v; want the file written through FUSE", b, err)
			}

			// A new plugin process (the restarted container) finds the dead mount.
			d := startDriver(t, stateDir)
			_, err = d.node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target})
			wantCode(t, "NodeGetVolumeStats on the dead FUSE mount", err, codes.Internal)
			if err != nil && !strings.Contains(err.Error(), "not connected") {
				t.Errorf("NodeGetVolumeStats on the dead FUSE mount: %v, want ENOTCONN in the message", err)
			}
			if tc.republish {
				if _, err := d.node.NodePublishVolume(ctx, publish); err != nil {
					t.Fatalf("NodePublishVolume over the dead FUSE mount: %v", err)
				}
				wantFuseMount(t, target, false)
				if b, err := os.ReadFile(filepath.Join(target, "before")); err != nil || string(b) != "written while served" {
					t.Errorf("reading through the new FUSE mount = %q, %v", b, err)
				}
				if got := mountsUnder(t, root); len(got) != 2 {
					t.Errorf("mounts after publishing over the dead one: %q, want exactly staging and target", got)
				}
			}
			for range 2 {
				if _, err := d.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
					t.Fatalf("NodeUnpublishVolume of the dead FUSE mount: %v", err)
				}
			}
			if _, err := os.Lstat(target); !os.IsNotExist(err) {
				t.Errorf("target %s still exists after NodeUnpublishVolume (lstat: %v)", target, err)
			}
			if got := mountsUnder(t, root); len(got) != 1 || got[0] != canonical(staging) {
				t.Errorf("mounts after unpublish: %q, want only the staging mount", got)
			}
			if _, err := d.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
				t.Fatalf("NodeUnstageVolume: %v", err)
			}
			if got := mountsUnder(t, root); len(got) != 0 {
				t.Errorf("mounts left: %q", got)
			}
			if tc.signal == syscall.SIGTERM && !strings.Contains(logs.String(), "stopping") {
				t.Errorf("the child's log does not show a graceful stop:\n%s", logs.String())
			}
		})
	}
}
