package sidecar

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fastElection's Lease outlives a silent holder by 5 s, far longer than a hand-over after a
// release takes.
var fastElection = LeaderElection{Enabled: true, Namespace: "ns",
	LeaseDuration: 5 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond}

type candidate struct {
	cancel  context.CancelFunc
	leading chan struct{}
	result  chan error
}

// startCandidate runs electAs in the background; its controller signals leading and then
// blocks until its context ends.
func startCandidate(kube *fake.Clientset, identity string) *candidate {
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{cancel: cancel, leading: make(chan struct{}), result: make(chan error, 1)}
	go func() {
		c.result <- electAs(ctx, kube, fastElection, "lease", identity, newElectionHealth(),
			func(ctx context.Context) error {
				close(c.leading)
				<-ctx.Done()
				return nil
			})
	}()
	return c
}

func waitFor(t *testing.T, ch <-chan struct{}, timeout time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(timeout):
		t.Fatalf("timed out waiting until %s", what)
	}
}

func holder(t *testing.T, kube *fake.Clientset) string {
	t.Helper()
	lease, err := kube.CoordinationV1().Leases("ns").Get(context.Background(), "lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return *lease.Spec.HolderIdentity
}

func TestElectionRunsTheControllerOnlyWhileLeading(t *testing.T) {
	kube := fake.NewClientset()
	a := startCandidate(kube, "a")
	waitFor(t, a.leading, 10*time.Second, "a leads")
	b := startCandidate(kube, "b")
	time.Sleep(500 * time.Millisecond)
	select {
	case <-b.leading:
		t.Fatal("b runs its controller while a holds the Lease")
	default:
	}
	if got := holder(t, kube); got != "a" {
		t.Errorf("Lease holder = %q, want a", got)
	}

	a.cancel() // SIGTERM: a releases the Lease, b takes over
	if err := <-a.result; err != nil {
		t.Errorf("a after cancel: %v, want nil", err)
	}
	waitFor(t, b.leading, 2*time.Second, "b leads after a released the Lease")
	if got := holder(t, kube); got != "b" {
		t.Errorf("Lease holder = %q, want b", got)
	}
	b.cancel()
	<-b.result
}

func TestElectionFailsWhenTheLeaseIsLost(t *testing.T) {
	kube := fake.NewClientset()
	a := startCandidate(kube, "a")
	defer a.cancel()
	waitFor(t, a.leading, 10*time.Second, "a leads")
	kube.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("API server unreachable")
	})
	select {
	case err := <-a.result:
		if !errors.Is(err, errLostLease) {
			t.Errorf("err = %v, want %v", err, errLostLease)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leader kept running without renewing its Lease")
	}
}

func TestElectionReturnsTheControllerError(t *testing.T) {
	failed := errors.New("controller failed")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := electAs(ctx, fake.NewClientset(), fastElection, "lease", "a", newElectionHealth(),
		func(context.Context) error { return failed })
	if !errors.Is(err, failed) {
		t.Errorf("err = %v, want %v", err, failed)
	}
}
