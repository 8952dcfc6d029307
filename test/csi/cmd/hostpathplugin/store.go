package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// volume is the record kept next to a volume's data directory, so that a restarted plugin,
// and the node plugin sharing the same host directory, know the volume.
type volume struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	CapacityBytes int64  `json:"capacityBytes"`
	Ephemeral     bool   `json:"ephemeral"`
	// MountMode is the mount mode asked for at creation; "" (older records) is bind.
	MountMode string `json:"mountMode,omitempty"`
}

// mode is the volume's mount mode, bind unless it was created for fuse.
func (v *volume) mode() string {
	if v.MountMode == mountModeFuse {
		return mountModeFuse
	}
	return mountModeBind
}

// context is the volume_context of the volume: its mount mode when that is not the default,
// so that it reaches NodePublishVolume (through the PersistentVolume's volumeAttributes).
func (v *volume) context() map[string]string {
	if v.mode() == mountModeBind {
		return nil
	}
	return map[string]string{mountModeKey: v.mode()}
}

// errNoVolume means no record exists for a volume.
var errNoVolume = errors.New("volume does not exist")

// validID matches volume IDs that are safe as a single path element.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// store keeps volumes in dir: <dir>/<id>/ holds the data, <dir>/<id>.json the record.
type store struct {
	dir string
}

func openStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating the state directory: %w", err)
	}
	return &store{dir: dir}, nil
}

// newVolumeID returns a fresh random volume ID.
func newVolumeID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (s *store) dataDir(id string) string { return filepath.Join(s.dir, id) }

func (s *store) recordPath(id string) string { return filepath.Join(s.dir, id+".json") }

// get reads the record of volume id; errNoVolume if there is none.
func (s *store) get(id string) (*volume, error) {
	b, err := os.ReadFile(s.recordPath(id))
	if os.IsNotExist(err) {
		return nil, errNoVolume
	}
	if err != nil {
		return nil, err
	}
	v := &volume{}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("volume record %s: %w", s.recordPath(id), err)
	}
	return v, nil
}

// list returns all volumes, sorted by ID.
func (s *store) list() ([]*volume, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var vols []*volume
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || !validID.MatchString(id) {
			continue
		}
		v, err := s.get(id)
		if errors.Is(err, errNoVolume) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		vols = append(vols, v)
	}
	sort.Slice(vols, func(i, j int) bool { return vols[i].ID < vols[j].ID })
	return vols, nil
}

// byName finds the volume created under name; errNoVolume if there is none.
func (s *store) byName(name string) (*volume, error) {
	vols, err := s.list()
	if err != nil {
		return nil, err
	}
	for _, v := range vols {
		if v.Name == name {
			return v, nil
		}
	}
	return nil, errNoVolume
}

// create makes the data directory of v, writable by any pod user, and writes its record.
func (s *store) create(v *volume) error {
	if err := os.MkdirAll(s.dataDir(v.ID), 0o777); err != nil {
		return err
	}
	if err := os.Chmod(s.dataDir(v.ID), 0o777); err != nil {
		return err
	}
	return s.save(v)
}

// save writes the record of v atomically (temporary file + rename).
func (s *store) save(v *volume) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".record-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.recordPath(v.ID))
}

// remove deletes the data directory, then the record, of volume id. Absent is fine.
func (s *store) remove(id string) error {
	if err := os.RemoveAll(s.dataDir(id)); err != nil {
		return err
	}
	if err := os.Remove(s.recordPath(id)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
