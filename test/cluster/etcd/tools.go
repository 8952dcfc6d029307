//go:build tools

// Package tools records the etcd server command that test/cluster/build builds
// from this wrapper module (`go build go.etcd.io/etcd/server/v3`), so
// `go mod tidy` keeps its dependencies.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
