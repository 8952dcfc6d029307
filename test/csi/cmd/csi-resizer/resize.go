package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"csi-operator/test/csi/internal/sidecar"
)

// resizerAnnotation names the resizer of a claim. kube-controller-manager's expand controller
// sets it only for CSI-migrated in-tree volumes (to the CSI driver's name); for CSI volumes it
// just waits for an external resizer ("ExternalExpanding").
const resizerAnnotation = "volume.kubernetes.io/storage-resizer"

// resizeConditions are the claim conditions this resizer owns.
var resizeConditions = []v1.PersistentVolumeClaimConditionType{
	v1.PersistentVolumeClaimResizing,
	v1.PersistentVolumeClaimFileSystemResizePending,
	v1.PersistentVolumeClaimControllerResizeError,
}

// syncClaim expands the claim's volume if it needs it.
func (c *controller) syncClaim(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	claim, err := c.claims.PersistentVolumeClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	pv, err := c.volumeOf(claim)
	if pv == nil || err != nil || !needsControllerResize(claim, pv) {
		return err
	}
	return c.resize(ctx, claim, pv)
}

// volumeOf returns the claim's PersistentVolume when this resizer is in charge of it: we act
// on claims bound to a CSI volume of our driver (we need its volume handle), unless the
// resizer annotation names someone else. A claim annotated for us whose volume is not a CSI
// volume of ours (a migrated in-tree volume) is left alone: this stand-in translates nothing.
func (c *controller) volumeOf(claim *v1.PersistentVolumeClaim) (*v1.PersistentVolume, error) {
	if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName == "" {
		return nil, nil
	}
	if resizer, ok := claim.Annotations[resizerAnnotation]; ok && resizer != c.driver {
		return nil, nil
	}
	pv, err := c.volumes.Get(claim.Spec.VolumeName)
	if err != nil {
		return nil, fmt.Errorf("PersistentVolume %s: %w", claim.Spec.VolumeName, err)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != c.driver || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID {
		return nil, nil
	}
	return pv, nil
}

// needsControllerResize: the claim asks for more than it has, and the volume is smaller than
// asked or an earlier expansion stopped half-way (its status still says ControllerResizeInProgress).
func needsControllerResize(claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) bool {
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	current := claim.Status.Capacity[v1.ResourceStorage]
	if requested.Cmp(current) <= 0 {
		return false
	}
	volumeSize := pv.Spec.Capacity[v1.ResourceStorage]
	return volumeSize.Cmp(requested) < 0 ||
		claim.Status.AllocatedResourceStatuses[v1.ResourceStorage] == v1.PersistentVolumeClaimControllerResizeInProgress
}

func (c *controller) resize(ctx context.Context, claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) error {
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	claim, err := c.patchClaimStatus(ctx, claim, map[string]any{
		"allocatedResources":        map[string]any{"storage": requested.String()},
		"allocatedResourceStatuses": map[string]any{"storage": v1.PersistentVolumeClaimControllerResizeInProgress},
		"conditions":                withResizeCondition(claim.Status.Conditions, v1.PersistentVolumeClaimResizing, ""),
	})
	if err != nil {
		return err
	}
	c.recorder.Eventf(claim, v1.EventTypeNormal, "Resizing", "External resizer is resizing volume %s", pv.Name)

	newSize, nodeExpansion, err := c.expandVolume(ctx, pv, requested)
	if err != nil {
		c.recorder.Eventf(claim, v1.EventTypeWarning, "VolumeResizeFailed", "resize volume %q by resizer %q failed: %v", pv.Name, c.driver, err)
		_, patchErr := c.patchClaimStatus(ctx, claim, map[string]any{
			"conditions": withResizeCondition(claim.Status.Conditions, v1.PersistentVolumeClaimControllerResizeError, err.Error()),
		})
		if patchErr != nil {
			klog.ErrorS(patchErr, "Recording the failed resize", "pvc", klog.KObj(claim))
		}
		return err
	}
	if err := c.patchVolumeCapacity(ctx, pv, newSize); err != nil {
		return err
	}
	if nodeExpansion {
		if _, err := c.patchClaimStatus(ctx, claim, map[string]any{
			"allocatedResourceStatuses": map[string]any{"storage": v1.PersistentVolumeClaimNodeResizePending},
			"conditions": withResizeCondition(claim.Status.Conditions, v1.PersistentVolumeClaimFileSystemResizePending,
				"Waiting for user to (re-)start a pod to finish file system resize of volume on node."),
		}); err != nil {
			return err
		}
		c.recorder.Event(claim, v1.EventTypeNormal, "FileSystemResizeRequired", "Require file system resize of volume on node")
		klog.InfoS("Expanded the volume; the node must expand the file system", "pvc", klog.KObj(claim), "pv", pv.Name, "size", newSize.String())
		return nil
	}
	if _, err := c.patchClaimStatus(ctx, claim, map[string]any{
		"capacity":                  map[string]any{"storage": newSize.String()},
		"allocatedResourceStatuses": map[string]any{"storage": nil},
		"conditions":                withResizeCondition(claim.Status.Conditions, "", ""),
	}); err != nil {
		return err
	}
	c.recorder.Eventf(claim, v1.EventTypeNormal, "VolumeResizeSuccessful", "Resize volume succeeded")
	klog.InfoS("Expanded the volume", "pvc", klog.KObj(claim), "pv", pv.Name, "size", newSize.String())
	return nil
}

// expandVolume calls ControllerExpandVolume and returns the new size and whether the node
// must expand too. Without the EXPAND_VOLUME capability it only hands over to the node.
func (c *controller) expandVolume(ctx context.Context, pv *v1.PersistentVolume, requested resource.Quantity) (resource.Quantity, bool, error) {
	if !c.expand {
		return requested, true, nil
	}
	capability, err := sidecar.PVCapability(&pv.Spec)
	if err != nil {
		return requested, false, err
	}
	resp, err := c.csi.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{
		VolumeId:         pv.Spec.CSI.VolumeHandle,
		CapacityRange:    &csi.CapacityRange{RequiredBytes: requested.Value()},
		VolumeCapability: capability,
	})
	if err != nil {
		return requested, false, fmt.Errorf("ControllerExpandVolume: %w", err)
	}
	if resp.GetCapacityBytes() > 0 {
		return *resource.NewQuantity(resp.GetCapacityBytes(), resource.BinarySI), resp.GetNodeExpansionRequired(), nil
	}
	return requested, resp.GetNodeExpansionRequired(), nil
}

