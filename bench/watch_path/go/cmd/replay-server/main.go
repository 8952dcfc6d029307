// Command replay-server is the API server of the watch path benchmark (bench/watch-path): over
// TLS (HTTP/1.1 and HTTP/2, by ALPN), it serves a pods informer a recorded stream of pod watch
// events at a fixed rate, the same bytes to whichever client connects.
//
//	replay-server -stream stream.jsonl -rate 1000 -dir DIR
//
// At start it makes a self-signed certificate for 127.0.0.1 and writes DIR/ca.pem and
// DIR/kubeconfig (server, certificate-authority-data, a token nobody checks), the kubeconfig
// last: its existence means the server listens. It serves
//   - GET /api/v1/pods: an empty PodList at resourceVersion 1 (labelSelector, limit, ... ignored);
//   - GET /api/v1/pods?watch=true: to the first watch request, each line of the stream file (one
//     watch event) written and flushed on its own, -rate events per second (0: as fast as the
//     client reads), then nothing until the client goes; to every later watch (a re-watch),
//     nothing until the client goes. A streaming list (sendInitialEvents=true) is refused with a
//     422, as by an API server without it: the client lists instead;
//   - /version, /api and /apis, minimally.
//
// Each request is logged to stderr with its protocol (HTTP/1.1 or HTTP/2.0), TLS version and cipher
// suite.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

func main() {
	streamPath := flag.String("stream", "", "the recorded stream: one JSON watch event per line")
	rate := flag.Float64("rate", 1000, "events per second; 0: as fast as the client reads")
	dir := flag.String("dir", "", "where to write ca.pem and kubeconfig")
	addr := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	log.SetFlags(log.Lmicroseconds)
	if *streamPath == "" || *dir == "" {
		log.Fatal("replay-server: -stream and -dir are required")
	}
	events, err := readStream(*streamPath)
	if err != nil {
		log.Fatalf("replay-server: %v", err)
	}
	cert, caPEM, err := selfSigned()
	if err != nil {
		log.Fatalf("replay-server: certificate: %v", err)
	}
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("replay-server: %v", err)
	}
	srv := &server{events: events, rate: *rate}
	httpServer := &http.Server{
		Handler:   srv,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		ErrorLog:  log.Default(),
	}
	httpServer.Protocols = new(http.Protocols)
	httpServer.Protocols.SetHTTP1(true)
	httpServer.Protocols.SetHTTP2(true)
	url := "https://" + listener.Addr().String()
	if err := writeFiles(*dir, url, caPEM); err != nil {
		log.Fatalf("replay-server: %v", err)
	}
	log.Printf("serving %d events at %g/s on %s", len(events), *rate, url)
	log.Fatal(httpServer.ServeTLS(listener, "", ""))
}

// readStream reads every line of the file, each with its newline (written in one piece: one
// HTTP/1.1 chunk or HTTP/2 DATA frame per event); the server's own reading is then no part of
// what the clients wait for.
func readStream(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var events [][]byte
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			line, data = append(data[:len(data):len(data)], '\n'), nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			events = append(events, line)
		}
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%s: no events", path)
	}
	return events, nil
}

type server struct {
	events  [][]byte
	rate    float64
	watches atomic.Int64
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log.Printf("%s %s %s %s %s", r.Method, r.URL.RequestURI(), r.Proto, tls.VersionName(r.TLS.Version),
		tls.CipherSuiteName(r.TLS.CipherSuite))
	q := r.URL.Query()
	switch {
	case r.Method != http.MethodGet:
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "only GET is served")
	case r.URL.Path == "/api/v1/pods" && (q.Get("watch") == "true" || q.Get("watch") == "1"):
		if q.Get("sendInitialEvents") == "true" {
			status(w, http.StatusUnprocessableEntity, "Invalid",
				"sendInitialEvents: Forbidden: this server serves no streaming lists")
			return
		}
		s.watch(w, r)
	case r.URL.Path == "/api/v1/pods":
		writeJSON(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	case r.URL.Path == "/version":
		writeJSON(w, `{"major":"1","minor":"36","gitVersion":"v1.36.0-replay","platform":"linux/amd64"}`)
	case r.URL.Path == "/api":
		writeJSON(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`)
	case r.URL.Path == "/apis":
		writeJSON(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
	case r.URL.Path == "/api/v1":
		writeJSON(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get","list","watch"]}]}`)
	default:
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
	}
}

// watch streams the recorded events to the first watch of this server's life, paced by rate.
func (s *server) watch(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		status(w, http.StatusInternalServerError, "InternalError", "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	if s.watches.Add(1) == 1 {
		start := time.Now()
		for i, event := range s.events {
			if s.rate > 0 {
				due := start.Add(time.Duration(float64(i) / s.rate * float64(time.Second)))
				if wait := time.Until(due); wait > 0 {
					select {
					case <-time.After(wait):
					case <-r.Context().Done():
						log.Printf("client went after %d events", i)
						return
					}
				}
			}
			if _, err := w.Write(event); err != nil {
				log.Printf("client went after %d events: %v", i, err)
				return
			}
			flusher.Flush()
		}
		log.Printf("streamed %d events in %.3f s", len(s.events), time.Since(start).Seconds())
	}
	<-r.Context().Done()
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(body))
}

func status(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`,
		message, reason, code)
}

// selfSigned makes a certificate for 127.0.0.1 that is its own CA.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "replay-server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, err
}

// writeFiles writes DIR/ca.pem, then DIR/kubeconfig (renamed into place: whoever sees it sees it
// whole).
func writeFiles(dir, url string, caPEM []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), caPEM, 0o644); err != nil {
		return err
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: replay
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: bench
  user:
    token: watch-path-bench
contexts:
- name: replay
  context:
    cluster: replay
    user: bench
current-context: replay
`, url, base64.StdEncoding.EncodeToString(caPEM))
	tmp := filepath.Join(dir, "kubeconfig.tmp")
	if err := os.WriteFile(tmp, []byte(kubeconfig), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "kubeconfig"))
}
