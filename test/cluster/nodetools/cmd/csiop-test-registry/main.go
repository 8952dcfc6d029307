// Command csiop-test-registry is a container registry for tests and benchmarks of the real node:
// go-containerregistry's in-memory registry (pkg/registry, the OCI distribution API), serving
// plain HTTP on a loopback address, with every blob sent at a limited rate, so that a pull takes
// the time a pull over a slow link would.
//
//	csiop-test-registry --listen 127.0.0.1:5000 [--rate-kib 4096] [--extra-mib N]
//	                    [--image FILE.tar=REPO:TAG]...
//
// --image loads the one image of a docker-style tarball and pushes it under REPO:TAG (on this
// registry); with --extra-mib N, a layer of N MiB of random bytes goes on top of each first, so
// that the image has content no node has yet (the pull must fetch at least that layer) while
// running the same program. --rate-kib limits each blob response to that many KiB a second
// (0: no limit). It prints "ready" on stdout once every image is pushed, and serves until it is
// signalled. A containerd resolves a localhost registry over plain HTTP without configuration.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// throttled writes at most rate bytes a second, in slices of a tenth of that.
type throttled struct {
	http.ResponseWriter
	rate int64
}

func (t throttled) Write(p []byte) (int, error) {
	slice := t.rate / 10
	if slice < 1 {
		slice = 1
	}
	written := 0
	for len(p) > 0 {
		n := int64(len(p))
		if n > slice {
			n = slice
		}
		m, err := t.ResponseWriter.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		if f, ok := t.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		p = p[n:]
		time.Sleep(time.Duration(n) * time.Second / time.Duration(t.rate))
	}
	return written, nil
}

// limit slows down the responses to blob GETs.
func limit(next http.Handler, rate int64) http.Handler {
	if rate <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
			w = throttled{w, rate}
		}
		next.ServeHTTP(w, r)
	})
}

func push(addr, spec string, extraMiB int64) error {
	file, ref, ok := strings.Cut(spec, "=")
	if !ok {
		return fmt.Errorf("--image %q: want FILE.tar=REPO:TAG", spec)
	}
	img, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	if extraMiB > 0 {
		layer, err := random.Layer(extraMiB<<20, types.DockerLayer)
		if err != nil {
			return err
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			return err
		}
	}
	tag, err := name.NewTag(addr+"/"+ref, name.Insecure)
	if err != nil {
		return fmt.Errorf("--image %q: %w", spec, err)
	}
	return remote.Write(tag, img)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:5000", "address to serve on (loopback)")
	rateKiB := flag.Int64("rate-kib", 0, "KiB a second of each blob response (0: no limit)")
	extraMiB := flag.Int64("extra-mib", 0, "MiB of random bytes added to each image as a layer")
	var images multi
	flag.Var(&images, "image", "FILE.tar=REPO:TAG to push (repeatable)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("csiop-test-registry: ")

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	quiet := log.New(io.Discard, "", 0)
	server := &http.Server{
		Handler:           limit(registry.New(registry.Logger(quiet)), *rateKiB<<10),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		if err := server.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	// The pushes go to the listener directly, unthrottled (only GETs of blobs are slowed).
	for _, spec := range images {
		if err := push(ln.Addr().String(), spec, *extraMiB); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("ready")

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = server.Shutdown(ctx)
}
