package main

import (
	"context"
	"errors"
	"slices"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// defaultCapacity is the size of a volume whose request names none.
const defaultCapacity int64 = 1 << 30

// publishedByKey is the publish_context key ControllerPublishVolume returns.
const publishedByKey = "csiop.dev/published-by"

func (s *controllerServer) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	var caps []*csi.ControllerServiceCapability
	for _, t := range []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
		csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
	} {
		caps = append(caps, &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
			Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

func (s *controllerServer) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	if req.GetVolumeContentSource() != nil {
		return nil, status.Error(codes.InvalidArgument, "volume_content_source (snapshots, clones) is not supported by this test driver")
	}
	capacity, err := requestedCapacity(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	mode, err := mountMode(req.GetParameters())
	if err != nil {
		return nil, err
	}
	if !s.reachable(req.GetAccessibilityRequirements()) {
		return nil, status.Errorf(codes.ResourceExhausted, "this driver only provisions on node %s, which accessibility_requirements exclude", s.nodeID)
	}

	defer s.locks.lock("name/" + req.GetName())()
	v, err := s.store.byName(req.GetName())
	switch {
	case err == nil:
		if !fits(v.CapacityBytes, req.GetCapacityRange()) {
			return nil, status.Errorf(codes.AlreadyExists, "volume %q exists with capacity %d, incompatible with the requested range", v.Name, v.CapacityBytes)
		}
		if v.mode() != mode {
			return nil, status.Errorf(codes.AlreadyExists, "volume %q exists with %s %q, not %q", v.Name, mountModeKey, v.mode(), mode)
		}
	case errors.Is(err, errNoVolume):
		id, err := newVolumeID()
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		v = &volume{ID: id, Name: req.GetName(), CapacityBytes: capacity}
		if mode != mountModeBind {
			v.MountMode = mode
		}
		if err := s.store.create(v); err != nil {
			return nil, status.Errorf(codes.Internal, "creating volume %q: %v", v.Name, err)
		}
	default:
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:           v.ID,
		CapacityBytes:      v.CapacityBytes,
		VolumeContext:      v.context(),
		AccessibleTopology: []*csi.Topology{s.topology()},
	}}, nil
}

// requestedCapacity picks required_bytes, else limit_bytes, else the default.
func requestedCapacity(r *csi.CapacityRange) (int64, error) {
	required, limit := r.GetRequiredBytes(), r.GetLimitBytes()
	switch {
	case required < 0 || limit < 0:
		return 0, status.Error(codes.InvalidArgument, "capacity_range must not be negative")
	case limit > 0 && required > limit:
		return 0, status.Errorf(codes.InvalidArgument, "capacity_range: required_bytes %d exceeds limit_bytes %d", required, limit)
	case required > 0:
		return required, nil
	case limit > 0:
		return limit, nil
	}
	return defaultCapacity, nil
}

// fits reports whether an existing capacity satisfies a requested range.
func fits(capacity int64, r *csi.CapacityRange) bool {
	return capacity >= r.GetRequiredBytes() && (r.GetLimitBytes() == 0 || capacity <= r.GetLimitBytes())
}

// reachable reports whether the requirements allow this driver's node (no requirement does).
func (s *controllerServer) reachable(req *csi.TopologyRequirement) bool {
	terms := slices.Concat(req.GetRequisite(), req.GetPreferred())
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if t.GetSegments()[topologyKey] == s.nodeID {
			return true
		}
	}
	return false
}

func (s *controllerServer) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, err
	}
	defer s.locks.lock(req.GetVolumeId())()
	if err := s.store.remove(req.GetVolumeId()); err != nil {
		return nil, status.Errorf(codes.Internal, "deleting volume %s: %v", req.GetVolumeId(), err)
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (s *controllerServer) ControllerPublishVolume(_ context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, err
	}
	if req.GetNodeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "node_id is required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	defer s.locks.lock(req.GetVolumeId())()
	if _, err := s.lookup(req.GetVolumeId()); err != nil {
		return nil, err
	}
	if req.GetNodeId() != s.nodeID {
		return nil, status.Errorf(codes.NotFound, "node %q does not exist for this driver (it serves node %q)", req.GetNodeId(), s.nodeID)
	}
	return &csi.ControllerPublishVolumeResponse{PublishContext: map[string]string{publishedByKey: s.nodeID}}, nil
}

func (s *controllerServer) ControllerUnpublishVolume(_ context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, err
	}
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}

func (s *controllerServer) ControllerExpandVolume(_ context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, err
	}
	if req.GetCapacityRange() == nil {
		return nil, status.Error(codes.InvalidArgument, "capacity_range is required")
	}
	if c := req.GetVolumeCapability(); c != nil {
		if err := checkCapability(c); err != nil {
			return nil, err
		}
	}
	requested, err := requestedCapacity(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	defer s.locks.lock(req.GetVolumeId())()
	v, err := s.lookup(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if limit := req.GetCapacityRange().GetLimitBytes(); limit > 0 && v.CapacityBytes > limit {
		return nil, status.Errorf(codes.OutOfRange, "volume %s already has %d bytes, more than limit_bytes %d (shrinking is not supported)", v.ID, v.CapacityBytes, limit)
	}
	if requested > v.CapacityBytes {
		v.CapacityBytes = requested
		if err := s.store.save(v); err != nil {
			return nil, status.Errorf(codes.Internal, "expanding volume %s: %v", v.ID, err)
		}
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: v.CapacityBytes, NodeExpansionRequired: false}, nil
}

func (s *controllerServer) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, err
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume_capabilities are required")
	}
	if _, err := s.lookup(req.GetVolumeId()); err != nil {
		return nil, err
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: status.Convert(err).Message()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}

func (s *controllerServer) ListVolumes(_ context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, "max_entries must not be negative")
	}
	token := req.GetStartingToken()
	if token != "" && !validID.MatchString(token) {
		return nil, status.Errorf(codes.Aborted, "starting_token %q is not valid", token)
	}
	vols, err := s.store.list()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// The token is the ID to continue from: volumes are listed in ID order.
	resp := &csi.ListVolumesResponse{}
	for _, v := range vols {
		if v.Ephemeral || v.ID < token { // inline volumes belong to the node, not the controller
			continue
		}
		if req.GetMaxEntries() > 0 && len(resp.Entries) == int(req.GetMaxEntries()) {
			resp.NextToken = v.ID
			break
		}
		resp.Entries = append(resp.Entries, &csi.ListVolumesResponse_Entry{Volume: &csi.Volume{
			VolumeId:           v.ID,
			CapacityBytes:      v.CapacityBytes,
			VolumeContext:      v.context(),
			AccessibleTopology: []*csi.Topology{s.topology()},
		}})
	}
	return resp, nil
}
