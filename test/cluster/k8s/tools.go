//go:build tools

// Package tools records the Kubernetes commands that test/cluster/build builds
// from this wrapper module, so `go mod tidy` keeps their dependencies: the
// control plane, kubectl, and the kubelet and kube-proxy of `up --real-node`.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
