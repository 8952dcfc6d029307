package httpserve

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

func TestAddr(t *testing.T) {
	cases := []struct {
		endpoint string
		port     int
		want     string
	}{
		{"", 0, ""},
		{"", 9808, ":9808"},
		{":9809", 9808, ":9809"},
		{"127.0.0.1:8080", 0, "127.0.0.1:8080"},
	}
	for _, tc := range cases {
		if got := Addr(tc.endpoint, tc.port); got != tc.want {
			t.Errorf("Addr(%q, %d) = %q, want %q", tc.endpoint, tc.port, got, tc.want)
		}
	}
}

func TestServeUntilCancelled(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, mux) }()

	resp, err := http.Get("http://" + l.Addr().String() + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("GET /healthz = %d %q, want 200 ok", resp.StatusCode, body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the context was cancelled")
	}
	if _, err := http.Get("http://" + l.Addr().String() + "/healthz"); err == nil {
		t.Error("the server still answers after shutdown")
	}
}
