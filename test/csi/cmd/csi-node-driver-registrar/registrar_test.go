package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"csi-operator/test/csi/internal/fakecsi"
	"csi-operator/test/csi/internal/httpserve"
)

const (
	testDriver   = "registrar.csi.test"
	kubeletPath  = "/var/lib/kubelet/plugins/registrar.csi.test/csi.sock"
	waitDeadline = 15 * time.Second
)

// get returns the status code and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitDeadline); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestRegistrationWithAFakeKubelet(t *testing.T) {
	dir := t.TempDir()
	csiSocket := filepath.Join(dir, "csi", "csi.sock")
	regDir := filepath.Join(dir, "registration")
	health, err := httpserve.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	healthz := "http://" + health.Addr().String() + "/healthz"
	failures := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{
			csiAddress:              "unix://" + csiSocket,
			kubeletRegistrationPath: kubeletPath,
			registrationDir:         regDir,
			timeout:                 time.Second,
			health:                  health,
			onFailure:               func(err error) { failures <- err },
		})
	}()
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { stop() })

	// The registrar must wait for the driver, which starts late.
	time.Sleep(300 * time.Millisecond)
	regSocket := filepath.Join(regDir, testDriver+"-reg.sock")
	if _, err := os.Stat(regSocket); !os.IsNotExist(err) {
		t.Fatalf("registration socket exists before the driver answered (stat: %v)", err)
	}
	fakecsi.Serve(t, csiSocket, &fakecsi.Identity{Name: testDriver})
	waitFor(t, "the registration socket", func() bool { _, err := os.Stat(regSocket); return err == nil })

	if code, body := get(t, healthz); code != http.StatusInternalServerError || !strings.Contains(body, "not yet reported") {
		t.Errorf("/healthz before registration = %d %q, want 500 'not yet reported'", code, body)
	}

	conn, err := grpc.NewClient("unix://"+regSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kubelet := registration.NewRegistrationClient(conn)
	callCtx, callCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer callCancel()
	info, err := kubelet.GetInfo(callCtx, &registration.InfoRequest{})
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	if info.GetType() != "CSIPlugin" || info.GetName() != testDriver || info.GetEndpoint() != kubeletPath ||
		strings.Join(info.GetSupportedVersions(), ",") != "1.0.0" {
		t.Errorf("GetInfo = %v", info)
	}

	if _, err := kubelet.NotifyRegistrationStatus(callCtx, &registration.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatalf("NotifyRegistrationStatus(registered): %v", err)
	}
	if code, body := get(t, healthz); code != http.StatusOK {
		t.Errorf("/healthz after registration = %d %q, want 200", code, body)
	}

	if _, err := kubelet.NotifyRegistrationStatus(callCtx, &registration.RegistrationStatus{Error: "driver name clash"}); err != nil {
		t.Fatalf("NotifyRegistrationStatus(failed): %v", err)
	}
	select {
	case err := <-failures:
		if err.Error() != "driver name clash" {
			t.Errorf("failure handler got %v, want the kubelet's error", err)
		}
	case <-time.After(waitDeadline):
		t.Fatal("a failed registration did not reach the failure handler")
	}
	if code, body := get(t, healthz); code != http.StatusInternalServerError || !strings.Contains(body, "driver name clash") {
		t.Errorf("/healthz after a failed registration = %d %q, want 500 with the error", code, body)
	}

	if err := stop(); err != nil {
		t.Errorf("run after stop: %v", err)
	}
	if _, err := os.Stat(regSocket); !os.IsNotExist(err) {
		t.Errorf("registration socket left after stop (stat: %v)", err)
	}
}

func TestHealthzWithoutSocket(t *testing.T) {
	r := &registrar{driverName: testDriver, socket: filepath.Join(t.TempDir(), "missing-reg.sock")}
	r.registered = true
	if err := r.health(); err == nil || !strings.Contains(err.Error(), "registration socket") {
		t.Errorf("health without a socket = %v, want a registration socket error", err)
	}
}
