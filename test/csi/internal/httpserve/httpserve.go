// Package httpserve serves an HTTP handler until a context ends, for csi-operator's TEST
// FIXTURE stand-ins for the kubernetes-csi sidecars (health and diagnostics endpoints).
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// shutdownGrace bounds how long in-flight requests may take once ctx is done.
const shutdownGrace = 5 * time.Second

// Addr picks the listen address from the two flags the sidecars share: an explicit
// --http-endpoint wins, else --health-port > 0 means ":PORT", else "" (no server).
func Addr(httpEndpoint string, healthPort int) string {
	if httpEndpoint != "" {
		return httpEndpoint
	}
	if healthPort > 0 {
		return ":" + strconv.Itoa(healthPort)
	}
	return ""
}

// Listen opens addr (":PORT" or "HOST:PORT") so that errors show before serving starts.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("HTTP endpoint %q: %w", addr, err)
	}
	return l, nil
}

// Serve serves h on l until ctx is done, then shuts the server down gracefully.
// It returns nil after a shutdown caused by ctx, or the error that stopped the server.
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		err := srv.Shutdown(shutdownCtx)
		if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) {
			return serveErr
		}
		return err
	}
}
