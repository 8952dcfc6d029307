package main

import (
	"context"
	"errors"
	"os"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func (s *nodeServer) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{
		NodeId:             s.nodeID,
		MaxVolumesPerNode:  s.maxVolumesPerNode,
		AccessibleTopology: s.topology(),
	}, nil
}

func (s *nodeServer) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	var caps []*csi.NodeServiceCapability
	for _, t := range []csi.NodeServiceCapability_RPC_Type{
		csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
		csi.NodeServiceCapability_RPC_GET_VOLUME_STATS,
	} {
		caps = append(caps, &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{
			Rpc: &csi.NodeServiceCapability_RPC{Type: t}}})
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

// NodeStageVolume bind-mounts the volume's data directory onto the staging path.
func (s *nodeServer) NodeStageVolume(_ context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, err
	}
	staging := req.GetStagingTargetPath()
	if staging == "" {
		return nil, status.Error(codes.InvalidArgument, "staging_target_path is required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	defer s.locks.lock(req.GetVolumeId())()
	if _, err := s.lookup(req.GetVolumeId()); err != nil {
		return nil, err
	}
	if err := mountOnce(s.store.dataDir(req.GetVolumeId()), staging, false); err != nil {
		return nil, err
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

func (s *nodeServer) NodeUnstageVolume(_ context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, err
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging_target_path is required")
	}
	defer s.locks.lock(req.GetVolumeId())()
	if err := unmountAndRemove(req.GetStagingTargetPath()); err != nil {
		return nil, err
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume bind-mounts the staged volume (or, for an inline ephemeral volume, a
// directory made now) onto the target path; in the fuse mount mode it serves a FUSE loopback
// of the volume's data directory there instead.
func (s *nodeServer) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	id := req.GetVolumeId()
	if err := checkVolumeID(id); err != nil {
		return nil, err
	}
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target_path is required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	ephemeral := req.GetVolumeContext()[ephemeralContextKey] == "true"
	mode, err := mountMode(req.GetVolumeContext())
	if err != nil {
		return nil, err
	}
	if !ephemeral && req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging_target_path is required (this driver stages volumes)")
	}
	defer s.locks.lock(id)()

	var source string
	if ephemeral {
		if err := s.ensureEphemeral(id); err != nil {
			return nil, err
		}
		source = s.store.dataDir(id)
	} else {
		if _, err := s.lookup(id); err != nil {
			return nil, err
		}
		source = req.GetStagingTargetPath()
		_, staged, err := mountAt(source)
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if !staged {
			return nil, status.Errorf(codes.FailedPrecondition, "volume %s is not staged at %s", id, source)
		}
	}
	if mode == mountModeFuse {
		err = s.publishFuse(id, s.store.dataDir(id), req.GetTargetPath(), req.GetReadonly())
	} else {
		err = mountOnce(source, req.GetTargetPath(), req.GetReadonly())
	}
	if err != nil {
		return nil, err
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

// ensureEphemeral creates the record and data directory of an inline volume, once.
func (s *nodeServer) ensureEphemeral(id string) error {
	_, err := s.store.get(id)
	if errors.Is(err, errNoVolume) {
		err = s.store.create(&volume{ID: id, Name: id, CapacityBytes: defaultCapacity, Ephemeral: true})
	}
	if err != nil {
		return status.Errorf(codes.Internal, "inline volume %s: %v", id, err)
	}
	return nil
}

// NodeUnpublishVolume unmounts the target path and removes it: a FUSE mount this process
// serves is stopped, a dead one left by an earlier plugin process is detached. An inline
// volume's data is deleted.
func (s *nodeServer) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	id := req.GetVolumeId()
	if err := checkVolumeID(id); err != nil {
		return nil, err
	}
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target_path is required")
	}
	defer s.locks.lock(id)()
	target := req.GetTargetPath()
	if err := s.unpublishFuse(target); err != nil {
		return nil, err
	}
	if err := detachStale(target); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := unmountAndRemove(target); err != nil {
		return nil, err
	}
	v, err := s.store.get(id)
	if errors.Is(err, errNoVolume) {
		return &csi.NodeUnpublishVolumeResponse{}, nil
	}
	if err == nil && v.Ephemeral {
		err = s.store.remove(id)
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: %v", id, err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (s *nodeServer) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if err := checkVolumeID(req.GetVolumeId()); err != nil {
		return nil, err
	}
	path := req.GetVolumePath()
	if path == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_path is required")
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, status.Errorf(codes.NotFound, "volume_path %s does not exist", path)
	}
	_, mounted, err := mountAt(path)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !mounted {
		return nil, status.Errorf(codes.NotFound, "volume %s is not mounted at %s", req.GetVolumeId(), path)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, status.Errorf(codes.Internal, "statfs %s: %v", path, err)
	}
	bsize := st.Bsize
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{
			Unit:      csi.VolumeUsage_BYTES,
			Total:     int64(st.Blocks) * bsize,
			Available: int64(st.Bavail) * bsize,
			Used:      int64(st.Blocks-st.Bfree) * bsize,
		},
		{
			Unit:      csi.VolumeUsage_INODES,
			Total:     int64(st.Files),
			Available: int64(st.Ffree),
			Used:      int64(st.Files - st.Ffree),
		},
	}}, nil
}

// mountOnce bind-mounts source onto target (created if missing) unless something is
// mounted there already; an existing mount with the other read-only setting is a conflict.
func mountOnce(source, target string, readOnly bool) error {
	if err := mkdirTarget(target); err != nil {
		return err
	}
	m, mounted, err := mountAt(target)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if mounted {
		if m.readOnly() != readOnly {
			return status.Errorf(codes.AlreadyExists, "%s is already mounted with readonly=%v", target, m.readOnly())
		}
		return nil
	}
	if err := bindMount(source, target, readOnly); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}

// mkdirTarget creates a mount point (and its parents) if missing.
func mkdirTarget(target string) error {
	if err := os.MkdirAll(target, 0o750); err != nil {
		return status.Errorf(codes.Internal, "creating %s: %v", target, err)
	}
	return nil
}

// unmountAndRemove unmounts target and removes the then empty directory; both may be gone.
func unmountAndRemove(target string) error {
	if err := unmount(target); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if err := os.Remove(target); err != nil && !os.IsNotExist(err) {
		return status.Errorf(codes.Internal, "removing %s: %v", target, err)
	}
	return nil
}
