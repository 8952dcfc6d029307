// Command csi-provisioner is csi-operator's TEST FIXTURE stand-in for the kubernetes-csi
// external-provisioner (which cannot be built here); it is not the upstream program.
//
// Built on sigs.k8s.io/sig-storage-lib-external-provisioner's ProvisionController under the
// driver's name: for each PersistentVolumeClaim that kube-controller-manager hands to the
// driver (annotation volume.kubernetes.io/storage-provisioner) it calls CreateVolume and
// creates the PersistentVolume; for each released PersistentVolume of the driver with the
// Delete reclaim policy it calls DeleteVolume, and the library's finalizer keeps the
// PersistentVolume until that succeeded. Not implemented: secrets, snapshots and clones as
// data sources, capacity tracking (CSIStorageCapacity), CSI migration.
package main

import (
	"context"
	"flag"
	"os"

	"csi-operator/test/csi/internal/sidecar"
)

func main() {
	os.Exit(sidecar.Main(newSpec(), os.Args[1:]))
}

// options are the provisioner's own flags.
type options struct {
	workers             int
	volumeNamePrefix    string
	extraCreateMetadata bool
	defaultFSType       string
	enableCapacity      bool
	capacityOwnerLevel  int
}

func newSpec() sidecar.Spec {
	o := &options{}
	return sidecar.Spec{
		Name:     "csi-provisioner",
		Upstream: "external-provisioner",
		Summary: "Provisions and deletes the volumes of its driver's StorageClasses through CreateVolume /\n" +
			"DeleteVolume. No secrets, no data sources, no capacity tracking, no CSI migration.",
		LeasePrefix: "", // the Lease is named after the driver alone, like upstream
		AddFlags: func(fs *flag.FlagSet) {
			fs.IntVar(&o.workers, "worker-threads", 4, "number of claims and volumes processed at once")
			fs.StringVar(&o.volumeNamePrefix, "volume-name-prefix", "pvc", "prefix of the names of the PersistentVolumes (and CSI volumes) created: <prefix>-<claim UID>")
			fs.BoolVar(&o.extraCreateMetadata, "extra-create-metadata", false, "pass csi.storage.k8s.io/pvc/name, pvc/namespace and pv/name as CreateVolume parameters")
			fs.StringVar(&o.defaultFSType, "default-fstype", "", "fsType when the StorageClass has no csi.storage.k8s.io/fstype parameter; empty: none")
			fs.BoolVar(&o.enableCapacity, "enable-capacity", false, "accepted; capacity tracking is NOT implemented by this stand-in")
			fs.IntVar(&o.capacityOwnerLevel, "capacity-ownerref-level", 1, "accepted; unused (no capacity tracking)")
		},
		Run: func(ctx context.Context, env *sidecar.Env) error {
			return run(ctx, env, o)
		},
	}
}
