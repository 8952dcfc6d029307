// Command mkimage builds a one-layer container image from local files, without
// a registry or a container engine, and writes it as a docker-style tarball
// that `ctr images import` (and `docker load`) accept, with every tag given.
//
//	mkimage -o OUT.tar -t REF [-t REF]... [--base IMAGE.tar] [--entrypoint JSON] [--cmd JSON]
//	        [--user U] [--workdir DIR] [--env K=V]... [--label K=V]...
//	        [--file DEST=SRC]... [--tree DEST=SRCDIR]... [--symlink DEST=TARGET]...
//	        [--dir DEST[=MODE]]...
//
// --base starts from the one image in a docker-style tarball instead of an empty
// image: its layers and configuration are kept, the new layer goes on top, --env
// and --label add to its own, and the other settings replace its only when given
// (a distinct image of the same program, e.g. for an upgrade test).
//
// --file copies SRC (dereferenced, with its permission bits) to DEST; --tree
// copies a directory tree (regular files, directories and symlinks as they
// are); --symlink creates a symbolic link; --dir an empty directory (octal
// MODE, default 0755). Parent directories are created 0755. Later entries for
// the same DEST replace earlier ones. The layer is reproducible: entries are
// sorted, owned by 0:0 and stamped with a fixed time, so the same inputs give
// the same image ID. Prints the image ID (config digest) on stdout.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Every file in the layer and the image's creation time carry this stamp.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

type entry struct {
	kind   byte   // tar.TypeReg, tar.TypeDir or tar.TypeSymlink
	src    string // regular files: where the content comes from
	target string // symlinks
	mode   int64
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "mkimage: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		out, base, entrypoint, cmd, user, workdir string
		tags, envs, labels                  multi
		files, trees, symlinks, dirs        multi
	)
	flag.StringVar(&out, "o", "", "output tarball (required)")
	flag.Var(&tags, "t", "image reference to tag the image with (repeatable, at least one)")
	flag.StringVar(&base, "base", "", "docker-style tarball of the image to start from (default: none)")
	flag.StringVar(&entrypoint, "entrypoint", "", `ENTRYPOINT as a JSON array, e.g. ["/app"]`)
	flag.StringVar(&cmd, "cmd", "", `CMD as a JSON array, e.g. ["run"]`)
	flag.StringVar(&user, "user", "", "USER, e.g. 65532:65532")
	flag.StringVar(&workdir, "workdir", "", "WORKDIR")
	flag.Var(&envs, "env", "K=V environment variable (repeatable)")
	flag.Var(&labels, "label", "K=V image label (repeatable)")
	flag.Var(&files, "file", "DEST=SRC: copy file SRC to DEST (repeatable)")
	flag.Var(&trees, "tree", "DEST=SRCDIR: copy directory tree SRCDIR to DEST (repeatable)")
	flag.Var(&symlinks, "symlink", "DEST=TARGET: symbolic link (repeatable)")
	flag.Var(&dirs, "dir", "DEST[=MODE]: empty directory, octal mode (repeatable)")
	flag.Parse()
	if flag.NArg() != 0 {
		return fmt.Errorf("unexpected arguments: %q", flag.Args())
	}
	if out == "" || len(tags) == 0 {
		return fmt.Errorf("-o and at least one -t are required")
	}

	entries := map[string]entry{}
	for _, d := range dirs {
		dest, m, hasMode := strings.Cut(d, "=")
		mode := int64(0o755)
		if hasMode {
			v, err := strconv.ParseInt(m, 8, 32)
			if err != nil {
				return fmt.Errorf("--dir %s: bad mode: %v", d, err)
			}
			mode = v
		}
		if err := put(entries, dest, entry{kind: tar.TypeDir, mode: mode}); err != nil {
			return err
		}
	}
	for _, t := range trees {
		dest, src, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("--tree wants DEST=SRCDIR, got %q", t)
		}
		if err := addTree(entries, dest, src); err != nil {
			return err
		}
	}
	for _, f := range files {
		dest, src, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("--file wants DEST=SRC, got %q", f)
		}
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("--file %s: not a regular file", src)
		}
		if err := put(entries, dest, entry{kind: tar.TypeReg, src: src, mode: int64(st.Mode().Perm())}); err != nil {
			return err
		}
	}
	for _, s := range symlinks {
		dest, target, ok := strings.Cut(s, "=")
		if !ok || target == "" {
			return fmt.Errorf("--symlink wants DEST=TARGET, got %q", s)
		}
		if err := put(entries, dest, entry{kind: tar.TypeSymlink, target: target, mode: 0o777}); err != nil {
			return err
		}
	}

	layerTar, err := writeLayer(entries)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return err
	}
	start := empty.Image
	if base != "" {
		if start, err = tarball.ImageFromPath(base, nil); err != nil {
			return fmt.Errorf("--base %s: %v", base, err)
		}
	}
	img, err := mutate.AppendLayers(start, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture = runtime.GOARCH
	cf.OS = "linux"
	cf.Created = v1.Time{Time: epoch}
	if entrypoint != "" {
		if err := json.Unmarshal([]byte(entrypoint), &cf.Config.Entrypoint); err != nil {
			return fmt.Errorf("--entrypoint: %v", err)
		}
	}
	if cmd != "" {
		if err := json.Unmarshal([]byte(cmd), &cf.Config.Cmd); err != nil {
			return fmt.Errorf("--cmd: %v", err)
		}
	}
	if base == "" || user != "" {
		cf.Config.User = user
	}
	if base == "" || workdir != "" {
		cf.Config.WorkingDir = workdir
	}
	if base == "" {
		cf.Config.Env = nil
	}
	cf.Config.Env = append(cf.Config.Env, envs...)
	if len(labels) > 0 {
		if base == "" || cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			cf.Config.Labels[k] = v
		}
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return err
	}

	refs := map[name.Reference]v1.Image{}
	for _, t := range tags {
		ref, err := name.NewTag(t, name.StrictValidation)
		if err != nil {
			return fmt.Errorf("-t %s: %v", t, err)
		}
		refs[ref] = img
	}
	tmp := out + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, refs); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	id, err := img.ConfigName()
	if err != nil {
		return err
	}
	fmt.Println(id.String())
	return nil
}

