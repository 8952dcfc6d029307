//go:build tools

// Package tools records the Kubernetes commands that test/cluster/build-oldest builds from
// this wrapper module, so `go mod tidy` keeps their dependencies: the control plane of
// `up --k8s oldest` (kubectl, the kubelet and the rest come from the current version's build).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
