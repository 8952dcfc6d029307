package main

import (
	"context"
	"log"
	"path"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"csi-operator/test/csi/internal/fixturecli"
)

// driver holds what the three CSI services share.
type driver struct {
	name              string
	nodeID            string
	maxVolumesPerNode int64
	store             *store
	locks             *keyLock
	fuse              *fuseMounts // FUSE servers of fuse-mode volumes, by target path
}

type identityServer struct {
	csi.UnimplementedIdentityServer
	*driver
}

type controllerServer struct {
	csi.UnimplementedControllerServer
	*driver
}

type nodeServer struct {
	csi.UnimplementedNodeServer
	*driver
}

// newServer returns a gRPC server with all three CSI services of d registered.
func newServer(d *driver) *grpc.Server {
	srv := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	csi.RegisterIdentityServer(srv, &identityServer{driver: d})
	csi.RegisterControllerServer(srv, &controllerServer{driver: d})
	csi.RegisterNodeServer(srv, &nodeServer{driver: d})
	return srv
}

// logCalls logs every call: method, volume, result and duration; at --v=4 and above also
// the request and response (secrets removed).
func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := path.Base(info.FullMethod)
	if fixturecli.V(4) {
		log.Printf("%s request: %v", method, withoutSecrets(req))
	}
	start := time.Now()
	resp, err := handler(ctx, req)
	result := "ok"
	if err != nil {
		result = "error " + status.Code(err).String() + ": " + status.Convert(err).Message()
	} else if v, ok := resp.(interface{ GetVolume() *csi.Volume }); ok && v.GetVolume() != nil {
		result = "ok, volume_id=" + v.GetVolume().GetVolumeId()
	}
	log.Printf("%s%s: %s (%v)", method, subject(req), result, time.Since(start).Round(time.Microsecond))
	if err == nil && fixturecli.V(4) {
		log.Printf("%s response: %v", method, resp)
	}
	return resp, err
}

// subject names the volume a request is about, with a leading space; "" for other calls.
func subject(req any) string {
	if r, ok := req.(interface{ GetVolumeId() string }); ok {
		return " volume_id=" + r.GetVolumeId()
	}
	if r, ok := req.(interface{ GetName() string }); ok {
		return " name=" + r.GetName()
	}
	return ""
}

// withoutSecrets returns a copy of a CSI request with its top-level secrets map cleared.
func withoutSecrets(req any) any {
	m, ok := req.(proto.Message)
	if !ok {
		return req
	}
	m = proto.Clone(m)
	msg := m.ProtoReflect()
	if fd := msg.Descriptor().Fields().ByName(protoreflect.Name("secrets")); fd != nil {
		msg.Clear(fd)
	}
	return m
}
