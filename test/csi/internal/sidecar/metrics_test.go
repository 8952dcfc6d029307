package sidecar

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"csi-operator/test/csi/internal/sidecar/fakedriver"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestMetricsCountCSICallsByResult(t *testing.T) {
	driver := &fakedriver.Controller{Volume: &csi.Volume{VolumeId: "v1"}}
	metrics := &Metrics{}
	conn := &meteredConn{conn: fakedriver.Serve(t, "test.csi.k8s.io", driver), timeout: 5 * time.Second, metrics: metrics}
	client := csi.NewControllerClient(conn)
	ctx := context.Background()
	for range 2 {
		if _, err := client.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1"}); err != nil {
			t.Fatal(err)
		}
	}
	driver.FailWith(status.Error(codes.ResourceExhausted, "full"))
	if _, err := client.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-2"}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("err = %v, want ResourceExhausted", err)
	}

	code, body := get(t, handler(newElectionHealth(), metrics), "/metrics")
	for _, want := range []string{
		"# TYPE csi_sidecar_operations_total counter",
		`csi_sidecar_operations_total{method_name="/csi.v1.Controller/CreateVolume",grpc_status_code="OK"} 2`,
		`csi_sidecar_operations_total{method_name="/csi.v1.Controller/CreateVolume",grpc_status_code="ResourceExhausted"} 1`,
	} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/metrics: %d %q lacks %q", code, body, want)
		}
	}
}

func TestLeaderElectionHealthWithoutElection(t *testing.T) {
	if code, body := get(t, handler(newElectionHealth(), &Metrics{}), "/healthz/leader-election"); code != http.StatusOK {
		t.Errorf("/healthz/leader-election without leader election: %d %q, want 200", code, body)
	}
}
