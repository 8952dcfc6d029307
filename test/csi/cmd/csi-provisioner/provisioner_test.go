package main

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v11/controller"

	"csi-operator/test/csi/internal/sidecar"
	"csi-operator/test/csi/internal/sidecar/fakedriver"
)

const (
	driverName = "test.csi.k8s.io"
	zoneKey    = "topology.test/zone"
	nodeKey    = "topology.test/node"
	gi         = int64(1) << 30
)

func testClass() *storagev1.StorageClass {
	retain := v1.PersistentVolumeReclaimRetain
	return &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "fast"},
		Provisioner: driverName,
		Parameters: map[string]string{
			"type": "ssd", "csi.storage.k8s.io/fstype": "xfs", "csi.storage.k8s.io/provisioner-secret-name": "s",
		},
		ReclaimPolicy: &retain,
		MountOptions:  []string{"noatime"},
	}
}

func testClaim() *v1.PersistentVolumeClaim {
	class := "fast"
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", UID: "uid-1",
			Annotations: map[string]string{"volume.kubernetes.io/storage-provisioner": driverName}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

func testNode() *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{zoneKey: "z1"}}}
}

func testCSINode(drivers ...storagev1.CSINodeDriver) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: storagev1.CSINodeSpec{Drivers: drivers}}
}

// newTestProvisioner serves driver and returns a provisioner whose caches hold objs.
func newTestProvisioner(t *testing.T, driver *fakedriver.Controller, o *options, objs ...runtime.Object) *provisioner {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	p := &provisioner{
		driver:      driverName,
		csi:         csi.NewControllerClient(fakedriver.Serve(t, driverName, driver)),
		opts:        o,
		csiNodes:    factory.Storage().V1().CSINodes().Lister(),
		attachments: factory.Storage().V1().VolumeAttachments().Lister(),
	}
	for _, obj := range objs {
		var err error
		switch obj.(type) {
		case *storagev1.CSINode:
			err = factory.Storage().V1().CSINodes().Informer().GetIndexer().Add(obj)
		case *storagev1.VolumeAttachment:
			err = factory.Storage().V1().VolumeAttachments().Informer().GetIndexer().Add(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestProvisionBuildsThePersistentVolumeFromTheResponse(t *testing.T) {
	driver := &fakedriver.Controller{Volume: &csi.Volume{
		VolumeId: "vol-1", CapacityBytes: 2 * gi, VolumeContext: map[string]string{"path": "/data/vol-1"},
		AccessibleTopology: []*csi.Topology{
			{Segments: map[string]string{zoneKey: "z1", nodeKey: "n1"}},
			{Segments: map[string]string{zoneKey: "z2"}},
		},
	}}
	p := newTestProvisioner(t, driver, &options{extraCreateMetadata: true},
		testCSINode(storagev1.CSINodeDriver{Name: driverName, NodeID: "n1", TopologyKeys: []string{zoneKey}}))
	pv, state, err := p.Provision(context.Background(), controller.ProvisionOptions{
		StorageClass: testClass(), PVName: "pvc-uid-1", PVC: testClaim(), SelectedNode: testNode(),
	})
	if err != nil || state != controller.ProvisioningFinished {
		t.Fatalf("Provision: %v, %v", state, err)
	}

	reqs := driver.Requests()
	req, ok := reqs[0].(*csi.CreateVolumeRequest)
	if len(reqs) != 1 || !ok {
		t.Fatalf("CSI requests = %v, want one CreateVolume", reqs)
	}
	wantParams := map[string]string{"type": "ssd", "csi.storage.k8s.io/pvc/name": "data",
		"csi.storage.k8s.io/pvc/namespace": "ns", "csi.storage.k8s.io/pv/name": "pvc-uid-1"}
	caps := req.VolumeCapabilities
	if req.Name != "pvc-uid-1" || req.CapacityRange.RequiredBytes != gi || !maps.Equal(req.Parameters, wantParams) ||
		len(caps) != 1 || caps[0].GetMount().GetFsType() != "xfs" || caps[0].GetMount().GetMountFlags()[0] != "noatime" ||
		req.AccessibilityRequirements.GetRequisite()[0].GetSegments()[zoneKey] != "z1" {
		t.Errorf("CreateVolume request = %v", req)
	}

	if pv.Name != "pvc-uid-1" || pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimRetain ||
		pv.Spec.StorageClassName != "fast" || !reflect.DeepEqual(pv.Spec.MountOptions, []string{"noatime"}) ||
		!reflect.DeepEqual(pv.Spec.AccessModes, []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}) {
		t.Errorf("PersistentVolume = %+v", pv)
	}
	if got := pv.Spec.Capacity[v1.ResourceStorage]; got.Value() != 2*gi {
		t.Errorf("capacity = %v, want the 2Gi CreateVolume returned", got.String())
	}
	wantSource := &v1.CSIPersistentVolumeSource{Driver: driverName, VolumeHandle: "vol-1", FSType: "xfs",
		VolumeAttributes: map[string]string{"path": "/data/vol-1"}}
	if !reflect.DeepEqual(pv.Spec.CSI, wantSource) {
		t.Errorf("CSI source = %+v, want %+v", pv.Spec.CSI, wantSource)
	}
	in := v1.NodeSelectorOpIn
	wantAffinity := &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
		{MatchExpressions: []v1.NodeSelectorRequirement{{Key: nodeKey, Operator: in, Values: []string{"n1"}}, {Key: zoneKey, Operator: in, Values: []string{"z1"}}}},
		{MatchExpressions: []v1.NodeSelectorRequirement{{Key: zoneKey, Operator: in, Values: []string{"z2"}}}},
	}}}
	if !reflect.DeepEqual(pv.Spec.NodeAffinity, wantAffinity) {
		t.Errorf("node affinity = %+v, want %+v", pv.Spec.NodeAffinity, wantAffinity)
	}
}

