package main

import (
	"context"
	"encoding/json"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

func hasFinalizer(finalizers []string, f string) bool {
	return slices.Contains(finalizers, f)
}

func without(finalizers []string, f string) []string {
	return slices.DeleteFunc(slices.Clone(finalizers), func(s string) bool { return s == f })
}

// finalizersPatch is a merge patch setting the finalizers of obj, which fails with a conflict
// if obj changed since it was read.
func finalizersPatch(obj metav1.Object, finalizers []string) []byte {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": finalizers, "resourceVersion": obj.GetResourceVersion(),
	}})
	return data
}

func (c *controller) addFinalizer(ctx context.Context, va *storagev1.VolumeAttachment) error {
	if hasFinalizer(va.Finalizers, c.finalizer) {
		return nil
	}
	_, err := c.kube.StorageV1().VolumeAttachments().Patch(ctx, va.Name, types.MergePatchType,
		finalizersPatch(va, append(slices.Clone(va.Finalizers), c.finalizer)), metav1.PatchOptions{})
	return err
}

func (c *controller) removeFinalizer(ctx context.Context, va *storagev1.VolumeAttachment) error {
	_, err := c.kube.StorageV1().VolumeAttachments().Patch(ctx, va.Name, types.MergePatchType,
		finalizersPatch(va, without(va.Finalizers, c.finalizer)), metav1.PatchOptions{})
	return err
}

func (c *controller) addVolumeFinalizer(ctx context.Context, pv *v1.PersistentVolume) error {
	if hasFinalizer(pv.Finalizers, c.finalizer) {
		return nil
	}
	_, err := c.kube.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType,
		finalizersPatch(pv, append(slices.Clone(pv.Finalizers), c.finalizer)), metav1.PatchOptions{})
	return err
}

// syncVolume removes our finalizer from a PersistentVolume no attachment of ours uses any more.
func (c *controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || !hasFinalizer(pv.Finalizers, c.finalizer) {
		return err
	}
	attachments, err := c.attachments.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, va := range attachments {
		if va.Spec.Attacher == c.driver && va.Spec.Source.PersistentVolumeName != nil && *va.Spec.Source.PersistentVolumeName == name {
			return nil // still in use, possibly detaching
		}
	}
	if _, err := c.kube.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType,
		finalizersPatch(pv, without(pv.Finalizers, c.finalizer)), metav1.PatchOptions{}); err != nil {
		return err
	}
	klog.InfoS("Released the PersistentVolume: no attachment uses it", "pv", name)
	return nil
}
