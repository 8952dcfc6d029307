package main

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseMountInfo(t *testing.T) {
	const text = `22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw,lowerdir=/l
36 22 98:0 /vol /var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/my\040vol/mount ro,nosuid master:1 - ext4 /dev/root rw
37 22 98:0 /a /back\134slash\011tab rw shared:2 - ext4 /dev/root rw
`
	mounts, err := parseMountInfo(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(mounts) != 3 {
		t.Fatalf("parsed %d mounts, want 3", len(mounts))
	}
	if got, want := mounts[1].mountPoint, "/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/my vol/mount"; got != want {
		t.Errorf("mount point = %q, want %q", got, want)
	}
	if !mounts[1].readOnly() || mounts[0].readOnly() {
		t.Errorf("read-only flags wrong: %+v", mounts)
	}
	if mounts[0].fsType != "overlay" || mounts[1].fsType != "ext4" {
		t.Errorf("file system types = %q, %q; want overlay, ext4", mounts[0].fsType, mounts[1].fsType)
	}
	if got, want := mounts[2].mountPoint, "/back\\slash\ttab"; got != want {
		t.Errorf("mount point = %q, want %q", got, want)
	}
	if _, err := parseMountInfo(strings.NewReader("1 2 3\n")); err == nil {
		t.Error("a truncated line must be an error")
	}
}

func TestKeyLockSerializesPerKey(t *testing.T) {
	k := newKeyLock()
	unlock := k.lock("vol-1")
	otherDone := make(chan struct{})
	go func() { k.lock("vol-2")(); close(otherDone) }()
	select {
	case <-otherDone:
	case <-time.After(5 * time.Second):
		t.Fatal("a different key was blocked")
	}

	var wg sync.WaitGroup
	acquired := make(chan struct{})
	wg.Add(1)
	go func() { defer wg.Done(); k.lock("vol-1")(); close(acquired) }()
	select {
	case <-acquired:
		t.Fatal("the same key was locked twice at once")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	wg.Wait()
	if len(k.locks) != 0 {
		t.Errorf("%d locks left in the map after all were released", len(k.locks))
	}
}
