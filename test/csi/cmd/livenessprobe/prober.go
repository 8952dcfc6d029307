package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"

	"csi-operator/test/csi/internal/csiconn"
	"csi-operator/test/csi/internal/fixturecli"
)

// prober answers health checks by probing the CSI driver over one reused connection.
type prober struct {
	address string
	timeout time.Duration

	mu   sync.Mutex
	conn *grpc.ClientConn // nil until the driver first answered
}

func (p *prober) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), p.timeout)
	defer cancel()
	if err := p.probe(ctx); err != nil {
		log.Printf("health check failed: %v", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if fixturecli.V(4) {
		log.Printf("health check ok")
	}
	fmt.Fprint(w, "ok")
}

// probe connects on first use (the connection reconnects by itself if the driver restarts)
// and calls Identity.Probe.
func (p *prober) probe(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		conn, err := csiconn.Dial(ctx, p.address, p.timeout)
		if err != nil {
			return err
		}
		p.conn = conn
	}
	return csiconn.Probe(ctx, p.conn)
}

func (p *prober) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		p.conn.Close()
	}
}
