package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"csi-operator/test/csi/internal/csiconn"
)

const (
	testDriverName = "hostpath.csi.test"
	testNodeID     = "node-1"
	mib            = int64(1 << 20)
)

// testDriver is a plugin served by run() on a temporary socket, and its clients.
type testDriver struct {
	stateDir string
	ident    csi.IdentityClient
	ctrl     csi.ControllerClient
	node     csi.NodeClient
}

// startDriver runs the plugin on stateDir until the test ends and checks that stopping it
// removes its socket.
func startDriver(t *testing.T, stateDir string) *testDriver {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "csi.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	d := &driver{name: testDriverName, nodeID: testNodeID, maxVolumesPerNode: 7}
	go func() { done <- run(ctx, d, "unix://"+socket, stateDir) }()

	dialCtx, dialCancel := context.WithTimeout(ctx, 10*time.Second)
	defer dialCancel()
	conn, err := csiconn.Dial(dialCtx, socket, time.Second)
	if err != nil {
		cancel()
		t.Fatalf("dialing the plugin: %v (run: %v)", err, <-done)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run returned %v after stop", err)
		}
		if _, err := os.Stat(socket); !os.IsNotExist(err) {
			t.Errorf("socket %s still there after stop (stat: %v)", socket, err)
		}
	})
	return &testDriver{
		stateDir: stateDir,
		ident:    csi.NewIdentityClient(conn),
		ctrl:     csi.NewControllerClient(conn),
		node:     csi.NewNodeClient(conn),
	}
}

func mountCap() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func blockCap() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// createVolume creates a volume of size bytes named name and returns it.
func (d *testDriver) createVolume(t *testing.T, name string, size int64) *csi.Volume {
	t.Helper()
	resp, err := d.ctrl.CreateVolume(testCtx(t), &csi.CreateVolumeRequest{
		Name:               name,
		CapacityRange:      &csi.CapacityRange{RequiredBytes: size},
		VolumeCapabilities: []*csi.VolumeCapability{mountCap()},
	})
	if err != nil {
		t.Fatalf("CreateVolume(%s): %v", name, err)
	}
	return resp.GetVolume()
}

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: got %v, want code %v", what, err, code)
	}
}

func TestIdentity(t *testing.T) {
	d := startDriver(t, t.TempDir())
	ctx := testCtx(t)
	info, err := d.ident.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	if err != nil || info.GetName() != testDriverName || info.GetVendorVersion() != vendorVersion {
		t.Errorf("GetPluginInfo = %v, %v", info, err)
	}
	probe, err := d.ident.Probe(ctx, &csi.ProbeRequest{})
	if err != nil || !probe.GetReady().GetValue() {
		t.Errorf("Probe = %v, %v; want ready", probe, err)
	}
	caps, err := d.ident.GetPluginCapabilities(ctx, &csi.GetPluginCapabilitiesRequest{})
	if err != nil {
		t.Fatalf("GetPluginCapabilities: %v", err)
	}
	var got []string
	for _, c := range caps.GetCapabilities() {
		if s := c.GetService(); s != nil {
			got = append(got, s.GetType().String())
		}
		if e := c.GetVolumeExpansion(); e != nil {
			got = append(got, "EXPANSION_"+e.GetType().String())
		}
	}
	if want := "CONTROLLER_SERVICE VOLUME_ACCESSIBILITY_CONSTRAINTS EXPANSION_ONLINE"; strings.Join(got, " ") != want {
		t.Errorf("plugin capabilities = %v, want %s", got, want)
	}
	node, err := d.node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil || node.GetNodeId() != testNodeID || node.GetMaxVolumesPerNode() != 7 ||
		node.GetAccessibleTopology().GetSegments()[topologyKey] != testNodeID {
		t.Errorf("NodeGetInfo = %v, %v", node, err)
	}
}
