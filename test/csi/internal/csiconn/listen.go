package csiconn

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// ListenUnix listens on the unix socket endpoint ("/path" or "unix:///path"). A socket file
// left behind by an earlier process is removed first; the parent directory is created.
func ListenUnix(endpoint string) (net.Listener, error) {
	path, err := SocketPath(endpoint)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("creating the socket directory: %w", err)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("removing the stale socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	return l, nil
}
