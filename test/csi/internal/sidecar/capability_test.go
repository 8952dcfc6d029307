package sidecar

import (
	"context"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"

	"csi-operator/test/csi/internal/sidecar/fakedriver"
)

func TestVolumeCapabilitiesOnePerAccessMode(t *testing.T) {
	caps, err := VolumeCapabilities([]v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany}, nil, "ext4", []string{"noatime"})
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != 2 ||
		caps[0].GetAccessMode().GetMode() != csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER ||
		caps[1].GetAccessMode().GetMode() != csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY ||
		caps[0].GetMount().GetFsType() != "ext4" || caps[0].GetMount().GetMountFlags()[0] != "noatime" {
		t.Errorf("capabilities: %v", caps)
	}
	if _, err := VolumeCapabilities(nil, nil, "", nil); err == nil {
		t.Error("no access modes: want an error")
	}
}

func TestPVCapabilityTakesTheWidestMode(t *testing.T) {
	block := v1.PersistentVolumeBlock
	spec := &v1.PersistentVolumeSpec{
		AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadWriteMany},
		VolumeMode:             &block,
		PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}},
	}
	c, err := PVCapability(spec)
	if err != nil {
		t.Fatal(err)
	}
	if c.GetAccessMode().GetMode() != csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER || c.GetBlock() == nil {
		t.Errorf("capability: %v", c)
	}
}

func TestHasControllerCapability(t *testing.T) {
	driver := &fakedriver.Controller{Caps: []csi.ControllerServiceCapability_RPC_Type{csi.ControllerServiceCapability_RPC_EXPAND_VOLUME}}
	client := csi.NewControllerClient(fakedriver.Serve(t, "test.csi.k8s.io", driver))
	for rpc, want := range map[csi.ControllerServiceCapability_RPC_Type]bool{
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME:            true,
		csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME: false,
	} {
		if got, err := HasControllerCapability(context.Background(), client, rpc); err != nil || got != want {
			t.Errorf("HasControllerCapability(%v) = %v, %v; want %v", rpc, got, err, want)
		}
	}
}
