// Package fakecsi is a minimal CSI Identity server for the tests of csi-operator's TEST
// FIXTURE programs (the sidecar stand-ins that only talk to a driver's Identity service).
package fakecsi

import (
	"context"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"csi-operator/test/csi/internal/csiconn"
)

// Identity answers GetPluginInfo with Name and Probe with the readiness set by SetReady
// (unset until then).
type Identity struct {
	csi.UnimplementedIdentityServer
	Name string

	mu    sync.Mutex
	ready *wrapperspb.BoolValue
}

// SetReady sets the ready field Probe returns.
func (f *Identity) SetReady(ready bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ready = wrapperspb.Bool(ready)
}

func (f *Identity) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: f.Name, VendorVersion: "fake"}, nil
}

func (f *Identity) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &csi.ProbeResponse{Ready: f.ready}, nil
}

// Serve serves id on the unix socket until the returned stop function is called or the
// test ends. It may be called from a goroutine: failures are reported with t.Error.
func Serve(t testing.TB, socket string, id *Identity) (stop func()) {
	l, err := csiconn.ListenUnix(socket)
	if err != nil {
		t.Errorf("fake CSI driver: %v", err)
		return func() {}
	}
	srv := grpc.NewServer()
	csi.RegisterIdentityServer(srv, id)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return srv.Stop
}
