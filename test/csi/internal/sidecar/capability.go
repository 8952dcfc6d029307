package sidecar

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
)

// accessModes maps the Kubernetes access modes to CSI ones. ReadWriteOncePod maps to
// SINGLE_NODE_WRITER: this stand-in does not negotiate the SINGLE_NODE_MULTI_WRITER
// capability that SINGLE_NODE_SINGLE_WRITER would need.
var accessModes = map[v1.PersistentVolumeAccessMode]csi.VolumeCapability_AccessMode_Mode{
	v1.ReadWriteOnce:    csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
	v1.ReadWriteOncePod: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
	v1.ReadOnlyMany:     csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
	v1.ReadWriteMany:    csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER,
}

// VolumeCapabilities gives one CSI capability per access mode (what CreateVolume takes):
// block access for volumeMode Block, else mount access with fsType and mountFlags.
func VolumeCapabilities(modes []v1.PersistentVolumeAccessMode, volumeMode *v1.PersistentVolumeMode,
	fsType string, mountFlags []string) ([]*csi.VolumeCapability, error) {
	if len(modes) == 0 {
		return nil, fmt.Errorf("no access modes")
	}
	caps := make([]*csi.VolumeCapability, 0, len(modes))
	for _, m := range modes {
		mode, ok := accessModes[m]
		if !ok {
			return nil, fmt.Errorf("unknown access mode %q", m)
		}
		caps = append(caps, capability(mode, volumeMode, fsType, mountFlags))
	}
	return caps, nil
}

// PVCapability gives the single CSI capability of a persistent volume (what
// ControllerPublishVolume and ControllerExpandVolume take): its widest access mode.
func PVCapability(spec *v1.PersistentVolumeSpec) (*csi.VolumeCapability, error) {
	if spec.CSI == nil {
		return nil, fmt.Errorf("not a CSI volume")
	}
	var widest *csi.VolumeCapability_AccessMode_Mode
	for _, m := range spec.AccessModes {
		mode, ok := accessModes[m]
		if !ok {
			return nil, fmt.Errorf("unknown access mode %q", m)
		}
		if widest == nil || breadth[mode] > breadth[*widest] {
			widest = &mode
		}
	}
	if widest == nil {
		return nil, fmt.Errorf("no access modes")
	}
	return capability(*widest, spec.VolumeMode, spec.CSI.FSType, spec.MountOptions), nil
}

// breadth orders the CSI modes accessModes produces, narrowest first.
var breadth = map[csi.VolumeCapability_AccessMode_Mode]int{
	csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER:      0,
	csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY:  1,
	csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER: 2,
}

func capability(mode csi.VolumeCapability_AccessMode_Mode, volumeMode *v1.PersistentVolumeMode,
	fsType string, mountFlags []string) *csi.VolumeCapability {
	c := &csi.VolumeCapability{AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode}}
	if volumeMode != nil && *volumeMode == v1.PersistentVolumeBlock {
		c.AccessType = &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}
	} else {
		c.AccessType = &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fsType, MountFlags: mountFlags}}
	}
	return c
}

// HasControllerCapability asks the driver (ControllerGetCapabilities) whether its controller
// service offers the RPC rpc.
func HasControllerCapability(ctx context.Context, controller csi.ControllerClient,
	rpc csi.ControllerServiceCapability_RPC_Type) (bool, error) {
	resp, err := controller.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		return false, fmt.Errorf("ControllerGetCapabilities: %w", err)
	}
	for _, c := range resp.GetCapabilities() {
		if c.GetRpc().GetType() == rpc {
			return true, nil
		}
	}
	return false, nil
}
