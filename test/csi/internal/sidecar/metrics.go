package sidecar

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Metrics counts the CSI calls a sidecar made, by method and result (gRPC status code).
type Metrics struct {
	mu    sync.Mutex
	calls map[callKey]uint64
}

type callKey struct{ method, code string }

func (m *Metrics) count(method string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == nil {
		m.calls = map[callKey]uint64{}
	}
	m.calls[callKey{method, status.Code(err).String()}]++
}

// write prints the counters in the Prometheus text format.
func (m *Metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]callKey, 0, len(m.calls))
	for k := range m.calls {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b callKey) int {
		return cmp.Or(cmp.Compare(a.method, b.method), cmp.Compare(a.code, b.code))
	})
	fmt.Fprintln(w, "# HELP csi_sidecar_operations_total CSI calls made by this csi-operator test-fixture sidecar, by method and gRPC status code.")
	fmt.Fprintln(w, "# TYPE csi_sidecar_operations_total counter")
	for _, k := range keys {
		fmt.Fprintf(w, "csi_sidecar_operations_total{method_name=%q,grpc_status_code=%q} %d\n", k.method, k.code, m.calls[k])
	}
}

// meteredConn bounds every unary CSI call by timeout and counts it in metrics.
type meteredConn struct {
	conn    grpc.ClientConnInterface
	timeout time.Duration
	metrics *Metrics
}

func (c *meteredConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	err := c.conn.Invoke(ctx, method, args, reply, opts...)
	c.metrics.count(method, err)
	return err
}

// NewStream passes streams through unchanged: the CSI services have no streaming calls.
func (c *meteredConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.conn.NewStream(ctx, desc, method, opts...)
}
