package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"csi-operator/test/csi/internal/csiconn"
	"csi-operator/test/csi/internal/httpserve"
)

// run registers the driver with the kubelet and serves until ctx is done; then it removes
// the registration socket, which tells the kubelet's plugin watcher the plugin is gone.
func run(ctx context.Context, cfg config) error {
	name, err := driverName(ctx, cfg.csiAddress, cfg.timeout)
	if err != nil {
		return err
	}
	socket := filepath.Join(cfg.registrationDir, name+"-reg.sock")
	l, err := csiconn.ListenUnix(socket)
	if err != nil {
		return err
	}
	defer os.Remove(socket)

	reg := &registrar{driverName: name, endpoint: cfg.kubeletRegistrationPath, socket: socket, onFailure: cfg.onFailure}
	srv := grpc.NewServer()
	registration.RegisterRegistrationServer(srv, reg)
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(l) }()
	defer srv.Stop()
	if cfg.health != nil {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", reg.healthz)
		go func() { errs <- httpserve.Serve(ctx, cfg.health, mux) }()
		log.Printf("serving /healthz on %s", cfg.health.Addr())
	}
	log.Printf("registration socket %s ready: driver %q, kubelet endpoint %s", socket, name, cfg.kubeletRegistrationPath)

	select {
	case <-ctx.Done():
		log.Printf("stopping: %v; removing %s", context.Cause(ctx), socket)
		return nil
	case err := <-errs:
		return err
	}
}

// driverName connects to the CSI driver, waiting until it is up, and asks for its name.
func driverName(ctx context.Context, address string, timeout time.Duration) (string, error) {
	log.Printf("connecting to the CSI driver at %s", address)
	conn, err := csiconn.Dial(ctx, address, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	for {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		name, err := csiconn.DriverName(callCtx, conn)
		cancel()
		if err == nil {
			log.Printf("CSI driver name: %q", name)
			return name, nil
		}
		log.Printf("asking the CSI driver for its name: %v; retrying", err)
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no driver name from %s: %w", address, errors.Join(ctx.Err(), err))
		case <-time.After(time.Second):
		}
	}
}