func TestProvisionDefaults(t *testing.T) {
	driver := &fakedriver.Controller{Volume: &csi.Volume{VolumeId: "vol-1"}}
	p := newTestProvisioner(t, driver, &options{defaultFSType: "ext4"})
	class := testClass()
	class.ReclaimPolicy, class.Parameters = nil, nil
	pv, _, err := p.Provision(context.Background(), controller.ProvisionOptions{StorageClass: class, PVName: "pvc-uid-1", PVC: testClaim()})
	if err != nil {
		t.Fatal(err)
	}
	got := pv.Spec.Capacity[v1.ResourceStorage]
	if pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || pv.Spec.CSI.FSType != "ext4" ||
		got.Value() != gi || pv.Spec.NodeAffinity != nil {
		t.Errorf("PersistentVolume = %+v, want reclaim Delete, fsType ext4, the requested 1Gi, no affinity", pv.Spec)
	}
	if req := driver.Requests()[0].(*csi.CreateVolumeRequest); len(req.Parameters) != 0 || req.AccessibilityRequirements != nil {
		t.Errorf("CreateVolume request = %v, want no parameters and no topology", req)
	}
}

func TestProvisionFailures(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		csiNode   *storagev1.CSINode
		wantState controller.ProvisioningState
		wantCalls int
	}{
		{"no space on the selected node", status.Error(codes.ResourceExhausted, "full"),
			testCSINode(storagev1.CSINodeDriver{Name: driverName}), controller.ProvisioningReschedule, 1},
		{"timeout", status.Error(codes.DeadlineExceeded, "slow"),
			testCSINode(storagev1.CSINodeDriver{Name: driverName}), controller.ProvisioningInBackground, 1},
		{"invalid", status.Error(codes.InvalidArgument, "bad"),
			testCSINode(storagev1.CSINodeDriver{Name: driverName}), controller.ProvisioningFinished, 1},
		{"driver not on the selected node", nil,
			testCSINode(storagev1.CSINodeDriver{Name: "other.csi.k8s.io"}), controller.ProvisioningNoChange, 0},
		{"node lacks a topology label", nil,
			testCSINode(storagev1.CSINodeDriver{Name: driverName, TopologyKeys: []string{nodeKey}}), controller.ProvisioningNoChange, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			driver := &fakedriver.Controller{Volume: &csi.Volume{VolumeId: "vol-1"}}
			driver.FailWith(tc.err)
			p := newTestProvisioner(t, driver, &options{}, tc.csiNode)
			pv, state, err := p.Provision(context.Background(), controller.ProvisionOptions{
				StorageClass: testClass(), PVName: "pvc-uid-1", PVC: testClaim(), SelectedNode: testNode(),
			})
			if err == nil || pv != nil || state != tc.wantState || len(driver.Requests()) != tc.wantCalls {
				t.Errorf("Provision = %v, %q, %v with %d CSI calls; want an error, %q, %d calls",
					pv, state, err, len(driver.Requests()), tc.wantState, tc.wantCalls)
			}
		})
	}
}

