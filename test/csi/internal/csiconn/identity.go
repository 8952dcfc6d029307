package csiconn

import (
	"context"
	"errors"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
)

// DriverName asks the driver for its name (Identity.GetPluginInfo).
func DriverName(ctx context.Context, conn *grpc.ClientConn) (string, error) {
	resp, err := csi.NewIdentityClient(conn).GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	if err != nil {
		return "", fmt.Errorf("GetPluginInfo: %w", err)
	}
	if resp.GetName() == "" {
		return "", errors.New("GetPluginInfo: the driver returned an empty name")
	}
	return resp.GetName(), nil
}

// Probe calls Identity.Probe. A driver is healthy when the call succeeds and its ready field
// is unset or true (the CSI spec lets a driver omit it).
func Probe(ctx context.Context, conn *grpc.ClientConn) error {
	resp, err := csi.NewIdentityClient(conn).Probe(ctx, &csi.ProbeRequest{})
	if err != nil {
		return fmt.Errorf("Probe: %w", err)
	}
	if ready := resp.GetReady(); ready != nil && !ready.GetValue() {
		return errors.New("Probe: the driver reports it is not ready")
	}
	return nil
}
