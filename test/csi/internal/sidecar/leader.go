package sidecar

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// healthTolerance is how long past the Lease's renew deadline /healthz/leader-election still
// answers 200 while this process believes it leads.
const healthTolerance = 20 * time.Second

// errLostLease is returned when the leader could not renew its Lease.
var errLostLease = errors.New("lost the leader-election Lease")

// LeaseName is prefix+driver with every character other than an ASCII letter, a digit or '-'
// replaced by '-' (and an 'X' appended after a trailing '-'), so that it is a valid object
// name: "hostpath.csi.k8s.io" gives "hostpath-csi-k8s-io".
func LeaseName(prefix, driver string) string {
	name := []byte(prefix + driver)
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			name[i] = '-'
		}
	}
	if strings.HasSuffix(string(name), "-") {
		name = append(name, 'X')
	}
	return string(name)
}

func newElectionHealth() *leaderelection.HealthzAdaptor {
	return leaderelection.NewLeaderHealthzAdaptor(healthTolerance)
}

// elect runs the controller run only while this process holds the Lease le.Namespace/lease.
// It returns nil when ctx ends, run's error if run stops by itself, and errLostLease when
// the Lease could not be renewed. On ctx's end the Lease is released for a fast hand-over.
func elect(ctx context.Context, kube kubernetes.Interface, le LeaderElection, lease string,
	health *leaderelection.HealthzAdaptor, run func(context.Context) error) error {
	identity, err := newIdentity()
	if err != nil {
		return fmt.Errorf("leader-election identity: %w", err)
	}
	return electAs(ctx, kube, le, lease, identity, health, run)
}

// newIdentity is the host name (the pod name in a pod) and a random suffix, so that two
// processes on one host never share an identity.
func newIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	return host + "_" + hex.EncodeToString(suffix), nil
}

func electAs(ctx context.Context, kube kubernetes.Interface, le LeaderElection, lease, identity string,
	health *leaderelection.HealthzAdaptor, run func(context.Context) error) error {
	electCtx, stopElecting := context.WithCancel(ctx)
	defer stopElecting()
	runErr := make(chan error, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: le.Namespace, Name: lease},
			Client:     kube.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		},
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        health,
		Name:            lease,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				klog.InfoS("Became the leader, starting the controller", "lease", klog.KRef(le.Namespace, lease), "identity", identity)
				runErr <- run(ctx)
				stopElecting() // the controller stopped by itself: give up the Lease
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(leader string) {
				klog.InfoS("Leader elected", "lease", klog.KRef(le.Namespace, lease), "leader", leader)
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	health.SetLeaderElection(elector)
	klog.InfoS("Waiting to acquire the leader-election Lease", "lease", klog.KRef(le.Namespace, lease), "identity", identity)
	elector.Run(electCtx)
	if ctx.Err() != nil {
		return nil
	}
	select {
	case err := <-runErr:
		return err
	default:
		return errLostLease
	}
}