// put records DEST (an absolute, clean image path) and its parent directories.
func put(entries map[string]entry, dest string, e entry) error {
	if !strings.HasPrefix(dest, "/") {
		return fmt.Errorf("image path %q is not absolute", dest)
	}
	p := strings.TrimPrefix(path.Clean(dest), "/")
	if p == "" {
		return fmt.Errorf("cannot replace the image root")
	}
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if prev, ok := entries[dir]; ok {
			if prev.kind != tar.TypeDir {
				return fmt.Errorf("%s: parent /%s is not a directory", dest, dir)
			}
			continue
		}
		entries[dir] = entry{kind: tar.TypeDir, mode: 0o755}
	}
	entries[p] = e
	return nil
}

func addTree(entries map[string]entry, dest, src string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := path.Join(dest, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return put(entries, target, entry{kind: tar.TypeSymlink, target: link, mode: 0o777})
		case info.IsDir():
			if rel == "." && (dest == "/" || dest == "") {
				return nil
			}
			mode := int64(info.Mode().Perm())
			if info.Mode()&fs.ModeSticky != 0 {
				mode |= 0o1000
			}
			return put(entries, target, entry{kind: tar.TypeDir, mode: mode})
		case info.Mode().IsRegular():
			return put(entries, target, entry{kind: tar.TypeReg, src: p, mode: int64(info.Mode().Perm())})
		default:
			return fmt.Errorf("%s: unsupported file type %s", p, info.Mode().Type())
		}
	})
}

func writeLayer(entries map[string]entry) ([]byte, error) {
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		e := entries[p]
		hdr := &tar.Header{
			Typeflag: e.kind,
			Name:     p,
			Mode:     e.mode,
			ModTime:  epoch,
			Format:   tar.FormatPAX,
		}
		var content []byte
		switch e.kind {
		case tar.TypeDir:
			hdr.Name += "/"
		case tar.TypeSymlink:
			hdr.Linkname = e.target
		case tar.TypeReg:
			b, err := os.ReadFile(e.src)
			if err != nil {
				return nil, err
			}
			content = b
			hdr.Size = int64(len(b))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
