// Package fakedriver is an in-process fake CSI controller for the unit tests of csi-operator's
// TEST FIXTURE controller sidecars: it records every request and answers with what the test
// set. Served on a unix socket in a temporary directory, like a real driver.
package fakedriver

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"csi-operator/test/csi/internal/csiconn"
	"csi-operator/test/csi/internal/fakecsi"
)

// Controller is a fake CSI controller service. Set its fields before serving it.
type Controller struct {
	csi.UnimplementedControllerServer
	// Caps is what ControllerGetCapabilities reports.
	Caps []csi.ControllerServiceCapability_RPC_Type
	// Volume is what CreateVolume returns.
	Volume *csi.Volume
	// PublishContext is what ControllerPublishVolume returns.
	PublishContext map[string]string
	// Expanded is what ControllerExpandVolume returns.
	Expanded *csi.ControllerExpandVolumeResponse

	mu       sync.Mutex
	err      error
	requests []proto.Message
}

// FailWith makes every later call fail with err (nil: succeed again).
func (c *Controller) FailWith(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
}

// Requests returns the requests received so far, in order (capability queries excluded).
func (c *Controller) Requests() []proto.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]proto.Message(nil), c.requests...)
}

func (c *Controller) record(req proto.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests = append(c.requests, req)
	return c.err
}

func (c *Controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	resp := &csi.ControllerGetCapabilitiesResponse{}
	for _, t := range c.Caps {
		resp.Capabilities = append(resp.Capabilities, &csi.ControllerServiceCapability{
			Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}})
	}
	return resp, nil
}

func (c *Controller) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if err := c.record(req); err != nil {
		return nil, err
	}
	return &csi.CreateVolumeResponse{Volume: c.Volume}, nil
}

func (c *Controller) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if err := c.record(req); err != nil {
		return nil, err
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (c *Controller) ControllerPublishVolume(_ context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	if err := c.record(req); err != nil {
		return nil, err
	}
	return &csi.ControllerPublishVolumeResponse{PublishContext: c.PublishContext}, nil
}

func (c *Controller) ControllerUnpublishVolume(_ context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	if err := c.record(req); err != nil {
		return nil, err
	}
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}

func (c *Controller) ControllerExpandVolume(_ context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	if err := c.record(req); err != nil {
		return nil, err
	}
	return c.Expanded, nil
}

// Serve serves c (and an Identity service answering to the name driver) on a unix socket
// until the test ends, and returns a connection to it.
func Serve(t *testing.T, driver string, c *Controller) *grpc.ClientConn {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "csi.sock")
	l, err := csiconn.ListenUnix(socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	csi.RegisterIdentityServer(srv, &fakecsi.Identity{Name: driver})
	csi.RegisterControllerServer(srv, c)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := csiconn.Dial(ctx, socket, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
