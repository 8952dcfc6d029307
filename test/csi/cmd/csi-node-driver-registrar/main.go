// Command csi-node-driver-registrar is csi-operator's TEST FIXTURE stand-in for the
// kubernetes-csi node-driver-registrar, which cannot be built here. Written from the kubelet
// plugin-registration API (not copied from upstream), it asks the CSI driver for its name,
// then serves the kubelet's Registration service on <plugin-registration-path>/<driver>-reg.sock.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"csi-operator/test/csi/internal/fixturecli"
	"csi-operator/test/csi/internal/httpserve"
)

func main() {
	fixturecli.Setup("csi-node-driver-registrar", "Registers a CSI driver with the kubelet's plugin watcher (plugin-registration API v1).")
	var cfg config
	flag.StringVar(&cfg.csiAddress, "csi-address", "/run/csi/socket", "the CSI driver's unix socket, as this container sees it")
	flag.StringVar(&cfg.kubeletRegistrationPath, "kubelet-registration-path", "", "the CSI driver's socket as the kubelet sees it, on the host (required)")
	flag.StringVar(&cfg.registrationDir, "plugin-registration-path", "/registration", "the kubelet's plugin registration directory, as this container sees it")
	httpEndpoint := flag.String("http-endpoint", "", "address (\":PORT\" or \"HOST:PORT\") serving /healthz; empty: no HTTP server")
	healthPort := flag.Int("health-port", 0, "deprecated alternative to --http-endpoint: serve /healthz on this port (0: off)")
	flag.DurationVar(&cfg.timeout, "timeout", time.Second, "timeout of each call to the CSI driver")
	fixturecli.Parse()
	if cfg.kubeletRegistrationPath == "" {
		fixturecli.UsageError("--kubelet-registration-path is required")
	}
	if *httpEndpoint != "" && *healthPort > 0 {
		fixturecli.UsageError("only one of --http-endpoint and --health-port may be set")
	}
	if addr := httpserve.Addr(*httpEndpoint, *healthPort); addr != "" {
		l, err := httpserve.Listen(addr)
		if err != nil {
			log.Fatal(err)
		}
		cfg.health = l
	}
	cfg.onFailure = func(err error) {
		log.Printf("the kubelet failed to register the driver: %v; exiting so that the kubelet restarts this container", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		log.Fatal(err)
	}
}

// config is the registrar's command line, resolved.
type config struct {
	csiAddress              string
	kubeletRegistrationPath string
	registrationDir         string
	timeout                 time.Duration
	health                  net.Listener // nil: no /healthz server
	onFailure               func(error)  // the kubelet reported a failed registration
}
