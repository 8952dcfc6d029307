package main

import (
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The mount mode of a volume: the StorageClass parameter (CreateVolume parameters, returned
// as volume_context and so in the PersistentVolume's volumeAttributes) or the inline volume's
// volumeAttributes key mountMode.
const (
	mountModeKey  = "mountMode"
	mountModeBind = "bind" // the default: bind mounts, which outlive the plugin process
	mountModeFuse = "fuse" // a FUSE mount served by the plugin process, which dies with it
)

// fuseSubtype is the FUSE file system name: the mount's type is "fuse.hostpathplugin".
const fuseSubtype = "hostpathplugin"

// fuseUnmountWait bounds how long NodeUnpublishVolume waits for a FUSE server to stop after
// its mount is gone: the server keeps serving while a copy of the mount lives in another
// mount namespace.
const fuseUnmountWait = 10 * time.Second

// mountMode reads the mount mode from parameters or a volume context.
func mountMode(m map[string]string) (string, error) {
	switch v := m[mountModeKey]; v {
	case "", mountModeBind:
		return mountModeBind, nil
	case mountModeFuse:
		return mountModeFuse, nil
	default:
		return "", status.Errorf(codes.InvalidArgument, "%s %q: must be %q (the default) or %q", mountModeKey, v, mountModeBind, mountModeFuse)
	}
}

// fuseMount is a FUSE file system this process serves at a target path.
type fuseMount struct {
	server   *fuse.Server
	volumeID string
	readOnly bool
}

// fuseMounts holds the FUSE servers of this process by target path. Nothing else knows them:
// when the process ends, their mounts break ("transport endpoint is not connected"), as the
// mounts of a FUSE-based CSI driver do when its node plugin restarts.
type fuseMounts struct {
	mu     sync.Mutex
	byPath map[string]*fuseMount
}

func newFuseMounts() *fuseMounts { return &fuseMounts{byPath: map[string]*fuseMount{}} }

func (f *fuseMounts) get(target string) *fuseMount {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byPath[filepath.Clean(target)]
}

func (f *fuseMounts) put(target string, m *fuseMount) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byPath[filepath.Clean(target)] = m
}

func (f *fuseMounts) remove(target string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byPath, filepath.Clean(target))
}

// publishFuse serves a loopback FUSE file system of dataDir at target, unless this process
// serves one there already. A dead FUSE mount left at target by an earlier plugin process is
// detached first; any other mount there is a conflict.
func (s *nodeServer) publishFuse(id, dataDir, target string, readOnly bool) error {
	if m := s.fuse.get(target); m != nil {
		if m.readOnly != readOnly {
			return status.Errorf(codes.AlreadyExists, "%s is already mounted with readonly=%v", target, m.readOnly)
		}
		return nil
	}
	if err := detachStale(target); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if err := mkdirTarget(target); err != nil {
		return err
	}
	if m, mounted, err := mountAt(target); err != nil {
		return status.Error(codes.Internal, err.Error())
	} else if mounted {
		return status.Errorf(codes.AlreadyExists, "%s is already mounted (type %s), not by this plugin's FUSE server", target, m.fsType)
	}
	root, err := fs.NewLoopbackRoot(dataDir)
	if err != nil {
		return status.Errorf(codes.Internal, "FUSE loopback of %s: %v", dataDir, err)
	}
	flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV)
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	server, err := fs.Mount(target, root, &fs.Options{MountOptions: fuse.MountOptions{
		// mount(2) as root, with /dev/fuse: no fusermount binary, and no fallback to it.
		DirectMount:       true,
		DirectMountStrict: true,
		DirectMountFlags:  flags,
		// Pods run as any user: let them in, with the kernel checking the file modes.
		AllowOther: true,
		Options:    []string{"default_permissions"},
		FsName:     s.name + ":" + id,
		Name:       fuseSubtype,
	}})
	if err != nil {
		return status.Errorf(codes.Internal, "FUSE mount of %s on %s: %v", dataDir, target, err)
	}
	s.fuse.put(target, &fuseMount{server: server, volumeID: id, readOnly: readOnly})
	log.Printf("volume %s: serving a FUSE mount of %s on %s (readonly=%v)", id, dataDir, target, readOnly)
	return nil
}

// unpublishFuse stops the FUSE server this process runs at target, if any: it unmounts the
// target and waits (bounded) for the server to finish.
func (s *nodeServer) unpublishFuse(target string) error {
	m := s.fuse.get(target)
	if m == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- m.server.Unmount() }()
	select {
	case err := <-done:
		if err != nil {
			// Unmounted by someone else already: nothing left to do.
			if _, mounted, merr := mountAt(target); merr != nil || mounted {
				return status.Errorf(codes.Internal, "unmounting the FUSE mount at %s: %v", target, err)
			}
		}
	case <-time.After(fuseUnmountWait):
		// The server's loops end when the last copy of the mount goes away.
		log.Printf("volume %s: the FUSE server of %s still serves after %v (a copy of the mount lives elsewhere)", m.volumeID, target, fuseUnmountWait)
	}
	s.fuse.remove(target)
	return nil
}

// isStale reports whether err says that path is a FUSE mount whose server is gone.
func isStale(err error) bool {
	return errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ECONNABORTED)
}

// detachStale lazily unmounts (MNT_DETACH) every dead FUSE mount stacked on path: one whose
// server has exited answers stat with ENOTCONN. Other paths are left alone.
func detachStale(path string) error {
	for range maxStackedMounts {
		var st unix.Stat_t
		if err := unix.Stat(path, &st); !isStale(err) {
			return nil
		}
		if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("detaching the dead FUSE mount at %s: %w", path, err)
		}
		log.Printf("detached a dead FUSE mount (transport endpoint is not connected) at %s", path)
	}
	return fmt.Errorf("detaching dead FUSE mounts at %s: still one after %d", path, maxStackedMounts)
}
