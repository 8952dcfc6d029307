package csiconn

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SocketPath returns the filesystem path of a unix socket address given either as a plain
// path ("/csi/csi.sock") or as a URL ("unix:///csi/csi.sock"). Other schemes are rejected.
func SocketPath(address string) (string, error) {
	path := address
	if rest, ok := strings.CutPrefix(address, "unix://"); ok {
		path = rest
	} else if strings.Contains(address, "://") {
		return "", fmt.Errorf("CSI address %q: only unix sockets are supported", address)
	}
	if path == "" {
		return "", fmt.Errorf("CSI address %q: empty socket path", address)
	}
	return filepath.Clean(path), nil
}
