// Command csi-resizer is csi-operator's TEST FIXTURE stand-in for the kubernetes-csi
// external-resizer (which cannot be built here); it is not the upstream program.
//
// It watches PersistentVolumeClaims bound to CSI volumes of its driver. When a claim asks
// for more storage than it has, it records the resize in the claim's status
// (allocatedResources, allocatedResourceStatuses, the Resizing condition), calls
// ControllerExpandVolume, sets the PersistentVolume's capacity to the result and then either
// finishes the claim's status (new capacity) or, when the driver says the node must expand
// the file system, marks it NodeResizePending / FileSystemResizePending for the kubelet.
// A driver without the EXPAND_VOLUME controller capability gets node-only expansion, as
// upstream does. Not implemented: secrets, VolumeAttributesClass modification, in-use checks.
package main

import (
	"context"
	"flag"
	"os"

	"csi-operator/test/csi/internal/sidecar"
)

func main() {
	os.Exit(sidecar.Main(newSpec(), os.Args[1:]))
}

func newSpec() sidecar.Spec {
	workers := 10
	var handleInUseError bool
	return sidecar.Spec{
		Name:     "csi-resizer",
		Upstream: "external-resizer",
		Summary: "Expands the volumes of its driver's PersistentVolumeClaims through ControllerExpandVolume\n" +
			"and records the result in the PersistentVolume and the claim's status.",
		LeasePrefix: "external-resizer-",
		AddFlags: func(fs *flag.FlagSet) {
			fs.IntVar(&workers, "workers", workers, "number of claims processed at once")
			fs.BoolVar(&handleInUseError, "handle-volume-inuse-error", true, "accepted; this stand-in simply retries a failed expansion")
		},
		Run: func(ctx context.Context, env *sidecar.Env) error {
			return newController(env, workers).run(ctx)
		},
	}
}