func testPV(driver string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-uid-1"},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
			CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "vol-1"}}},
	}
}

func TestDelete(t *testing.T) {
	driver := &fakedriver.Controller{}
	p := newTestProvisioner(t, driver, &options{})
	var ignored *controller.IgnoredError
	if err := p.Delete(context.Background(), testPV("other.csi.k8s.io")); !errors.As(err, &ignored) {
		t.Errorf("another driver's volume: err = %v, want IgnoredError", err)
	}
	if err := p.Delete(context.Background(), testPV(driverName)); err != nil {
		t.Fatal(err)
	}
	if reqs := driver.Requests(); len(reqs) != 1 || reqs[0].(*csi.DeleteVolumeRequest).VolumeId != "vol-1" {
		t.Errorf("CSI requests = %v, want DeleteVolume of vol-1", reqs)
	}
	driver.FailWith(status.Error(codes.NotFound, "gone"))
	if err := p.Delete(context.Background(), testPV(driverName)); err != nil {
		t.Errorf("a volume already gone: %v, want success", err)
	}
}

func TestDeleteWaitsForTheDetach(t *testing.T) {
	pvName := "pvc-uid-1"
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-1"}, Spec: storagev1.VolumeAttachmentSpec{
		Attacher: driverName, NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName}}}
	driver := &fakedriver.Controller{}
	p := newTestProvisioner(t, driver, &options{}, va)
	if err := p.Delete(context.Background(), testPV(driverName)); err == nil || len(driver.Requests()) != 0 {
		t.Errorf("Delete of an attached volume: err = %v, CSI requests %v; want an error and no call", err, driver.Requests())
	}
}

// TestControllerProvisionsAndDeletes runs the whole provisioner (the library's controller)
// against the fake clientset.
func TestControllerProvisionsAndDeletes(t *testing.T) {
	driver := &fakedriver.Controller{Volume: &csi.Volume{VolumeId: "vol-1", CapacityBytes: gi}}
	class := testClass()
	class.ReclaimPolicy = nil
	kube := fake.NewClientset(class, testClaim())
	env := &sidecar.Env{Driver: driverName, Kube: kube, CSI: fakedriver.Serve(t, driverName, driver)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, env, &options{workers: 1, volumeNamePrefix: "vol"}) }()
	defer func() { cancel(); <-done }()

	var pv *v1.PersistentVolume
	eventually(t, "the PersistentVolume is created", func() bool {
		var err error
		pv, err = kube.CoreV1().PersistentVolumes().Get(ctx, "vol-uid-1", metav1.GetOptions{})
		return err == nil
	})
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "data" ||
		pv.Annotations["pv.kubernetes.io/provisioned-by"] != driverName ||
		!reflect.DeepEqual(pv.Finalizers, []string{"external-provisioner.volume.kubernetes.io/finalizer"}) {
		t.Errorf("PersistentVolume = %+v, want bound to the claim, annotated and with the provisioner's finalizer", pv.ObjectMeta)
	}

	pv.Status.Phase = v1.VolumeReleased // what the PV controller does once the claim is gone
	if _, err := kube.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "DeleteVolume is called", func() bool {
		reqs := driver.Requests()
		return len(reqs) == 2 && reqs[1].(*csi.DeleteVolumeRequest).VolumeId == "vol-1"
	})
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	if _, err := sidecar.Parse(newSpec(), []string{"--csi-address=/csi/csi.sock", "--http-endpoint=:8080",
		"--leader-election", "--leader-election-lease-duration=20s", "--enable-capacity", "--capacity-ownerref-level=2",
		"--extra-create-metadata", "--volume-name-prefix=vol", "--default-fstype=ext4", "--worker-threads=2",
		"--timeout=1m", "--v=4"}, &out); err != nil {
		t.Errorf("rendered flags rejected: %v\n%s", err, out.String())
	}
	if _, err := sidecar.Parse(newSpec(), []string{"--feature-gates=Topology=true"}, &out); err == nil {
		t.Error("an unknown flag was accepted")
	}
}
