package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"csi-operator/test/csi/internal/sidecar"
	"csi-operator/test/csi/internal/sidecar/fakedriver"
)

const (
	driverName = "test.csi.k8s.io"
	gi         = int64(1) << 30
)

func testClaim(request string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", UID: "uid-1", ResourceVersion: "1"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			VolumeName:  "pv-1",
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(request)}},
		},
		Status: v1.PersistentVolumeClaimStatus{
			Phase:      v1.ClaimBound,
			Capacity:   v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			Conditions: []v1.PersistentVolumeClaimCondition{{Type: "ModifyingVolume", Status: v1.ConditionTrue}},
		},
	}
}

func testPV(driver, size string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: v1.PersistentVolumeSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			ClaimRef:    &v1.ObjectReference{Namespace: "ns", Name: "data", UID: "uid-1"},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
				Driver: driver, VolumeHandle: "vol-1", FSType: "ext4"}},
		},
	}
}

func expandingDriver(size int64, nodeExpansion bool) *fakedriver.Controller {
	return &fakedriver.Controller{Expanded: &csi.ControllerExpandVolumeResponse{CapacityBytes: size, NodeExpansionRequired: nodeExpansion}}
}

// newTestController returns a controller on a fake clientset holding objs, with its caches
// holding them too and a fake event recorder (nothing runs: tests call syncClaim).
func newTestController(t *testing.T, driver *fakedriver.Controller, objs ...runtime.Object) (*controller, *fake.Clientset, *record.FakeRecorder) {
	kube := fake.NewClientset(objs...)
	c := newController(&sidecar.Env{Driver: driverName, Kube: kube, CSI: fakedriver.Serve(t, driverName, driver)}, 1)
	recorder := record.NewFakeRecorder(10)
	c.recorder = recorder
	for _, obj := range objs {
		var err error
		switch obj.(type) {
		case *v1.PersistentVolumeClaim:
			err = c.factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(obj)
		case *v1.PersistentVolume:
			err = c.factory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, kube, recorder
}

func getClaim(t *testing.T, kube *fake.Clientset) *v1.PersistentVolumeClaim {
	t.Helper()
	claim, err := kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return claim
}

func volumeSize(t *testing.T, kube *fake.Clientset) int64 {
	t.Helper()
	pv, err := kube.CoreV1().PersistentVolumes().Get(context.Background(), "pv-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	size := pv.Spec.Capacity[v1.ResourceStorage]
	return size.Value()
}

func conditionTypes(claim *v1.PersistentVolumeClaim) []string {
	var types []string
	for _, c := range claim.Status.Conditions {
		types = append(types, string(c.Type))
	}
	return types
}

func events(recorder *record.FakeRecorder) []string {
	var reasons []string
	for {
		select {
		case e := <-recorder.Events:
			reasons = append(reasons, strings.Fields(e)[1])
		default:
			return reasons
		}
	}
}

func TestResizeWithoutNodeExpansion(t *testing.T) {
	driver := expandingDriver(2*gi, false)
	c, kube, recorder := newTestController(t, driver, testClaim("2Gi"), testPV(driverName, "1Gi"))
	if err := c.syncClaim(context.Background(), "ns/data"); err != nil {
		t.Fatal(err)
	}

	reqs := driver.Requests()
	if len(reqs) != 1 {
		t.Fatalf("CSI requests = %v, want one ControllerExpandVolume", reqs)
	}
	if req := reqs[0].(*csi.ControllerExpandVolumeRequest); req.VolumeId != "vol-1" || req.CapacityRange.RequiredBytes != 2*gi ||
		req.VolumeCapability.GetMount().GetFsType() != "ext4" {
		t.Errorf("ControllerExpandVolume request = %v", req)
	}
	if got := volumeSize(t, kube); got != 2*gi {
		t.Errorf("PersistentVolume capacity = %d, want 2Gi", got)
	}
	claim := getClaim(t, kube)
	capacity, allocated := claim.Status.Capacity[v1.ResourceStorage], claim.Status.AllocatedResources[v1.ResourceStorage]
	if capacity.Value() != 2*gi || allocated.Value() != 2*gi {
		t.Errorf("claim capacity %s, allocated %s; want 2Gi and 2Gi", capacity.String(), allocated.String())
	}
	if _, ok := claim.Status.AllocatedResourceStatuses[v1.ResourceStorage]; ok {
		t.Errorf("allocatedResourceStatuses = %v, want no storage entry once done", claim.Status.AllocatedResourceStatuses)
	}
	if got := conditionTypes(claim); !slices.Equal(got, []string{"ModifyingVolume"}) {
		t.Errorf("conditions = %q, want only the unrelated ModifyingVolume", got)
	}
	if got := events(recorder); !slices.Equal(got, []string{"Resizing", "VolumeResizeSuccessful"}) {
		t.Errorf("events = %q", got)
	}
}

func TestResizeWithNodeExpansion(t *testing.T) {
	c, kube, recorder := newTestController(t, expandingDriver(2*gi, true), testClaim("2Gi"), testPV(driverName, "1Gi"))
	if err := c.syncClaim(context.Background(), "ns/data"); err != nil {
		t.Fatal(err)
	}
	if got := volumeSize(t, kube); got != 2*gi {
		t.Errorf("PersistentVolume capacity = %d, want 2Gi", got)
	}
	claim := getClaim(t, kube)
	capacity := claim.Status.Capacity[v1.ResourceStorage]
	if capacity.Value() != gi || claim.Status.AllocatedResourceStatuses[v1.ResourceStorage] != v1.PersistentVolumeClaimNodeResizePending {
		t.Errorf("claim status = %+v, want capacity still 1Gi (the kubelet's to update) and NodeResizePending", claim.Status)
	}
	if got := conditionTypes(claim); !slices.Equal(got, []string{"ModifyingVolume", "FileSystemResizePending"}) {
		t.Errorf("conditions = %q", got)
	}
	if got := events(recorder); !slices.Equal(got, []string{"Resizing", "FileSystemResizeRequired"}) {
		t.Errorf("events = %q", got)
	}
}

func TestResizeFailureIsRecordedAndReturned(t *testing.T) {
	driver := expandingDriver(0, false)
	driver.FailWith(status.Error(codes.OutOfRange, "too big"))
	c, kube, recorder := newTestController(t, driver, testClaim("2Gi"), testPV(driverName, "1Gi"))
	if err := c.syncClaim(context.Background(), "ns/data"); err == nil {
		t.Fatal("sync succeeded, want the expansion error (to retry with backoff)")
	}
	if got := volumeSize(t, kube); got != gi {
		t.Errorf("PersistentVolume capacity = %d after a failure, want 1Gi", got)
	}
	claim := getClaim(t, kube)
	if claim.Status.AllocatedResourceStatuses[v1.ResourceStorage] != v1.PersistentVolumeClaimControllerResizeInProgress ||
		!slices.Contains(conditionTypes(claim), "ControllerResizeError") {
		t.Errorf("claim status = %+v, want ControllerResizeInProgress and a ControllerResizeError condition", claim.Status)
	}
	if got := events(recorder); !slices.Equal(got, []string{"Resizing", "VolumeResizeFailed"}) {
		t.Errorf("events = %q", got)
	}
}

func TestResizeResumesAnInterruptedExpansion(t *testing.T) {
	claim := testClaim("2Gi")
	claim.Status.AllocatedResourceStatuses = map[v1.ResourceName]v1.ClaimResourceStatus{
		v1.ResourceStorage: v1.PersistentVolumeClaimControllerResizeInProgress}
	driver := expandingDriver(2*gi, false)
	c, kube, _ := newTestController(t, driver, claim, testPV(driverName, "2Gi"))
	if err := c.syncClaim(context.Background(), "ns/data"); err != nil {
		t.Fatal(err)
	}
	if capacity := getClaim(t, kube).Status.Capacity[v1.ResourceStorage]; len(driver.Requests()) != 1 || capacity.Value() != 2*gi {
		t.Errorf("CSI requests %v, claim capacity %s; want the expansion redone and the claim finished", driver.Requests(), capacity.String())
	}
}

func TestNodeOnlyExpansionWithoutTheControllerCapability(t *testing.T) {
	driver := &fakedriver.Controller{}
	c, kube, _ := newTestController(t, driver, testClaim("2Gi"), testPV(driverName, "1Gi"))
	c.expand = false
	if err := c.syncClaim(context.Background(), "ns/data"); err != nil {
		t.Fatal(err)
	}
	if got := volumeSize(t, kube); got != 2*gi || len(driver.Requests()) != 0 ||
		getClaim(t, kube).Status.AllocatedResourceStatuses[v1.ResourceStorage] != v1.PersistentVolumeClaimNodeResizePending {
		t.Errorf("PV size %d, CSI requests %v: want 2Gi, no call and NodeResizePending", got, driver.Requests())
	}
}

func TestClaimsThatAreNotOursOrNeedNothingAreLeftAlone(t *testing.T) {
	annotated := testClaim("2Gi")
	annotated.Annotations = map[string]string{resizerAnnotation: "other.csi.k8s.io"}
	unbound := testClaim("2Gi")
	unbound.Status.Phase = v1.ClaimPending
	nodePending := testClaim("2Gi")
	nodePending.Status.AllocatedResourceStatuses = map[v1.ResourceName]v1.ClaimResourceStatus{
		v1.ResourceStorage: v1.PersistentVolumeClaimNodeResizePending}
	cases := []struct {
		name  string
		claim *v1.PersistentVolumeClaim
		pv    *v1.PersistentVolume
	}{
		{"annotated for another resizer", annotated, testPV(driverName, "1Gi")},
		{"not bound", unbound, testPV(driverName, "1Gi")},
		{"another driver's volume", testClaim("2Gi"), testPV("other.csi.k8s.io", "1Gi")},
		{"no size change", testClaim("1Gi"), testPV(driverName, "1Gi")},
		{"waiting for the node", nodePending, testPV(driverName, "2Gi")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			driver := expandingDriver(2*gi, false)
			c, kube, _ := newTestController(t, driver, tc.claim, tc.pv)
			if err := c.syncClaim(context.Background(), "ns/data"); err != nil {
				t.Fatal(err)
			}
			if len(driver.Requests()) != 0 || len(kube.Actions()) != 0 {
				t.Errorf("CSI requests %v, API actions %v; want none", driver.Requests(), kube.Actions())
			}
		})
	}
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	if _, err := sidecar.Parse(newSpec(), []string{"--csi-address=/csi/csi.sock", "--http-endpoint=:8082",
		"--leader-election", "--workers=3", "--handle-volume-inuse-error=false", "--timeout=2m"}, &out); err != nil {
		t.Errorf("rendered flags rejected: %v\n%s", err, out.String())
	}
	if _, err := sidecar.Parse(newSpec(), []string{"--worker-threads=3"}, &out); err == nil {
		t.Error("--worker-threads (not the resizer's spelling) accepted")
	}
}
