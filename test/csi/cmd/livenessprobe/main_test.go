package main

import (
	"strings"
	"testing"

	"csi-operator/test/csi/internal/fixturecli/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

func TestCommandLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"-h"}, 0, "TEST FIXTURE"},
		{"unknown flag", []string{"--metrics-address=:8080"}, 2, "flag provided but not defined: -metrics-address"},
		{"every flag accepted, no port", []string{"--csi-address=/csi/csi.sock", "--health-port", "0", "--http-endpoint=",
			"--probe-timeout=3s", "--v=5"}, 2, "--health-port must be positive"},
		{"stray argument", []string{"extra"}, 2, "unexpected arguments"},
	}
	for _, tc := range cases {
		code, out := clitest.Run(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, output %q; want exit %d containing %q", tc.name, code, out, tc.code, tc.want)
		}
	}
}
