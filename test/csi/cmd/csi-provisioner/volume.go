package main

import (
	"slices"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v11/controller"
)

// StorageClass parameters with this prefix are for the sidecars, not the driver.
const reservedPrefix = "csi.storage.k8s.io/"

const (
	fsTypeKey       = reservedPrefix + "fstype"
	pvcNameKey      = reservedPrefix + "pvc/name"
	pvcNamespaceKey = reservedPrefix + "pvc/namespace"
	pvNameKey       = reservedPrefix + "pv/name"
)

// createParameters splits a StorageClass's parameters into the driver's (all but the
// csi.storage.k8s.io/ ones) and the fsType (its csi.storage.k8s.io/fstype, else defaultFSType).
func createParameters(class map[string]string, defaultFSType string) (map[string]string, string) {
	params := map[string]string{}
	fsType := defaultFSType
	for k, v := range class {
		lower := strings.ToLower(k)
		switch {
		case lower == fsTypeKey:
			fsType = v
		case strings.HasPrefix(lower, reservedPrefix):
		default:
			params[k] = v
		}
	}
	return params, fsType
}

// newPersistentVolume is the PersistentVolume of a volume CreateVolume returned for o.
func newPersistentVolume(driver string, o controller.ProvisionOptions, vol *csi.Volume, fsType string) *v1.PersistentVolume {
	claim, class := o.PVC, o.StorageClass
	capacity := claim.Spec.Resources.Requests[v1.ResourceStorage]
	if vol.GetCapacityBytes() > 0 {
		capacity = *resource.NewQuantity(vol.GetCapacityBytes(), resource.BinarySI)
	}
	reclaim := v1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	source := &v1.CSIPersistentVolumeSource{
		Driver:           driver,
		VolumeHandle:     vol.GetVolumeId(),
		VolumeAttributes: vol.GetVolumeContext(),
	}
	if claim.Spec.VolumeMode == nil || *claim.Spec.VolumeMode == v1.PersistentVolumeFilesystem {
		source.FSType = fsType
	}
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: o.PVName},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:                   slices.Clone(claim.Spec.AccessModes),
			Capacity:                      v1.ResourceList{v1.ResourceStorage: capacity},
			PersistentVolumeReclaimPolicy: reclaim,
			MountOptions:                  slices.Clone(class.MountOptions),
			StorageClassName:              class.Name,
			VolumeMode:                    claim.Spec.VolumeMode,
			NodeAffinity:                  nodeAffinity(vol.GetAccessibleTopology()),
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: source},
		},
	}
}

// nodeAffinity requires one of the topology segments the volume is reachable from: one
// NodeSelectorTerm (ORed) per segment, one In expression (ANDed) per key.
func nodeAffinity(topologies []*csi.Topology) *v1.VolumeNodeAffinity {
	var terms []v1.NodeSelectorTerm
	for _, t := range topologies {
		keys := make([]string, 0, len(t.GetSegments()))
		for k := range t.GetSegments() {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var term v1.NodeSelectorTerm
		for _, k := range keys {
			term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
				Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{t.GetSegments()[k]},
			})
		}
		if len(term.MatchExpressions) > 0 {
			terms = append(terms, term)
		}
	}
	if len(terms) == 0 {
		return nil
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: terms}}
}
