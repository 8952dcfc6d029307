// Command cri-cleanup stops and removes every pod sandbox and container of a
// CRI runtime (the test node's own containerd), the way the kubelet would:
// StopPodSandbox kills the containers, tears the pod network down (CNI DEL:
// veth, IP address, masquerade rules) and unmounts the sandbox's /dev/shm;
// RemovePodSandbox removes the containers and their state. test/cluster/down
// runs it after stopping the kubelet and before stopping containerd, so no
// container, shim or network leftover outlives the node.
//
//	cri-cleanup --endpoint unix:///path/to/containerd.sock [--timeout 60s]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	endpoint := flag.String("endpoint", "", "CRI endpoint, unix:///path/to.sock (required)")
	timeout := flag.Duration("timeout", 60*time.Second, "overall time limit")
	flag.Parse()
	if *endpoint == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: cri-cleanup --endpoint unix:///path/to.sock [--timeout 60s]")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *endpoint); err != nil {
		fmt.Fprintf(os.Stderr, "cri-cleanup: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, endpoint string) error {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)

	pods, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("ListPodSandbox: %w", err)
	}
	var failed int
	for _, p := range pods.Items {
		what := fmt.Sprintf("pod sandbox %s/%s (%.13s)", p.GetMetadata().GetNamespace(), p.GetMetadata().GetName(), p.Id)
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-cleanup: stop %s: %v\n", what, err)
			failed++
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-cleanup: remove %s: %v\n", what, err)
			failed++
			continue
		}
		fmt.Fprintf(os.Stderr, "cri-cleanup: removed %s\n", what)
	}
	// Containers whose sandbox is already gone (normally none).
	ctrs, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return fmt.Errorf("ListContainers: %w", err)
	}
	for _, c := range ctrs.Containers {
		if _, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.Id, Timeout: 0}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-cleanup: stop container %.13s: %v\n", c.Id, err)
		}
		if _, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-cleanup: remove container %.13s: %v\n", c.Id, err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d sandbox(es)/container(s) could not be removed", failed)
	}
	return nil
}
