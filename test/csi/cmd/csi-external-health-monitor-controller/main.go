// Command csi-external-health-monitor-controller is csi-operator's TEST FIXTURE stand-in for
// the kubernetes-csi external-health-monitor-controller (which cannot be built here); it is
// not the upstream program.
//
// It monitors NOTHING: it accepts the sidecar's flags, connects to the driver, takes part in
// leader election when asked and serves the HTTP endpoint, so that the operator's rendering
// of the container (arguments, RBAC, probes) is exercised, then waits for SIGTERM.
package main

import (
	"context"
	"flag"
	"os"
	"time"

	"k8s.io/klog/v2"

	"csi-operator/test/csi/internal/sidecar"
)

func main() {
	os.Exit(sidecar.Main(newSpec(), os.Args[1:]))
}

func newSpec() sidecar.Spec {
	return sidecar.Spec{
		Name:        "csi-external-health-monitor-controller",
		Upstream:    "external-health-monitor-controller",
		Summary:     "Monitors NO volume health: only the flags, the driver connection, leader election and the HTTP endpoint.",
		LeasePrefix: "external-health-monitor-leader-",
		AddFlags: func(fs *flag.FlagSet) {
			fs.Int("worker-threads", 10, "accepted; unused (no health monitoring)")
			fs.Duration("monitor-interval", time.Minute, "accepted; unused (no health monitoring)")
			fs.Bool("enable-node-watcher", false, "accepted; unused (no health monitoring)")
		},
		Run: func(ctx context.Context, env *sidecar.Env) error {
			klog.InfoS("This csi-operator test-fixture health monitor monitors no volume health: it only waits for SIGTERM", "driver", env.Driver)
			<-ctx.Done()
			return nil
		},
	}
}
