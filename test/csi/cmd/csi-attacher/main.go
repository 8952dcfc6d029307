// Command csi-attacher is csi-operator's TEST FIXTURE stand-in for the kubernetes-csi
// external-attacher (which cannot be built here); it is not the upstream program.
//
// It watches the storage.k8s.io/v1 VolumeAttachments of its driver. For one to attach it adds
// the finalizer external-attacher/<driver>, puts the same finalizer on the PersistentVolume
// (so the volume handle stays readable until detach), calls ControllerPublishVolume with the
// node ID from the node's CSINode and records attached=true and the publish context in the
// status; for one being deleted it calls ControllerUnpublishVolume, records attached=false and
// removes its finalizers. Failures land in status.attachError/detachError and are retried with
// backoff. A driver without the PUBLISH_UNPUBLISH_VOLUME capability gets its attachments
// marked attached without any CSI call, as upstream does.
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
	return sidecar.Spec{
		Name:     "csi-attacher",
		Upstream: "external-attacher",
		Summary: "Attaches and detaches the volumes of its driver's VolumeAttachments through\n" +
			"ControllerPublishVolume / ControllerUnpublishVolume. No secrets, no CSI migration.",
		LeasePrefix: "external-attacher-leader-",
		AddFlags: func(fs *flag.FlagSet) {
			fs.IntVar(&workers, "worker-threads", workers, "number of VolumeAttachments processed at once")
		},
		Run: func(ctx context.Context, env *sidecar.Env) error {
			return newController(env, workers).run(ctx)
		},
	}
}
