package csiconn

import (
	"context"
	"fmt"
	"log"
	"net"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// The pause between two attempts to reach a driver that is not up yet grows from
// firstRetry to maxRetry.
const (
	firstRetry = 50 * time.Millisecond
	maxRetry   = time.Second
)

// waitLogInterval is how often Dial reports that it is still waiting.
const waitLogInterval = 10 * time.Second

// Dial connects to the CSI driver listening on the unix socket address ("/csi/csi.sock" or
// "unix:///csi/csi.sock"). Like the upstream sidecars it waits for the driver: it retries
// until the socket accepts a connection and the gRPC channel is ready, or until ctx is done.
// timeout bounds each single attempt (a value <= 0 means one second).
// The returned connection reconnects by itself if the driver restarts later.
func Dial(ctx context.Context, address string, timeout time.Duration) (*grpc.ClientConn, error) {
	path, err := SocketPath(address)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = time.Second
	}
	if err := waitForSocket(ctx, path, timeout); err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(grpcTarget(path),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// Reconnect quickly after a driver restart: gRPC's default backoff grows to 2 minutes.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: firstRetry, Multiplier: 1.6, Jitter: 0.2, MaxDelay: maxRetry},
			MinConnectTimeout: timeout,
		}))
	if err != nil {
		return nil, fmt.Errorf("CSI address %q: %w", address, err)
	}
	if err := waitReady(ctx, conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to CSI driver at %q: %w", address, err)
	}
	return conn, nil
}

// waitForSocket retries a plain unix connection until the driver accepts one.
func waitForSocket(ctx context.Context, path string, timeout time.Duration) error {
	lastLog, pause := time.Now(), firstRetry
	for {
		dialer := net.Dialer{Timeout: timeout}
		c, err := dialer.DialContext(ctx, "unix", path)
		if err == nil {
			return c.Close()
		}
		if time.Since(lastLog) >= waitLogInterval {
			log.Printf("still waiting for the CSI driver at %s: %v", path, err)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CSI driver at %s not reachable: %w (last error: %v)", path, ctx.Err(), err)
		case <-time.After(pause):
		}
		pause = min(2*pause, maxRetry)
	}
}

// waitReady drives the gRPC channel to READY.
func waitReady(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		state := conn.GetState()
		if state == connectivity.Ready {
			return nil
		}
		if state == connectivity.Idle {
			conn.Connect()
		}
		if !conn.WaitForStateChange(ctx, state) {
			return ctx.Err()
		}
	}
}

// grpcTarget spells a socket path the way gRPC's unix resolver expects it.
func grpcTarget(path string) string {
	if filepath.IsAbs(path) {
		return "unix://" + path
	}
	return "unix:" + path
}
