package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"csi-operator/test/csi/internal/sidecar"
)

// syncAttachment brings one VolumeAttachment to the state its spec and deletion ask for.
func (c *controller) syncAttachment(ctx context.Context, name string) error {
	va, err := c.attachments.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case va.Spec.Attacher != c.driver:
		return nil
	case va.DeletionTimestamp != nil:
		return c.detach(ctx, va)
	case !va.Status.Attached:
		return c.attach(ctx, va)
	}
	return nil
}

// attach adds our finalizer first (so a deletion waits for the detach), publishes the
// volume and records the result in the status.
func (c *controller) attach(ctx context.Context, va *storagev1.VolumeAttachment) error {
	if err := c.addFinalizer(ctx, va); err != nil {
		return err
	}
	publishContext, err := c.publishVolume(ctx, va)
	if err != nil {
		return c.recordFailure(ctx, va, "attachError", err)
	}
	if _, err := c.patchAttachmentStatus(ctx, va.Name, map[string]any{
		"attached": true, "attachmentMetadata": publishContext, "attachError": nil,
	}); err != nil {
		return err
	}
	klog.InfoS("Attached", "volumeattachment", va.Name, "node", va.Spec.NodeName)
	return nil
}

// detach unpublishes the volume of an attachment being deleted, records it detached and
// removes our finalizer, which lets the deletion finish.
func (c *controller) detach(ctx context.Context, va *storagev1.VolumeAttachment) error {
	if !hasFinalizer(va.Finalizers, c.finalizer) {
		return nil // never attached by us, or already detached
	}
	if err := c.unpublishVolume(ctx, va); err != nil {
		return c.recordFailure(ctx, va, "detachError", err)
	}
	va, err := c.patchAttachmentStatus(ctx, va.Name, map[string]any{
		"attached": false, "attachmentMetadata": nil, "attachError": nil, "detachError": nil,
	})
	if err != nil {
		return err
	}
	if err := c.removeFinalizer(ctx, va); err != nil {
		return err
	}
	klog.InfoS("Detached", "volumeattachment", va.Name, "node", va.Spec.NodeName)
	return nil
}

// publishVolume calls ControllerPublishVolume and returns the publish context. The volume's
// PersistentVolume first gets our finalizer: the detach will need its volume handle.
func (c *controller) publishVolume(ctx context.Context, va *storagev1.VolumeAttachment) (map[string]string, error) {
	if !c.publish {
		return nil, nil
	}
	spec, pv, err := c.volumeSpec(va)
	if err != nil {
		return nil, err
	}
	if pv != nil {
		if err := c.addVolumeFinalizer(ctx, pv); err != nil {
			return nil, err
		}
	}
	nodeID, err := c.nodeID(va.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	capability, err := sidecar.PVCapability(spec)
	if err != nil {
		return nil, err
	}
	resp, err := c.csi.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
		VolumeId:         spec.CSI.VolumeHandle,
		NodeId:           nodeID,
		VolumeCapability: capability,
		Readonly:         spec.CSI.ReadOnly,
		VolumeContext:    spec.CSI.VolumeAttributes,
	})
	if err != nil {
		return nil, fmt.Errorf("ControllerPublishVolume: %w", err)
	}
	return resp.GetPublishContext(), nil
}

func (c *controller) unpublishVolume(ctx context.Context, va *storagev1.VolumeAttachment) error {
	if !c.publish {
		return nil
	}
	spec, _, err := c.volumeSpec(va)
	if err != nil {
		return err
	}
	nodeID, err := c.nodeID(va.Spec.NodeName)
	if err != nil {
		return err
	}
	if _, err := c.csi.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{
		VolumeId: spec.CSI.VolumeHandle, NodeId: nodeID,
	}); err != nil {
		return fmt.Errorf("ControllerUnpublishVolume: %w", err)
	}
	return nil
}

// volumeSpec finds the attachment's volume: its PersistentVolume (returned too) or its
// inline volume spec. It must be a CSI volume of our driver.
func (c *controller) volumeSpec(va *storagev1.VolumeAttachment) (*v1.PersistentVolumeSpec, *v1.PersistentVolume, error) {
	var spec *v1.PersistentVolumeSpec
	var pv *v1.PersistentVolume
	switch src := va.Spec.Source; {
	case src.PersistentVolumeName != nil:
		var err error
		if pv, err = c.volumes.Get(*src.PersistentVolumeName); err != nil {
			return nil, nil, fmt.Errorf("PersistentVolume %s: %w", *src.PersistentVolumeName, err)
		}
		spec = &pv.Spec
	case src.InlineVolumeSpec != nil:
		spec = src.InlineVolumeSpec
	default:
		return nil, nil, errors.New("the VolumeAttachment names no volume")
	}
	if spec.CSI == nil || spec.CSI.Driver != c.driver {
		return nil, nil, fmt.Errorf("the volume is not a CSI volume of driver %s", c.driver)
	}
	return spec, pv, nil
}

// nodeID is the driver's ID for the node, from the node's CSINode (written by the kubelet
// when the node plugin registered).
func (c *controller) nodeID(nodeName string) (string, error) {
	node, err := c.csiNodes.Get(nodeName)
	if err != nil {
		return "", fmt.Errorf("CSINode %s: %w", nodeName, err)
	}
	for _, d := range node.Spec.Drivers {
		if d.Name == c.driver {
			return d.NodeID, nil
		}
	}
	return "", fmt.Errorf("driver %s is not registered on node %s (not in its CSINode)", c.driver, nodeName)
}

// recordFailure writes err into status.<field> ({time, message}) and returns err, so that
// the attachment is retried with backoff.
func (c *controller) recordFailure(ctx context.Context, va *storagev1.VolumeAttachment, field string, err error) error {
	_, patchErr := c.patchAttachmentStatus(ctx, va.Name, map[string]any{
		field: map[string]any{"time": time.Now().UTC().Format(time.RFC3339), "message": err.Error()},
	})
	return errors.Join(err, patchErr)
}

// patchAttachmentStatus merge-patches the status subresource and returns the updated object.
func (c *controller) patchAttachmentStatus(ctx context.Context, name string, status map[string]any) (*storagev1.VolumeAttachment, error) {
	data, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return nil, err
	}
	return c.kube.StorageV1().VolumeAttachments().Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{}, "status")
}
