package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func TestCreateVolumeIsIdempotentAndSurvivesRestart(t *testing.T) {
	stateDir := t.TempDir()
	d := startDriver(t, stateDir)
	v := d.createVolume(t, "pvc-a", 10*mib)
	if v.GetCapacityBytes() != 10*mib || v.GetAccessibleTopology()[0].GetSegments()[topologyKey] != testNodeID {
		t.Errorf("CreateVolume returned %v", v)
	}
	for _, p := range []string{filepath.Join(stateDir, v.GetVolumeId()), filepath.Join(stateDir, v.GetVolumeId()+".json")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("volume file missing: %v", err)
		}
	}
	if again := d.createVolume(t, "pvc-a", 5*mib); again.GetVolumeId() != v.GetVolumeId() || again.GetCapacityBytes() != 10*mib {
		t.Errorf("second CreateVolume(pvc-a, smaller) = %v, want the same volume", again)
	}
	_, err := d.ctrl.CreateVolume(testCtx(t), &csi.CreateVolumeRequest{
		Name:               "pvc-a",
		CapacityRange:      &csi.CapacityRange{RequiredBytes: 20 * mib},
		VolumeCapabilities: []*csi.VolumeCapability{mountCap()},
	})
	wantCode(t, "CreateVolume(pvc-a, larger)", err, codes.AlreadyExists)

	restarted := startDriver(t, stateDir)
	if again := restarted.createVolume(t, "pvc-a", 10*mib); again.GetVolumeId() != v.GetVolumeId() {
		t.Errorf("after a restart CreateVolume(pvc-a) = %s, want %s", again.GetVolumeId(), v.GetVolumeId())
	}
	def, err := restarted.ctrl.CreateVolume(testCtx(t), &csi.CreateVolumeRequest{
		Name: "pvc-default", VolumeCapabilities: []*csi.VolumeCapability{mountCap()}})
	if err != nil || def.GetVolume().GetCapacityBytes() != defaultCapacity {
		t.Errorf("CreateVolume without capacity = %v, %v; want %d bytes", def, err, defaultCapacity)
	}
}

func TestListVolumesPages(t *testing.T) {
	d := startDriver(t, t.TempDir())
	want := map[string]bool{}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		want[d.createVolume(t, name, mib).GetVolumeId()] = true
	}
	seen := map[string]bool{}
	token, pages := "", 0
	for {
		resp, err := d.ctrl.ListVolumes(testCtx(t), &csi.ListVolumesRequest{MaxEntries: 2, StartingToken: token})
		if err != nil {
			t.Fatalf("ListVolumes(token %q): %v", token, err)
		}
		if len(resp.GetEntries()) > 2 {
			t.Errorf("page of %d entries, max_entries 2", len(resp.GetEntries()))
		}
		for _, e := range resp.GetEntries() {
			id := e.GetVolume().GetVolumeId()
			if seen[id] || !want[id] {
				t.Errorf("ListVolumes returned %s twice or unexpectedly", id)
			}
			seen[id] = true
		}
		pages++
		if token = resp.GetNextToken(); token == "" {
			break
		}
	}
	if len(seen) != len(want) || pages != 3 {
		t.Errorf("listed %d volumes in %d pages, want %d in 3", len(seen), pages, len(want))
	}
	_, err := d.ctrl.ListVolumes(testCtx(t), &csi.ListVolumesRequest{StartingToken: "../bad"})
	wantCode(t, "ListVolumes(bad token)", err, codes.Aborted)
}

func TestControllerPublishExpandValidate(t *testing.T) {
	d := startDriver(t, t.TempDir())
	ctx := testCtx(t)
	id := d.createVolume(t, "pvc-p", 10*mib).GetVolumeId()

	pub, err := d.ctrl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
		VolumeId: id, NodeId: testNodeID, VolumeCapability: mountCap()})
	if err != nil || pub.GetPublishContext()[publishedByKey] != testNodeID {
		t.Errorf("ControllerPublishVolume = %v, %v", pub, err)
	}
	_, err = d.ctrl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
		VolumeId: id, NodeId: "other-node", VolumeCapability: mountCap()})
	wantCode(t, "ControllerPublishVolume(other node)", err, codes.NotFound)
	for range 2 {
		if _, err := d.ctrl.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: testNodeID}); err != nil {
			t.Errorf("ControllerUnpublishVolume: %v", err)
		}
	}

	exp, err := d.ctrl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{
		VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: 30 * mib}})
	if err != nil || exp.GetCapacityBytes() != 30*mib || exp.GetNodeExpansionRequired() {
		t.Errorf("ControllerExpandVolume = %v, %v", exp, err)
	}
	list, err := d.ctrl.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil || len(list.GetEntries()) != 1 || list.GetEntries()[0].GetVolume().GetCapacityBytes() != 30*mib {
		t.Errorf("ListVolumes after expansion = %v, %v; want one volume of 30 MiB", list, err)
	}
	_, err = d.ctrl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{
		VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: mib, LimitBytes: 2 * mib}})
	wantCode(t, "ControllerExpandVolume(shrink)", err, codes.OutOfRange)

	ok, err := d.ctrl.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: id, VolumeCapabilities: []*csi.VolumeCapability{mountCap()}})
	if err != nil || ok.GetConfirmed() == nil {
		t.Errorf("ValidateVolumeCapabilities(mount) = %v, %v; want confirmed", ok, err)
	}
	bad, err := d.ctrl.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: id, VolumeCapabilities: []*csi.VolumeCapability{blockCap()}})
	if err != nil || bad.GetConfirmed() != nil || bad.GetMessage() == "" {
		t.Errorf("ValidateVolumeCapabilities(block) = %v, %v; want unconfirmed with a message", bad, err)
	}
}

