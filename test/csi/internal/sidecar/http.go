package sidecar

import (
	"net/http"

	"k8s.io/client-go/tools/leaderelection"
)

// handler serves /healthz/leader-election (200 unless this process leads and has failed to
// renew its Lease for too long; always 200 without leader election) and /metrics.
func handler(health *leaderelection.HealthzAdaptor, metrics *Metrics) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz/leader-election", func(w http.ResponseWriter, r *http.Request) {
		if err := health.Check(r); err != nil {
			http.Error(w, "leader election: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		metrics.write(w)
	})
	return mux
}
