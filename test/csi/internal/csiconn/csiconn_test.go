package csiconn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"csi-operator/test/csi/internal/csiconn"
	"csi-operator/test/csi/internal/fakecsi"
)

func TestSocketPath(t *testing.T) {
	for in, want := range map[string]string{
		"/csi/csi.sock":         "/csi/csi.sock",
		"unix:///csi/csi.sock":  "/csi/csi.sock",
		"unix:///csi//csi.sock": "/csi/csi.sock",
		"relative/csi.sock":     "relative/csi.sock",
	} {
		got, err := csiconn.SocketPath(in)
		if err != nil || got != want {
			t.Errorf("SocketPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "unix://", "tcp://127.0.0.1:10000"} {
		if got, err := csiconn.SocketPath(bad); err == nil {
			t.Errorf("SocketPath(%q) = %q, want an error", bad, got)
		}
	}
}

func TestDialWaitsForTheDriver(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "csi.sock")
	go func() {
		time.Sleep(1500 * time.Millisecond)
		fakecsi.Serve(t, socket, &fakecsi.Identity{Name: "late.csi.test"})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	conn, err := csiconn.Dial(ctx, "unix://"+socket, time.Second)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer conn.Close()
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("Dial returned after %v, before the driver was listening", waited)
	}
	name, err := csiconn.DriverName(ctx, conn)
	if err != nil || name != "late.csi.test" {
		t.Errorf("DriverName = %q, %v; want late.csi.test", name, err)
	}
}

func TestDialGivesUpWithTheContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := csiconn.Dial(ctx, filepath.Join(t.TempDir(), "missing.sock"), 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Fatalf("Dial to a missing socket: err = %v, want 'not reachable'", err)
	}
}

func TestProbeAndDriverName(t *testing.T) {
	ready, notReady := true, false
	cases := []struct {
		name       string
		driverName string
		ready      *bool
		probeOK    bool
		nameOK     bool
	}{
		{"ready unset", "a.csi.test", nil, true, true},
		{"ready true", "a.csi.test", &ready, true, true},
		{"ready false, empty name", "", &notReady, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			socket := filepath.Join(t.TempDir(), "csi.sock")
			id := &fakecsi.Identity{Name: tc.driverName}
			if tc.ready != nil {
				id.SetReady(*tc.ready)
			}
			fakecsi.Serve(t, socket, id)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := csiconn.Dial(ctx, socket, time.Second)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer conn.Close()
			if err := csiconn.Probe(ctx, conn); (err == nil) != tc.probeOK {
				t.Errorf("Probe: err = %v, want ok=%v", err, tc.probeOK)
			}
			if name, err := csiconn.DriverName(ctx, conn); (err == nil) != tc.nameOK || (tc.nameOK && name != tc.driverName) {
				t.Errorf("DriverName = %q, %v; want ok=%v", name, err, tc.nameOK)
			}
		})
	}
}

func TestListenUnixReplacesAStaleSocket(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "sub", "csi.sock")
	if err := os.MkdirAll(filepath.Dir(socket), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(socket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := csiconn.ListenUnix("unix://" + socket)
	if err != nil {
		t.Fatalf("ListenUnix over a stale file: %v", err)
	}
	defer l.Close()
	if fi, err := os.Stat(socket); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("%s is not a socket after ListenUnix: %v", socket, err)
	}
}
