package sidecar

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func testSpec(workers *int) Spec {
	return Spec{
		Name:     "csi-test",
		Upstream: "external-test",
		Summary:  "A test sidecar.",
		AddFlags: func(fs *flag.FlagSet) { fs.IntVar(workers, "worker-threads", 1, "workers") },
	}
}

func TestParseAcceptsTheRenderedFlags(t *testing.T) {
	var workers int
	opts, err := Parse(testSpec(&workers), []string{
		"--csi-address=/csi/csi.sock", "--http-endpoint=:8080", "--leader-election",
		"--leader-election-lease-duration=137s", "--leader-election-renew-deadline=107s",
		"--leader-election-retry-period=26s", "--worker-threads=7", "--v=5", "--timeout=1m",
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{CSIAddress: "/csi/csi.sock", HTTPEndpoint: ":8080", Timeout: time.Minute,
		LeaderElection: LeaderElection{Enabled: true, LeaseDuration: 137 * time.Second,
			RenewDeadline: 107 * time.Second, RetryPeriod: 26 * time.Second}}
	if *opts != want || workers != 7 {
		t.Errorf("got %+v workers=%d, want %+v workers=7", *opts, workers, want)
	}
}

func TestParseDefaults(t *testing.T) {
	var workers int
	opts, err := Parse(testSpec(&workers), nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	le := opts.LeaderElection
	if opts.Timeout != 15*time.Second || le.Enabled || le.LeaseDuration != 15*time.Second ||
		le.RenewDeadline != 10*time.Second || le.RetryPeriod != 5*time.Second || workers != 1 {
		t.Errorf("defaults: %+v workers=%d", *opts, workers)
	}
}

func TestParseRejectsBadCommandLines(t *testing.T) {
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"--leader-election-lease-duration=soon"},
		{"--csi-address=/csi/csi.sock", "stray"},
	} {
		var workers int
		var out bytes.Buffer
		_, err := Parse(testSpec(&workers), args, &out)
		if err == nil || errors.Is(err, flag.ErrHelp) {
			t.Errorf("Parse(%q): err = %v, want a usage error", args, err)
		}
		if !strings.Contains(out.String(), "TEST FIXTURE") {
			t.Errorf("Parse(%q) printed no usage naming the test fixture: %q", args, out.String())
		}
	}
}

func TestMainExitStatus(t *testing.T) {
	var workers int
	if got := Main(testSpec(&workers), []string{"--no-such-flag"}); got != 2 {
		t.Errorf("unknown flag: exit status %d, want 2", got)
	}
	if got := Main(testSpec(&workers), []string{"--help"}); got != 0 {
		t.Errorf("--help: exit status %d, want 0", got)
	}
}

func TestLeaseName(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"", "hostpath.csi.k8s.io"}:                          "hostpath-csi-k8s-io",
		{"external-attacher-leader-", "hostpath.csi.k8s.io"}: "external-attacher-leader-hostpath-csi-k8s-io",
		{"external-resizer-", "example.com/disk"}:            "external-resizer-example-com-disk",
		{"", "ends.with."}:                                   "ends-with-X",
	} {
		if got := LeaseName(in[0], in[1]); got != want {
			t.Errorf("LeaseName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}
