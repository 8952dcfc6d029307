package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"csi-operator/test/csi/internal/sidecar"
)

// resync replays every cached object this often, so that anything missed is retried.
const resync = time.Minute

// controller attaches and detaches the volumes of one driver's VolumeAttachments.
type controller struct {
	driver    string
	finalizer string
	kube      kubernetes.Interface
	csi       csi.ControllerClient
	// publish is false when the driver lacks PUBLISH_UNPUBLISH_VOLUME: attach without CSI calls.
	publish bool
	workers int

	factory     informers.SharedInformerFactory
	attachments storagelisters.VolumeAttachmentLister
	volumes     corelisters.PersistentVolumeLister
	csiNodes    storagelisters.CSINodeLister
	// attachQueue holds VolumeAttachment names, volumeQueue PersistentVolume names whose
	// finalizer may be removable.
	attachQueue workqueue.TypedRateLimitingInterface[string]
	volumeQueue workqueue.TypedRateLimitingInterface[string]
}

func newController(env *sidecar.Env, workers int) *controller {
	factory := informers.NewSharedInformerFactory(env.Kube, resync)
	c := &controller{
		driver:      env.Driver,
		finalizer:   "external-attacher/" + strings.ReplaceAll(env.Driver, "/", "-"),
		kube:        env.Kube,
		csi:         csi.NewControllerClient(env.CSI),
		publish:     true,
		workers:     workers,
		factory:     factory,
		attachments: factory.Storage().V1().VolumeAttachments().Lister(),
		volumes:     factory.Core().V1().PersistentVolumes().Lister(),
		csiNodes:    factory.Storage().V1().CSINodes().Lister(),
		attachQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "volumeattachments"}),
		volumeQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "persistentvolumes"}),
	}
	factory.Storage().V1().VolumeAttachments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.attachmentChanged,
		UpdateFunc: func(_, obj any) { c.attachmentChanged(obj) },
		DeleteFunc: c.attachmentDeleted,
	})
	factory.Core().V1().PersistentVolumes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.volumeChanged,
		UpdateFunc: func(_, obj any) { c.volumeChanged(obj) },
	})
	return c
}

func (c *controller) attachmentChanged(obj any) {
	if va, ok := obj.(*storagev1.VolumeAttachment); ok && va.Spec.Attacher == c.driver {
		c.attachQueue.Add(va.Name)
	}
}

// attachmentDeleted checks whether the volume of a vanished attachment can lose our finalizer.
func (c *controller) attachmentDeleted(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if va, ok := obj.(*storagev1.VolumeAttachment); ok && va.Spec.Attacher == c.driver && va.Spec.Source.PersistentVolumeName != nil {
		c.volumeQueue.Add(*va.Spec.Source.PersistentVolumeName)
	}
}

func (c *controller) volumeChanged(obj any) {
	if pv, ok := obj.(*v1.PersistentVolume); ok && hasFinalizer(pv.Finalizers, c.finalizer) {
		c.volumeQueue.Add(pv.Name)
	}
}

func (c *controller) run(ctx context.Context) error {
	publish, err := sidecar.HasControllerCapability(ctx, c.csi, csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME)
	if err != nil {
		return err
	}
	c.publish = publish
	if !publish {
		klog.InfoS("The driver has no PUBLISH_UNPUBLISH_VOLUME capability: attachments are marked attached without CSI calls", "driver", c.driver)
	}
	c.factory.Start(ctx.Done())
	defer c.factory.Shutdown()
	for informer, synced := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("the %v cache did not sync", informer)
		}
	}
	klog.InfoS("Attacher running", "driver", c.driver, "workers", c.workers)
	go sidecar.RunWorkers(ctx, c.volumeQueue, 1, c.syncVolume)
	sidecar.RunWorkers(ctx, c.attachQueue, c.workers, c.syncAttachment)
	return nil
}
