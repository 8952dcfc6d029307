package main

import (
	"bytes"
	"testing"

	"csi-operator/test/csi/internal/sidecar"
)

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	if _, err := sidecar.Parse(newSpec(), []string{"--csi-address=/csi/csi.sock", "--http-endpoint=:8083",
		"--leader-election", "--leader-election-retry-period=3s", "--worker-threads=2", "--extra-create-metadata", "--timeout=1m"}, &out); err != nil {
		t.Errorf("rendered flags rejected: %v\n%s", err, out.String())
	}
	if _, err := sidecar.Parse(newSpec(), []string{"--no-such-flag"}, &out); err == nil {
		t.Error("an unknown flag was accepted")
	}
}
