package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v11/controller"

	"csi-operator/test/csi/internal/sidecar"
)

// provisioner implements the library's Provisioner through the driver's CSI controller.
type provisioner struct {
	driver      string
	csi         csi.ControllerClient
	opts        *options
	csiNodes    storagelisters.CSINodeLister
	attachments storagelisters.VolumeAttachmentLister
}

var _ controller.BlockProvisioner = (*provisioner)(nil)

// SupportsBlock lets block claims through: the driver accepts or refuses the block capability.
func (p *provisioner) SupportsBlock(context.Context) bool { return true }

// Provision creates the volume (CreateVolume) and returns its PersistentVolume; the library
// adds the claim reference, the provisioned-by annotation and its finalizer, and creates it.
func (p *provisioner) Provision(ctx context.Context, o controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	claim := o.PVC
	if claim.Spec.DataSource != nil || claim.Spec.DataSourceRef != nil {
		return nil, controller.ProvisioningFinished, errors.New("volume data sources (snapshots, clones, populators) are not supported by this test-fixture provisioner")
	}
	params, fsType := createParameters(o.StorageClass.Parameters, p.opts.defaultFSType)
	if p.opts.extraCreateMetadata {
		params[pvcNameKey], params[pvcNamespaceKey], params[pvNameKey] = claim.Name, claim.Namespace, o.PVName
	}
	caps, err := sidecar.VolumeCapabilities(claim.Spec.AccessModes, claim.Spec.VolumeMode, fsType, o.StorageClass.MountOptions)
	if err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	topology, err := p.accessibility(o.SelectedNode)
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	resp, err := p.csi.CreateVolume(ctx, &csi.CreateVolumeRequest{
		Name:                      o.PVName,
		CapacityRange:             &csi.CapacityRange{RequiredBytes: requested.Value()},
		VolumeCapabilities:        caps,
		Parameters:                params,
		AccessibilityRequirements: topology,
	})
	if err != nil {
		return nil, provisioningState(err, o.SelectedNode != nil), fmt.Errorf("CreateVolume: %w", err)
	}
	pv := newPersistentVolume(p.driver, o, resp.GetVolume(), fsType)
	klog.InfoS("Provisioned", "pvc", klog.KObj(claim), "pv", pv.Name, "volumeHandle", resp.GetVolume().GetVolumeId())
	return pv, controller.ProvisioningFinished, nil
}

// provisioningState tells the library whether a failed CreateVolume may still be going on
// (then it must be called again, even if the claim goes away) or should go to another node.
func provisioningState(err error, selectedNode bool) controller.ProvisioningState {
	switch status.Code(err) {
	case codes.ResourceExhausted:
		if selectedNode {
			return controller.ProvisioningReschedule
		}
		return controller.ProvisioningInBackground
	case codes.DeadlineExceeded, codes.Unavailable, codes.Canceled, codes.Aborted:
		return controller.ProvisioningInBackground
	}
	return controller.ProvisioningFinished
}

// Delete deletes the volume of a released PersistentVolume of our driver (DeleteVolume),
// refusing while a VolumeAttachment still names it.
func (p *provisioner) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != p.driver {
		return &controller.IgnoredError{Reason: "not a CSI volume of driver " + p.driver}
	}
	attachments, err := p.attachments.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, va := range attachments {
		if name := va.Spec.Source.PersistentVolumeName; name != nil && *name == pv.Name {
			return fmt.Errorf("PersistentVolume %s is still attached to node %s (VolumeAttachment %s)", pv.Name, va.Spec.NodeName, va.Name)
		}
	}
	_, err = p.csi.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: pv.Spec.CSI.VolumeHandle})
	if err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("DeleteVolume: %w", err)
	}
	klog.InfoS("Deleted the volume", "pv", pv.Name, "volumeHandle", pv.Spec.CSI.VolumeHandle)
	return nil
}

// accessibility asks for the volume to be reachable from the node the scheduler picked
// (WaitForFirstConsumer): the node's values of the topology keys the driver registered in
// the node's CSINode. Without a selected node the driver chooses.
func (p *provisioner) accessibility(node *v1.Node) (*csi.TopologyRequirement, error) {
	if node == nil {
		return nil, nil
	}
	csiNode, err := p.csiNodes.Get(node.Name)
	if err != nil {
		return nil, fmt.Errorf("CSINode of the selected node %s: %w", node.Name, err)
	}
	for _, d := range csiNode.Spec.Drivers {
		if d.Name != p.driver {
			continue
		}
		if len(d.TopologyKeys) == 0 {
			return nil, nil
		}
		segments := map[string]string{}
		for _, key := range d.TopologyKeys {
			value, ok := node.Labels[key]
			if !ok {
				return nil, fmt.Errorf("the selected node %s has no label %s, a topology key of driver %s", node.Name, key, p.driver)
			}
			segments[key] = value
		}
		t := &csi.Topology{Segments: segments}
		return &csi.TopologyRequirement{Requisite: []*csi.Topology{t}, Preferred: []*csi.Topology{t}}, nil
	}
	return nil, fmt.Errorf("driver %s is not registered on the selected node %s (not in its CSINode)", p.driver, node.Name)
}
