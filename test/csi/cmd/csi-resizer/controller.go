package main

import (
	"context"
	"fmt"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"csi-operator/test/csi/internal/sidecar"
)

// resync replays every cached claim this often, so that anything missed is retried.
const resync = time.Minute

// controller expands the volumes of one driver's claims.
type controller struct {
	driver string
	kube   kubernetes.Interface
	csi    csi.ControllerClient
	// expand is false when the driver lacks EXPAND_VOLUME: only the node expands.
	expand  bool
	workers int

	factory  informers.SharedInformerFactory
	claims   corelisters.PersistentVolumeClaimLister
	volumes  corelisters.PersistentVolumeLister
	queue    workqueue.TypedRateLimitingInterface[string]
	events   record.EventBroadcaster
	recorder record.EventRecorder
}

func newController(env *sidecar.Env, workers int) *controller {
	factory := informers.NewSharedInformerFactory(env.Kube, resync)
	events := record.NewBroadcaster()
	c := &controller{
		driver:   env.Driver,
		kube:     env.Kube,
		csi:      csi.NewControllerClient(env.CSI),
		expand:   true,
		workers:  workers,
		factory:  factory,
		claims:   factory.Core().V1().PersistentVolumeClaims().Lister(),
		volumes:  factory.Core().V1().PersistentVolumes().Lister(),
		events:   events,
		recorder: events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "external-resizer " + env.Driver}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "persistentvolumeclaims"}),
	}
	factory.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.claimChanged,
		UpdateFunc: func(_, obj any) { c.claimChanged(obj) },
	})
	return c
}

func (c *controller) claimChanged(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *controller) run(ctx context.Context) error {
	expand, err := sidecar.HasControllerCapability(ctx, c.csi, csi.ControllerServiceCapability_RPC_EXPAND_VOLUME)
	if err != nil {
		return err
	}
	c.expand = expand
	if !expand {
		klog.InfoS("The driver has no EXPAND_VOLUME controller capability: expansions are left to the node", "driver", c.driver)
	}
	c.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.kube.CoreV1().Events("")})
	defer c.events.Shutdown()
	c.factory.Start(ctx.Done())
	defer c.factory.Shutdown()
	for informer, synced := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("the %v cache did not sync", informer)
		}
	}
	klog.InfoS("Resizer running", "driver", c.driver, "workers", c.workers)
	sidecar.RunWorkers(ctx, c.queue, c.workers, c.syncClaim)
	return nil
}
