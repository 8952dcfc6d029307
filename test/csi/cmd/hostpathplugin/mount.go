package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mountInfoFile lists the mounts of this process's mount namespace.
const mountInfoFile = "/proc/self/mountinfo"

// mountEntry is the part of a /proc/self/mountinfo line this driver needs.
type mountEntry struct {
	mountPoint string
	options    []string // per-mount options, such as "ro" or "rw"
	fsType     string   // such as "ext4", or "fuse.hostpathplugin" for this driver's FUSE mounts
}

func (m mountEntry) readOnly() bool { return slices.Contains(m.options, "ro") }

// parseMountInfo parses the mountinfo format described in proc(5):
// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue".
func parseMountInfo(r io.Reader) ([]mountEntry, error) {
	var mounts []mountEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			return nil, fmt.Errorf("malformed mountinfo line %q", sc.Text())
		}
		// The optional fields (from the 7th on) end with a lone "-"; the type follows.
		sep := 6 + slices.Index(fields[6:], "-")
		if sep < 6 || sep+1 >= len(fields) {
			return nil, fmt.Errorf("malformed mountinfo line %q", sc.Text())
		}
		mounts = append(mounts, mountEntry{
			mountPoint: unescapeOctal(fields[4]),
			options:    strings.Split(fields[5], ","),
			fsType:     unescapeOctal(fields[sep+1]),
		})
	}
	return mounts, sc.Err()
}

// unescapeOctal undoes the kernel's \NNN escapes of space, tab, newline and backslash.
func unescapeOctal(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountAt returns the topmost mount on path, if any.
func mountAt(path string) (mountEntry, bool, error) {
	path = canonical(path)
	f, err := os.Open(mountInfoFile)
	if err != nil {
		return mountEntry{}, false, err
	}
	defer f.Close()
	mounts, err := parseMountInfo(f)
	if err != nil {
		return mountEntry{}, false, err
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		if mounts[i].mountPoint == path {
			return mounts[i], true, nil
		}
	}
	return mountEntry{}, false, nil
}

// canonical resolves symbolic links in an existing path, as mountinfo shows real paths.
func canonical(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return filepath.Clean(path)
}

// bindMount bind-mounts source onto the existing directory target, read-only if asked.
func bindMount(source, target string, readOnly bool) error {
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount %s on %s: %w", source, target, err)
	}
	if !readOnly {
		return nil
	}
	// A bind mount turns read-only only by a remount. Flags the kernel may have locked on
	// the source mount (nosuid, nodev, ...) must be kept, or the remount is refused.
	var st unix.Statfs_t
	if err := unix.Statfs(target, &st); err != nil {
		return errors.Join(fmt.Errorf("statfs %s: %w", target, err), unmount(target))
	}
	keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC |
		unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
	flags := unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | keep
	if err := unix.Mount("", target, "", flags, ""); err != nil {
		return errors.Join(fmt.Errorf("remount %s read-only: %w", target, err), unmount(target))
	}
	return nil
}

// maxStackedMounts bounds unmount's loop over mounts stacked on one path.
const maxStackedMounts = 16

// unmount removes every mount stacked on path; a path that is not mounted is fine.
func unmount(path string) error {
	for range maxStackedMounts {
		_, mounted, err := mountAt(path)
		if err != nil || !mounted {
			return err
		}
		if err := unix.Unmount(path, 0); err != nil {
			return fmt.Errorf("unmount %s: %w", path, err)
		}
	}
	return fmt.Errorf("unmount %s: still mounted after %d unmounts", path, maxStackedMounts)
}
