package sidecar

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"csi-operator/test/csi/internal/csiconn"
	"csi-operator/test/csi/internal/httpserve"
)

// Env is what a sidecar's controller works with.
type Env struct {
	// Driver is the CSI driver's name, from GetPluginInfo.
	Driver string
	// Kube is the Kubernetes client.
	Kube kubernetes.Interface
	// CSI is the driver connection; each call is bounded by --timeout and counted in /metrics.
	CSI grpc.ClientConnInterface
}

// Main runs the sidecar described by spec with the command-line arguments args (without the
// program name) and returns the process exit status: 0 after -h or SIGTERM, 2 for a bad
// command line, 1 for any other failure (including lost leadership).
func Main(spec Spec, args []string) int {
	opts, err := Parse(spec, args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	defer klog.Flush()
	klog.Info(banner(spec, args))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, spec, opts); err != nil {
		klog.ErrorS(err, "Exiting", "sidecar", spec.Name)
		return 1
	}
	klog.InfoS("Stopped on signal", "sidecar", spec.Name)
	return 0
}

// run serves the HTTP endpoint from the start (so probes answer while the driver is still
// coming up), connects to the driver, then runs the controller, elected or not.
func run(ctx context.Context, spec Spec, opts *Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kube, err := newClient(opts.Kubeconfig, spec.Name)
	if err != nil {
		return err
	}
	metrics := &Metrics{}
	health := newElectionHealth()
	httpDone := make(chan error, 1)
	if opts.HTTPEndpoint != "" {
		l, err := httpserve.Listen(opts.HTTPEndpoint)
		if err != nil {
			return err
		}
		go func() { httpDone <- httpserve.Serve(ctx, l, handler(health, metrics)) }()
		klog.InfoS("Serving /healthz/leader-election and /metrics", "address", l.Addr().String())
	}

	conn, err := csiconn.Dial(ctx, opts.CSIAddress, opts.Timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	callCtx, callCancel := context.WithTimeout(ctx, opts.Timeout)
	driver, err := csiconn.DriverName(callCtx, conn)
	callCancel()
	if err != nil {
		return err
	}
	klog.InfoS("Connected to the CSI driver", "driver", driver, "address", opts.CSIAddress)
	env := &Env{Driver: driver, Kube: kube, CSI: &meteredConn{conn: conn, timeout: opts.Timeout, metrics: metrics}}

	runDone := make(chan error, 1)
	go func() {
		if !opts.LeaderElection.Enabled {
			runDone <- spec.Run(ctx, env)
			return
		}
		le := opts.LeaderElection
		if le.Namespace == "" {
			le.Namespace = podNamespace()
		}
		runDone <- elect(ctx, kube, le, LeaseName(spec.LeasePrefix, driver), health,
			func(ctx context.Context) error { return spec.Run(ctx, env) })
	}()
	for {
		select {
		case err := <-runDone:
			if ctx.Err() != nil { // stopping on a signal
				if err != nil {
					klog.InfoS("The controller stopped with an error after the signal", "err", err)
				}
				return nil
			}
			if err == nil {
				err = fmt.Errorf("the %s controller stopped unexpectedly", spec.Name)
			}
			return err
		case err := <-httpDone:
			if err != nil {
				return fmt.Errorf("HTTP endpoint: %w", err)
			}
			httpDone = nil // shut down with ctx: wait for the controller to stop
		}
	}
}
