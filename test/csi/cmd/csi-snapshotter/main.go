// Command csi-snapshotter is csi-operator's TEST FIXTURE stand-in for the kubernetes-csi
// external-snapshotter sidecar (which cannot be built here); it is not the upstream program.
//
// It serves NO snapshots: it accepts the sidecar's flags, connects to the driver, takes part
// in leader election when asked and serves the HTTP endpoint, so that the operator's
// rendering of the container (arguments, RBAC, probes) is exercised, then waits for SIGTERM.
package main

import (
	"context"
	"flag"
	"os"

	"k8s.io/klog/v2"

	"csi-operator/test/csi/internal/sidecar"
)

func main() {
	os.Exit(sidecar.Main(newSpec(), os.Args[1:]))
}

func newSpec() sidecar.Spec {
	return sidecar.Spec{
		Name:        "csi-snapshotter",
		Upstream:    "external-snapshotter (csi-snapshotter sidecar)",
		Summary:     "Serves NO snapshots: only the flags, the driver connection, leader election and the HTTP endpoint.",
		LeasePrefix: "external-snapshotter-leader-",
		AddFlags: func(fs *flag.FlagSet) {
			fs.Int("worker-threads", 10, "accepted; unused (no snapshots)")
			fs.Bool("extra-create-metadata", false, "accepted; unused (no snapshots)")
		},
		Run: func(ctx context.Context, env *sidecar.Env) error {
			klog.InfoS("This csi-operator test-fixture snapshotter serves no snapshots: it only waits for SIGTERM", "driver", env.Driver)
			<-ctx.Done()
			return nil
		},
	}
}