// withResizeCondition is conditions without this resizer's ones, plus one of type t (none if
// t is empty).
func withResizeCondition(conditions []v1.PersistentVolumeClaimCondition, t v1.PersistentVolumeClaimConditionType,
	message string) []v1.PersistentVolumeClaimCondition {
	out := slices.DeleteFunc(slices.Clone(conditions), func(c v1.PersistentVolumeClaimCondition) bool {
		return slices.Contains(resizeConditions, c.Type)
	})
	if t != "" {
		out = append(out, v1.PersistentVolumeClaimCondition{
			Type: t, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now(), Message: message,
		})
	}
	return out
}

// patchClaimStatus merge-patches the claim's status subresource; the claim's resourceVersion
// makes it fail on a concurrent change (the conditions list is replaced whole).
func (c *controller) patchClaimStatus(ctx context.Context, claim *v1.PersistentVolumeClaim, status map[string]any) (*v1.PersistentVolumeClaim, error) {
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": claim.ResourceVersion},
		"status":   status,
	})
	if err != nil {
		return nil, err
	}
	return c.kube.CoreV1().PersistentVolumeClaims(claim.Namespace).Patch(ctx, claim.Name, types.MergePatchType, data, metav1.PatchOptions{}, "status")
}

func (c *controller) patchVolumeCapacity(ctx context.Context, pv *v1.PersistentVolume, size resource.Quantity) error {
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"capacity": map[string]any{"storage": size.String()}}})
	if err != nil {
		return err
	}
	_, err = c.kube.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType, data, metav1.PatchOptions{})
	return err
}