func TestBadRequestsGetTheRightCodes(t *testing.T) {
	d := startDriver(t, t.TempDir())
	ctx := testCtx(t)
	id := d.createVolume(t, "pvc-x", mib).GetVolumeId()
	caps := []*csi.VolumeCapability{mountCap()}
	otherNode := &csi.TopologyRequirement{Requisite: []*csi.Topology{{Segments: map[string]string{topologyKey: "node-2"}}}}
	ourNode := &csi.TopologyRequirement{Preferred: []*csi.Topology{{Segments: map[string]string{topologyKey: testNodeID}}}}
	snapshot := &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: "s"}}}

	cases := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"CreateVolume without name", func() error {
			_, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{VolumeCapabilities: caps})
			return err
		}, codes.InvalidArgument},
		{"CreateVolume without capabilities", func() error {
			_, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "n"})
			return err
		}, codes.InvalidArgument},
		{"CreateVolume block", func() error {
			_, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "n", VolumeCapabilities: []*csi.VolumeCapability{blockCap()}})
			return err
		}, codes.InvalidArgument},
		{"CreateVolume required > limit", func() error {
			_, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "n", VolumeCapabilities: caps,
				CapacityRange: &csi.CapacityRange{RequiredBytes: 2 * mib, LimitBytes: mib}})
			return err
		}, codes.InvalidArgument},
		{"CreateVolume from a snapshot", func() error {
			_, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "n", VolumeCapabilities: caps, VolumeContentSource: snapshot})
			return err
		}, codes.InvalidArgument},
		{"CreateVolume on another node", func() error {
			_, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "n", VolumeCapabilities: caps, AccessibilityRequirements: otherNode})
			return err
		}, codes.ResourceExhausted},
		{"CreateVolume on our node", func() error {
			_, err := d.ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "n", VolumeCapabilities: caps, AccessibilityRequirements: ourNode})
			return err
		}, codes.OK},
		{"DeleteVolume without id", func() error {
			_, err := d.ctrl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{})
			return err
		}, codes.InvalidArgument},
		{"DeleteVolume with a path as id", func() error {
			_, err := d.ctrl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "../etc"})
			return err
		}, codes.InvalidArgument},
		{"DeleteVolume unknown", func() error {
			_, err := d.ctrl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "unknown"})
			return err
		}, codes.OK},
		{"ControllerPublishVolume unknown volume", func() error {
			_, err := d.ctrl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: "unknown", NodeId: testNodeID, VolumeCapability: mountCap()})
			return err
		}, codes.NotFound},
		{"ControllerPublishVolume without node", func() error {
			_, err := d.ctrl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, VolumeCapability: mountCap()})
			return err
		}, codes.InvalidArgument},
		{"ControllerExpandVolume unknown volume", func() error {
			_, err := d.ctrl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "unknown", CapacityRange: &csi.CapacityRange{RequiredBytes: mib}})
			return err
		}, codes.NotFound},
		{"ControllerExpandVolume without range", func() error {
			_, err := d.ctrl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id})
			return err
		}, codes.InvalidArgument},
		{"ValidateVolumeCapabilities unknown volume", func() error {
			_, err := d.ctrl.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "unknown", VolumeCapabilities: caps})
			return err
		}, codes.NotFound},
		{"ListVolumes negative max_entries", func() error {
			_, err := d.ctrl.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: -1})
			return err
		}, codes.InvalidArgument},
		{"CreateSnapshot", func() error {
			_, err := d.ctrl.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: id})
			return err
		}, codes.Unimplemented},
		{"NodeStageVolume unknown volume", func() error {
			_, err := d.node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: "unknown", StagingTargetPath: t.TempDir(), VolumeCapability: mountCap()})
			return err
		}, codes.NotFound},
		{"NodeStageVolume block", func() error {
			_, err := d.node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: t.TempDir(), VolumeCapability: blockCap()})
			return err
		}, codes.InvalidArgument},
		{"NodePublishVolume without staging path", func() error {
			_, err := d.node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: id, TargetPath: t.TempDir(), VolumeCapability: mountCap()})
			return err
		}, codes.InvalidArgument},
		{"NodePublishVolume not staged", func() error {
			_, err := d.node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: t.TempDir(),
				TargetPath: filepath.Join(t.TempDir(), "target"), VolumeCapability: mountCap()})
			return err
		}, codes.FailedPrecondition},
		{"NodeGetVolumeStats missing path", func() error {
			_, err := d.node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: filepath.Join(t.TempDir(), "missing")})
			return err
		}, codes.NotFound},
		{"NodeGetVolumeStats path not mounted", func() error {
			_, err := d.node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: t.TempDir()})
			return err
		}, codes.NotFound},
		{"NodeUnpublishVolume without target", func() error {
			_, err := d.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id})
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range cases {
		wantCode(t, tc.name, tc.call(), tc.want)
	}
}
