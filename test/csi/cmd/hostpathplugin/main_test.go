package main

import (
	"strings"
	"testing"

	"csi-operator/test/csi/internal/fixturecli/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

func TestCommandLine(t *testing.T) {
	all := []string{"--drivername=x.csi.test", "--endpoint", "unix:///tmp/never.sock", "--nodeid=n1",
		"--v=5", "--statedir=/tmp/never", "--maxvolumespernode", "3"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"-h"}, 0, "TEST FIXTURE"},
		{"unknown flag", []string{"--nodeid=n1", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{"missing nodeid", nil, 2, "--nodeid is required"},
		{"every flag accepted, stray argument", append(all, "extra"), 2, "unexpected arguments"},
		{"bad int", []string{"--nodeid=n1", "--maxvolumespernode=many"}, 2, "invalid value"},
	}
	for _, tc := range cases {
		code, out := clitest.Run(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, output %q; want exit %d containing %q", tc.name, code, out, tc.code, tc.want)
		}
	}
}
