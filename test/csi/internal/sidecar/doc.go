// Package sidecar is the shared core of csi-operator's TEST FIXTURE stand-ins for the upstream
// kubernetes-csi controller sidecars (external-provisioner, external-attacher, external-resizer,
// external-snapshotter, external-health-monitor-controller), which cannot be built here.
// Written for csi-operator's tests from the Kubernetes and CSI APIs; it is not upstream code.
//
// It gives every stand-in the same process life: the common command-line flags (an unknown
// flag is an error, exit status 2), the Kubernetes client (in-cluster or --kubeconfig), the
// connection to the driver's CSI socket and its name (GetPluginInfo), real leader election on
// a coordination.k8s.io Lease, the --http-endpoint (/healthz/leader-election and /metrics) and
// a clean exit on SIGTERM.
package sidecar
