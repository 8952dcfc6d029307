package sidecar

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// RunWorkers runs n workers that take keys from queue and call handle on each, until ctx ends;
// then it shuts the queue down and waits for them. A key whose handling fails is retried with the
// queue's rate limiter; one that succeeds is forgotten.
func RunWorkers[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T], n int,
	handle func(context.Context, T) error) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for processNext(ctx, queue, handle) {
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
}

func processNext[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T],
	handle func(context.Context, T) error) bool {
	key, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(key)
	if err := handle(ctx, key); err != nil {
		if apierrors.IsConflict(err) { // acted on a stale cache; the retry sees the change
			klog.V(2).InfoS("Object changed meanwhile, will retry", "key", key)
		} else {
			klog.ErrorS(err, "Sync failed, will retry", "key", key, "retries", queue.NumRequeues(key))
		}
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}
