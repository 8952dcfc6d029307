package main

import (
	"errors"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// topologyKey is the topology segment every volume and node of this driver carries.
const topologyKey = "topology.hostpath.csi/node"

// ephemeralContextKey marks a CSI inline (ephemeral) volume in NodePublishVolume's
// volume_context; the kubelet sets it.
const ephemeralContextKey = "csi.storage.k8s.io/ephemeral"

// checkVolumeID rejects empty IDs and IDs that are not a safe path element.
func checkVolumeID(id string) error {
	if id == "" {
		return status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if !validID.MatchString(id) {
		return status.Errorf(codes.InvalidArgument, "volume_id %q: only letters, digits, '.', '_' and '-' are allowed", id)
	}
	return nil
}

// checkCapability accepts mount volumes with a known access mode; block volumes are not
// supported by this test driver.
func checkCapability(c *csi.VolumeCapability) error {
	if c == nil {
		return status.Error(codes.InvalidArgument, "volume_capability is required")
	}
	if c.GetBlock() != nil {
		return status.Error(codes.InvalidArgument, "block access type is not supported by this test driver: only mount volumes")
	}
	if c.GetMount() == nil {
		return status.Error(codes.InvalidArgument, "volume_capability needs the mount access type")
	}
	if c.GetAccessMode().GetMode() == csi.VolumeCapability_AccessMode_UNKNOWN {
		return status.Error(codes.InvalidArgument, "volume_capability needs an access mode")
	}
	return nil
}

func checkCapabilities(caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Error(codes.InvalidArgument, "volume_capabilities are required")
	}
	for _, c := range caps {
		if err := checkCapability(c); err != nil {
			return err
		}
	}
	return nil
}

// lookup returns the volume's record, NotFound if it has none.
func (d *driver) lookup(id string) (*volume, error) {
	v, err := d.store.get(id)
	if errors.Is(err, errNoVolume) {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist", id)
	}
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return v, nil
}

// topology is the single topology segment of this driver's node.
func (d *driver) topology() *csi.Topology {
	return &csi.Topology{Segments: map[string]string{topologyKey: d.nodeID}}
}
