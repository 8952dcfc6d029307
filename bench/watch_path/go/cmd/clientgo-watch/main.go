// Command clientgo-watch is client-go's half of the watch path benchmark (bench/watch-path): a
// SharedIndexInformer on pods, as a controller built on client-go has (a clientset from a
// kubeconfig, JSON, a ListWatch of the pods carrying the operator's owner label, the namespace
// index and one on that label), whose event handler counts the events. It measures as the
// operator's watch_path_bench does: the process's CPU (getrusage RUSAGE_SELF, user + system,
// every thread: the garbage collector's too) and the wall time from the first event to the N-th,
// per event after the first, and the peak RSS, printed in one line:
//
//	events=20000 handler_calls=20000 cpu_us_per_event=41.2 wall_s=19.999 maxrss_kib=61440
//
//	clientgo-watch -kubeconfig DIR/kubeconfig -events 20000 [-timeout 10m] [-http1]
//
// The streaming list (the WatchListClient feature) is turned off unless KUBE_FEATURE_WatchListClient
// says otherwise: the informer lists then watches, as the operator does; the events measured all
// come after that, on the watch, either way.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// ownerLabel is api::kOwnerLabel: the operator's caches select their objects by it.
const ownerLabel = "csiop.dev/driverdeployment"

type sample struct {
	cpu       time.Duration
	wall      time.Time
	maxRSSKiB int64
}

func now() sample {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		log.Fatalf("getrusage: %v", err)
	}
	return sample{
		cpu:       time.Duration(usage.Utime.Nano() + usage.Stime.Nano()),
		wall:      time.Now(),
		maxRSSKiB: usage.Maxrss,
	}
}

// meter counts the handler's calls. The handler of one registration is called from one goroutine
// at a time; the count is atomic only for the timeout's message.
type meter struct {
	target      int64
	events      atomic.Int64
	first, last sample
	done        chan struct{}
}

func (m *meter) heard() {
	switch m.events.Add(1) {
	case 1:
		m.first = now()
	case m.target:
		m.last = now()
		close(m.done)
	}
}

func (m *meter) line() string {
	cpu := float64((m.last.cpu - m.first.cpu).Microseconds())
	return fmt.Sprintf("events=%d handler_calls=%d cpu_us_per_event=%.2f wall_s=%.3f maxrss_kib=%d",
		m.target, m.target, cpu/float64(m.target-1), m.last.wall.Sub(m.first.wall).Seconds(),
		m.last.maxRSSKiB)
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the replay server's kubeconfig")
	events := flag.Int("events", 20000, "events to hear")
	timeout := flag.Duration("timeout", 10*time.Minute, "how long to wait for them")
	http1 := flag.Bool("http1", false, "HTTP/1.1 only (client-go negotiates HTTP/2 by default)")
	flag.Parse()
	if *kubeconfig == "" || *events < 2 {
		log.Fatal("clientgo-watch: -kubeconfig and -events (2 at least) are required")
	}
	if _, set := os.LookupEnv("KUBE_FEATURE_WatchListClient"); !set {
		_ = os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("clientgo-watch: %v", err)
	}
	config.ContentType = "application/json"
	config.AcceptContentTypes = "application/json"
	if *http1 {
		config.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		log.Fatalf("clientgo-watch: %v", err)
	}
	lw := cache.NewFilteredListWatchFromClient(clientset.CoreV1().RESTClient(), "pods",
		metav1.NamespaceAll, func(options *metav1.ListOptions) { options.LabelSelector = ownerLabel })
	informer := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"owner": func(obj interface{}) ([]string, error) {
			if owner := obj.(*corev1.Pod).Labels[ownerLabel]; owner != "" {
				return []string{owner}, nil
			}
			return nil, nil
		},
	})
	m := &meter{target: int64(*events), done: make(chan struct{})}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { m.heard() },
		UpdateFunc: func(interface{}, interface{}) { m.heard() },
		DeleteFunc: func(interface{}) { m.heard() },
	}); err != nil {
		log.Fatalf("clientgo-watch: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.RunWithContext(ctx)
	select {
	case <-m.done:
		fmt.Println(m.line())
	case <-time.After(*timeout):
		fmt.Fprintf(os.Stderr, "clientgo-watch: timed out after %v: heard %d of %d events (%d pods cached)\n",
			*timeout, m.events.Load(), *events, len(informer.GetStore().ListKeys()))
		os.Exit(1)
	}
}
