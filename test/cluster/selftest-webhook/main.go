// Command selftest-webhook is a minimal validating admission webhook for
// test/cluster/selftest: it denies objects labelled csiop-selftest/deny=true
// and allows everything else.
//
//	selftest-webhook -listen 127.0.0.1:PORT -cert tls.crt -key tls.key
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
)

type review struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Request    *request  `json:"request,omitempty"`
	Response   *response `json:"response,omitempty"`
}

type request struct {
	UID    string `json:"uid"`
	Object struct {
		Metadata struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	} `json:"object"`
}

type response struct {
	UID     string  `json:"uid"`
	Allowed bool    `json:"allowed"`
	Status  *status `json:"status,omitempty"`
}

type status struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback only)")
	cert := flag.String("cert", "", "TLS certificate file")
	key := flag.String("key", "", "TLS key file")
	flag.Parse()

	http.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	http.HandleFunc("/validate", func(w http.ResponseWriter, r *http.Request) {
		var in review
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad AdmissionReview", http.StatusBadRequest)
			return
		}
		resp := &response{UID: in.Request.UID, Allowed: true}
		if in.Request.Object.Metadata.Labels["csiop-selftest/deny"] == "true" {
			resp.Allowed = false
			resp.Status = &status{Code: http.StatusForbidden, Message: "denied by csiop selftest webhook"}
		}
		log.Printf("review %s name=%s allowed=%v", in.Request.UID, in.Request.Object.Metadata.Name, resp.Allowed)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review{APIVersion: in.APIVersion, Kind: in.Kind, Response: resp})
	})
	log.Printf("listening on https://%s", *listen)
	log.Fatal(http.ListenAndServeTLS(*listen, *cert, *key, nil))
}
