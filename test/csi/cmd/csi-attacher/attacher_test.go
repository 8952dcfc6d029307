package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"csi-operator/test/csi/internal/sidecar"
	"csi-operator/test/csi/internal/sidecar/fakedriver"
)

const (
	driverName = "test.csi.k8s.io"
	finalizer  = "external-attacher/test.csi.k8s.io"
)

func testPV() *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", ResourceVersion: "1"},
		Spec: v1.PersistentVolumeSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
				Driver: driverName, VolumeHandle: "vol-1", FSType: "xfs", ReadOnly: true,
				VolumeAttributes: map[string]string{"kind": "fast"},
			}},
		},
	}
}

func testCSINode() *storagev1.CSINode {
	return &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
			{Name: "other.csi.k8s.io", NodeID: "wrong"},
			{Name: driverName, NodeID: "node-1-id"},
		}},
	}
}

func testAttachment(attacher string) *storagev1.VolumeAttachment {
	pvName := "pv-1"
	return &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "va-1", ResourceVersion: "1"},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: attacher, NodeName: "node-1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName},
		},
	}
}

// newTestController returns a controller on a fake clientset holding objs, with its caches
// holding them too (nothing runs: tests call the sync functions).
func newTestController(t *testing.T, driver *fakedriver.Controller, objs ...runtime.Object) (*controller, *fake.Clientset) {
	kube := fake.NewClientset(objs...)
	c := newController(&sidecar.Env{Driver: driverName, Kube: kube, CSI: fakedriver.Serve(t, driverName, driver)}, 1)
	for _, obj := range objs {
		var err error
		switch obj.(type) {
		case *storagev1.VolumeAttachment:
			err = c.factory.Storage().V1().VolumeAttachments().Informer().GetIndexer().Add(obj)
		case *v1.PersistentVolume:
			err = c.factory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(obj)
		case *storagev1.CSINode:
			err = c.factory.Storage().V1().CSINodes().Informer().GetIndexer().Add(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, kube
}

func getVA(t *testing.T, kube *fake.Clientset) *storagev1.VolumeAttachment {
	t.Helper()
	va, err := kube.StorageV1().VolumeAttachments().Get(context.Background(), "va-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return va
}

func getPV(t *testing.T, kube *fake.Clientset) *v1.PersistentVolume {
	t.Helper()
	pv, err := kube.CoreV1().PersistentVolumes().Get(context.Background(), "pv-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pv
}

func TestAttachPublishesAndRecordsTheStatus(t *testing.T) {
	driver := &fakedriver.Controller{PublishContext: map[string]string{"device": "/dev/fake"}}
	c, kube := newTestController(t, driver, testAttachment(driverName), testPV(), testCSINode())
	if err := c.syncAttachment(context.Background(), "va-1"); err != nil {
		t.Fatal(err)
	}

	va := getVA(t, kube)
	if !va.Status.Attached || va.Status.AttachmentMetadata["device"] != "/dev/fake" || va.Status.AttachError != nil {
		t.Errorf("status = %+v, want attached with the publish context", va.Status)
	}
	if !slices.Equal(va.Finalizers, []string{finalizer}) {
		t.Errorf("VolumeAttachment finalizers = %q, want [%s]", va.Finalizers, finalizer)
	}
	if pv := getPV(t, kube); !slices.Contains(pv.Finalizers, finalizer) {
		t.Errorf("PersistentVolume finalizers = %q, want %s", pv.Finalizers, finalizer)
	}
	reqs := driver.Requests()
	if len(reqs) != 1 {
		t.Fatalf("CSI requests = %v, want one ControllerPublishVolume", reqs)
	}
	req, ok := reqs[0].(*csi.ControllerPublishVolumeRequest)
	if !ok || req.VolumeId != "vol-1" || req.NodeId != "node-1-id" || !req.Readonly ||
		req.VolumeContext["kind"] != "fast" || req.VolumeCapability.GetMount().GetFsType() != "xfs" ||
		req.VolumeCapability.GetAccessMode().GetMode() != csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER {
		t.Errorf("ControllerPublishVolume request = %v", reqs[0])
	}
}

func TestAttachFailureIsRecordedAndReturned(t *testing.T) {
	driver := &fakedriver.Controller{}
	driver.FailWith(status.Error(codes.NotFound, "no such volume"))
	c, kube := newTestController(t, driver, testAttachment(driverName), testPV(), testCSINode())
	if err := c.syncAttachment(context.Background(), "va-1"); err == nil {
		t.Fatal("sync succeeded, want the publish error (to retry with backoff)")
	}
	va := getVA(t, kube)
	if va.Status.Attached || va.Status.AttachError == nil || !strings.Contains(va.Status.AttachError.Message, "no such volume") {
		t.Errorf("status = %+v, want not attached with attachError", va.Status)
	}
	if !slices.Contains(va.Finalizers, finalizer) {
		t.Errorf("finalizers = %q: the finalizer must be in place before publishing", va.Finalizers)
	}
}

func TestAttachNeedsTheDriverOnTheNode(t *testing.T) {
	node := testCSINode()
	node.Spec.Drivers = node.Spec.Drivers[:1]
	driver := &fakedriver.Controller{}
	c, kube := newTestController(t, driver, testAttachment(driverName), testPV(), node)
	if err := c.syncAttachment(context.Background(), "va-1"); err == nil {
		t.Fatal("sync succeeded without the driver in the node's CSINode")
	}
	if va := getVA(t, kube); va.Status.AttachError == nil || len(driver.Requests()) != 0 {
		t.Errorf("status = %+v, CSI requests = %v; want attachError and no call", va.Status, driver.Requests())
	}
}

func TestOtherAttachersAreIgnored(t *testing.T) {
	driver := &fakedriver.Controller{}
	c, kube := newTestController(t, driver, testAttachment("other.csi.k8s.io"), testPV(), testCSINode())
	if err := c.syncAttachment(context.Background(), "va-1"); err != nil {
		t.Fatal(err)
	}
	if va := getVA(t, kube); va.Status.Attached || len(va.Finalizers) != 0 || len(driver.Requests()) != 0 {
		t.Errorf("another driver's attachment was touched: %+v, CSI requests %v", va, driver.Requests())
	}
}

func TestDetachUnpublishesAndRemovesTheFinalizer(t *testing.T) {
	va := testAttachment(driverName)
	va.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	va.Finalizers = []string{"other/finalizer", finalizer}
	va.Status = storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"device": "/dev/fake"}}
	driver := &fakedriver.Controller{}
	c, kube := newTestController(t, driver, va, testPV(), testCSINode())
	if err := c.syncAttachment(context.Background(), "va-1"); err != nil {
		t.Fatal(err)
	}

	got := getVA(t, kube)
	if got.Status.Attached || got.Status.AttachmentMetadata != nil {
		t.Errorf("status = %+v, want detached", got.Status)
	}
	if !slices.Equal(got.Finalizers, []string{"other/finalizer"}) {
		t.Errorf("finalizers = %q, want only other/finalizer", got.Finalizers)
	}
	reqs := driver.Requests()
	if len(reqs) != 1 {
		t.Fatalf("CSI requests = %v, want one ControllerUnpublishVolume", reqs)
	}
	if req, ok := reqs[0].(*csi.ControllerUnpublishVolumeRequest); !ok || req.VolumeId != "vol-1" || req.NodeId != "node-1-id" {
		t.Errorf("ControllerUnpublishVolume request = %v", reqs[0])
	}
}

func TestDetachFailureKeepsTheFinalizer(t *testing.T) {
	va := testAttachment(driverName)
	va.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	va.Finalizers = []string{finalizer}
	va.Status.Attached = true
	driver := &fakedriver.Controller{}
	driver.FailWith(status.Error(codes.Internal, "stuck"))
	c, kube := newTestController(t, driver, va, testPV(), testCSINode())
	if err := c.syncAttachment(context.Background(), "va-1"); err == nil {
		t.Fatal("sync succeeded, want the unpublish error")
	}
	got := getVA(t, kube)
	if !slices.Equal(got.Finalizers, []string{finalizer}) || got.Status.DetachError == nil || !got.Status.Attached {
		t.Errorf("after a failed detach: finalizers %q, status %+v", got.Finalizers, got.Status)
	}
}

func TestVolumeFinalizerIsRemovedOnlyWhenUnused(t *testing.T) {
	pv := testPV()
	pv.Finalizers = []string{"kubernetes.io/pv-protection", finalizer}

	inUse, kube := newTestController(t, &fakedriver.Controller{}, pv, testAttachment(driverName))
	if err := inUse.syncVolume(context.Background(), "pv-1"); err != nil {
		t.Fatal(err)
	}
	if got := getPV(t, kube); !slices.Contains(got.Finalizers, finalizer) {
		t.Errorf("finalizer removed while an attachment uses the volume: %q", got.Finalizers)
	}

	unused, kube := newTestController(t, &fakedriver.Controller{}, pv)
	if err := unused.syncVolume(context.Background(), "pv-1"); err != nil {
		t.Fatal(err)
	}
	if got := getPV(t, kube); !slices.Equal(got.Finalizers, []string{"kubernetes.io/pv-protection"}) {
		t.Errorf("finalizers = %q, want only kubernetes.io/pv-protection", got.Finalizers)
	}
}

// TestControllerAttachesThroughItsInformers runs the whole controller against the fake
// clientset, with a driver that has no PUBLISH_UNPUBLISH_VOLUME capability.
func TestControllerAttachesThroughItsInformers(t *testing.T) {
	driver := &fakedriver.Controller{}
	c, kube := newTestController(t, driver)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.run(ctx) }()
	defer func() { cancel(); <-done }()
	if _, err := kube.StorageV1().VolumeAttachments().Create(ctx, testAttachment(driverName), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !getVA(t, kube).Status.Attached {
		if time.Now().After(deadline) {
			t.Fatal("the VolumeAttachment was not marked attached")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if reqs := driver.Requests(); len(reqs) != 0 {
		t.Errorf("CSI requests %v to a driver without PUBLISH_UNPUBLISH_VOLUME", reqs)
	}
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	if _, err := sidecar.Parse(newSpec(), []string{"--csi-address=/csi/csi.sock", "--http-endpoint=:8081",
		"--leader-election", "--worker-threads=3", "--timeout=30s"}, &out); err != nil {
		t.Errorf("rendered flags rejected: %v\n%s", err, out.String())
	}
	if _, err := sidecar.Parse(newSpec(), []string{"--workers=3"}, &out); err == nil {
		t.Error("--workers (the resizer's spelling) accepted")
	}
}
