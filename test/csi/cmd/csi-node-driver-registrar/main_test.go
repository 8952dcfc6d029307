package main

import (
	"strings"
	"testing"

	"csi-operator/test/csi/internal/fixturecli/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

func TestCommandLine(t *testing.T) {
	all := []string{"--csi-address=/csi/csi.sock", "--kubelet-registration-path", "/var/lib/kubelet/plugins/x/csi.sock",
		"--plugin-registration-path=/registration", "--http-endpoint=:9809", "--health-port=0", "--timeout=2s", "--v=5"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"--help"}, 0, "TEST FIXTURE"},
		{"unknown flag", []string{"--kubelet-registration-path=/k", "--mode=registration"}, 2, "flag provided but not defined: -mode"},
		{"missing kubelet path", nil, 2, "--kubelet-registration-path is required"},
		{"both health flags", []string{"--kubelet-registration-path=/k", "--http-endpoint=:9809", "--health-port=9809"}, 2, "only one of"},
		{"every flag accepted, stray argument", append(all, "extra"), 2, "unexpected arguments"},
	}
	for _, tc := range cases {
		code, out := clitest.Run(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, output %q; want exit %d containing %q", tc.name, code, out, tc.code, tc.want)
		}
	}
}
