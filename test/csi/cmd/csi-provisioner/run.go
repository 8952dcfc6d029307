package main

import (
	"context"
	"fmt"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v11/controller"

	"csi-operator/test/csi/internal/sidecar"
)

// Retries of failed claims and volumes back off from retryStart to retryMax (the upstream
// provisioner's defaults; the library's own start at 15 s).
const (
	retryStart = time.Second
	retryMax   = 5 * time.Minute
	resync     = 15 * time.Minute
)

func run(ctx context.Context, env *sidecar.Env, o *options) error {
	if o.enableCapacity {
		klog.InfoS("--enable-capacity: storage capacity tracking is NOT implemented by this csi-operator test-fixture stand-in; no CSIStorageCapacity objects will be published",
			"capacityOwnerrefLevel", o.capacityOwnerLevel)
	}
	factory := informers.NewSharedInformerFactory(env.Kube, resync)
	p := &provisioner{
		driver:      env.Driver,
		csi:         csi.NewControllerClient(env.CSI),
		opts:        o,
		csiNodes:    factory.Storage().V1().CSINodes().Lister(),
		attachments: factory.Storage().V1().VolumeAttachments().Lister(),
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for informer, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("the %v cache did not sync", informer)
		}
	}
	pc := controller.NewProvisionController(ctx, env.Kube, env.Driver, p,
		controller.LeaderElection(false), // the sidecar's own election runs us only while leading
		controller.Threadiness(o.workers),
		controller.AddFinalizer(true),
		controller.VolumeName(func(claim *v1.PersistentVolumeClaim) string {
			return o.volumeNamePrefix + "-" + string(claim.UID)
		}),
		controller.RateLimiter(workqueue.NewItemExponentialFailureRateLimiter(retryStart, retryMax)),
	)
	klog.InfoS("Provisioner running", "driver", env.Driver, "workers", o.workers)
	pc.Run(ctx)
	return nil
}
