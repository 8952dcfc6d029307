package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"csi-operator/test/csi/internal/fakecsi"
)

// check runs one health check against p and returns the status code and body.
func check(p *prober) (int, string) {
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestHealthzFollowsTheDriver(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "csi.sock")
	p := &prober{address: "unix://" + socket, timeout: 500 * time.Millisecond}
	defer p.close()

	if code, body := check(p); code != http.StatusInternalServerError || !strings.Contains(body, "not reachable") {
		t.Errorf("no driver: %d %q, want 500 'not reachable'", code, body)
	}

	id := &fakecsi.Identity{Name: "probe.csi.test"}
	stop := fakecsi.Serve(t, socket, id)
	if code, body := check(p); code != http.StatusOK || body != "ok" {
		t.Errorf("driver up, ready unset: %d %q, want 200 ok", code, body)
	}
	conn := p.conn

	id.SetReady(false)
	if code, body := check(p); code != http.StatusInternalServerError || !strings.Contains(body, "not ready") {
		t.Errorf("driver not ready: %d %q, want 500 'not ready'", code, body)
	}

	stop()
	if code, _ := check(p); code != http.StatusInternalServerError {
		t.Errorf("driver stopped: %d, want 500", code)
	}

	id.SetReady(true)
	fakecsi.Serve(t, socket, id)
	deadline := time.Now().Add(15 * time.Second)
	for code, body := check(p); code != http.StatusOK; code, body = check(p) {
		if time.Now().After(deadline) {
			t.Fatalf("driver restarted: still %d %q", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p.conn != conn {
		t.Error("the prober opened a new connection instead of reusing the first one")
	}
}
