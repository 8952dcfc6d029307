package sidecar

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"k8s.io/klog/v2"
)

// Spec describes one stand-in sidecar binary.
type Spec struct {
	// Name is the binary's name, for example "csi-attacher".
	Name string
	// Upstream names the kubernetes-csi sidecar it stands in for, for example "external-attacher".
	Upstream string
	// Summary says in a sentence or two what this stand-in does (and does not do).
	Summary string
	// LeasePrefix is prepended to the driver name to form the leader-election Lease name.
	LeasePrefix string
	// AddFlags registers the sidecar's own flags; nil if it has none.
	AddFlags func(fs *flag.FlagSet)
	// Run runs the controller until ctx ends; it runs only while leading when
	// --leader-election is set.
	Run func(ctx context.Context, env *Env) error
}

// Options holds the flags every sidecar accepts.
type Options struct {
	CSIAddress     string
	HTTPEndpoint   string
	Kubeconfig     string
	Timeout        time.Duration
	LeaderElection LeaderElection
}

// LeaderElection holds the --leader-election* flags.
type LeaderElection struct {
	Enabled       bool
	Namespace     string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// Parse parses args (without the program name) into the common options and the flags
// spec.AddFlags registered. It returns flag.ErrHelp for -h/--help and an error for an unknown
// flag, a malformed value or a stray argument; the usage text has then been written to out.
func Parse(spec Spec, args []string, out io.Writer) (*Options, error) {
	fs := flag.NewFlagSet(spec.Name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { usage(fs, spec) }
	opts := &Options{}
	fs.StringVar(&opts.CSIAddress, "csi-address", "/run/csi/socket", "the CSI driver's unix socket (a path or unix:///path)")
	fs.StringVar(&opts.HTTPEndpoint, "http-endpoint", "", "HOST:PORT serving /healthz/leader-election and /metrics; empty: no HTTP server")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "kubeconfig file for running outside a cluster; empty: the in-cluster service account")
	fs.DurationVar(&opts.Timeout, "timeout", 15*time.Second, "timeout of each call to the CSI driver")
	le := &opts.LeaderElection
	fs.BoolVar(&le.Enabled, "leader-election", false, "run the controller only while holding a coordination.k8s.io Lease")
	fs.StringVar(&le.Namespace, "leader-election-namespace", "", "namespace of the Lease; empty: $POD_NAMESPACE, else the service account's namespace")
	fs.DurationVar(&le.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "how long non-leaders wait before trying to take the Lease over")
	fs.DurationVar(&le.RenewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader retries renewing before giving up (and exiting)")
	fs.DurationVar(&le.RetryPeriod, "leader-election-retry-period", 5*time.Second, "pause between two attempts to acquire or renew the Lease")
	klog.InitFlags(fs)
	if spec.AddFlags != nil {
		spec.AddFlags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments: %q", fs.Args())
		fmt.Fprintf(out, "%s: %v\n", spec.Name, err)
		fs.Usage()
		return nil, err
	}
	return opts, nil
}

func usage(fs *flag.FlagSet, spec Spec) {
	out := fs.Output()
	fmt.Fprintf(out, "%s: csi-operator TEST FIXTURE, a stand-in for the kubernetes-csi %s\n", spec.Name, spec.Upstream)
	fmt.Fprintf(out, "(written for csi-operator's tests; not the upstream code).\n\n%s\n\nFlags:\n", spec.Summary)
	fs.PrintDefaults()
}

// banner is the first log line of every stand-in.
func banner(spec Spec, args []string) string {
	return fmt.Sprintf("csi-operator TEST FIXTURE %s starting: a stand-in for the kubernetes-csi %s, not the upstream program; args: %q",
		spec.Name, spec.Upstream, args)
}
