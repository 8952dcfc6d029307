// Command hostpathplugin is csi-operator's TEST FIXTURE stand-in for the kubernetes-csi
// hostpath driver, which cannot be built here. It is written from the CSI specification (not
// copied from upstream) and serves the Identity, Controller and Node services in one binary:
// a volume is a directory under --statedir, published into pods with real bind mounts, or
// (mount mode fuse) with a FUSE mount served by this process, which breaks when it exits.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"csi-operator/test/csi/internal/csiconn"
	"csi-operator/test/csi/internal/fixturecli"
)

// stopGrace bounds how long a graceful stop may wait for calls in flight.
const stopGrace = 10 * time.Second

func main() {
	fixturecli.Setup("hostpathplugin", "A hostpath-style CSI driver (Identity, Controller and Node services) for csi-operator's tests.")
	var d driver
	flag.StringVar(&d.name, "drivername", "hostpath.csi.k8s.io", "CSI driver name reported by GetPluginInfo")
	endpoint := flag.String("endpoint", "unix:///csi/csi.sock", "CSI endpoint (unix socket) to serve on")
	flag.StringVar(&d.nodeID, "nodeid", "", "node ID reported by NodeGetInfo and used as this node's topology (required)")
	stateDir := flag.String("statedir", "/csi-data-dir", "directory holding the volumes' data directories and records")
	flag.Int64Var(&d.maxVolumesPerNode, "maxvolumespernode", 0, "max_volumes_per_node reported by NodeGetInfo (0: no limit)")
	fixturecli.Parse()
	if d.nodeID == "" {
		fixturecli.UsageError("--nodeid is required")
	}
	if err := run(context.Background(), &d, *endpoint, *stateDir); err != nil {
		log.Fatal(err)
	}
}

// run serves the driver on endpoint until SIGTERM or SIGINT, then stops and removes the socket.
// FUSE mounts it serves are left mounted: they break when the process exits, as those of a
// FUSE-based driver do.
func run(ctx context.Context, d *driver, endpoint, stateDir string) error {
	st, err := openStore(stateDir)
	if err != nil {
		return err
	}
	d.store = st
	d.locks = newKeyLock()
	d.fuse = newFuseMounts()

	l, err := csiconn.ListenUnix(endpoint)
	if err != nil {
		return err
	}
	socket, _ := csiconn.SocketPath(endpoint) // valid: ListenUnix accepted it
	defer os.Remove(socket)

	srv := newServer(d)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		log.Printf("stopping: %v", context.Cause(ctx))
		timer := time.AfterFunc(stopGrace, srv.Stop)
		defer timer.Stop()
		srv.GracefulStop()
	}()
	log.Printf("serving driver %q for node %q on %s, state in %s", d.name, d.nodeID, socket, stateDir)
	return srv.Serve(l)
}
