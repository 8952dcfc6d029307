// Command livenessprobe is csi-operator's TEST FIXTURE stand-in for the kubernetes-csi
// livenessprobe, which cannot be built here. Written from the CSI specification (not copied
// from upstream), it serves GET /healthz by calling the driver's Identity.Probe.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"csi-operator/test/csi/internal/fixturecli"
	"csi-operator/test/csi/internal/httpserve"
)

func main() {
	fixturecli.Setup("livenessprobe", "Serves /healthz for a CSI driver: 200 when the driver's Probe call succeeds, else 500.")
	address := flag.String("csi-address", "/run/csi/socket", "the CSI driver's unix socket")
	healthPort := flag.Int("health-port", 9808, "TCP port serving /healthz")
	httpEndpoint := flag.String("http-endpoint", "", "address (\":PORT\" or \"HOST:PORT\") serving /healthz; overrides --health-port")
	timeout := flag.Duration("probe-timeout", time.Second, "timeout of each Probe call, including connecting to the driver")
	fixturecli.Parse()
	addr := httpserve.Addr(*httpEndpoint, *healthPort)
	if addr == "" {
		fixturecli.UsageError("--health-port must be positive, or --http-endpoint set")
	}

	l, err := httpserve.Listen(addr)
	if err != nil {
		log.Fatal(err)
	}
	p := &prober{address: *address, timeout: *timeout}
	defer p.close()
	mux := http.NewServeMux()
	mux.Handle("/healthz", p)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log.Printf("serving /healthz on %s for the CSI driver at %s", l.Addr(), *address)
	if err := httpserve.Serve(ctx, l, mux); err != nil {
		log.Fatal(err)
	}
}
