package backup

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/formward/formward/ports"
)

// tombstoneDir is where the log lives beside the backups.
const tombstoneDir = "tombstones"

// clockSkew widens the files Since reads and Prune keeps: a tombstone's time comes from the
// process that deleted, the file or object it lands in from the process that copied it.
const clockSkew = time.Hour

const dayLayout = "2006-01-02"

// tombstoneLine is one tombstone in the log: IDs and time, never content.
type tombstoneLine struct {
	Kind        string    `json:"kind"`
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	DeletedAt   time.Time `json:"deleted_at"`
}

// encodeTombstones writes one JSON line per tombstone, as json.Encoder writes a tombstoneLine,
// but appended by hand into a buffer sized once: a retention pass under load copies 20,000
// tombstones a second, and reflection with a growing buffer cost a third as much CPU as the
// deletions themselves.
func encodeTombstones(ts []ports.Tombstone) []byte {
	out := make([]byte, 0, len(ts)*128)
	for _, t := range ts {
		out = append(out, `{"kind":`...)
		out = appendJSONString(out, string(t.Kind))
		out = append(out, `,"id":`...)
		out = appendJSONString(out, t.ID)
		out = append(out, `,"workspace_id":`...)
		out = appendJSONString(out, t.WorkspaceID)
		out = append(out, `,"deleted_at":`...)
		at, err := t.DeletedAt.UTC().MarshalJSON()
		if err != nil { // a year outside 0 to 9999: not a time this code makes
			at = []byte(`"0001-01-01T00:00:00Z"`)
		}
		out = append(out, at...)
		out = append(out, "}\n"...)
	}
	return out
}

// appendJSONString appends s as encoding/json writes it: as is when every byte is printable
// ASCII that needs no escape (IDs and kinds always are), through json.Marshal otherwise.
func appendJSONString(out []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(out, b...)
		}
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}

// decodeTombstones reads JSON lines, keeping those deleted at or after since. A line cut short
// by a crash during an append (always the last of its file) is skipped.
func decodeTombstones(r io.Reader, since time.Time, into []ports.Tombstone) ([]ports.Tombstone, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		var l tombstoneLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.ID == "" {
			continue
		}
		if l.DeletedAt.Before(since) {
			continue
		}
		into = append(into, ports.Tombstone{Kind: ports.TombstoneKind(l.Kind), ID: l.ID, WorkspaceID: l.WorkspaceID, DeletedAt: l.DeletedAt})
	}
	return into, sc.Err()
}

func sortTombstones(ts []ports.Tombstone) {
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].DeletedAt.Before(ts[j].DeletedAt) })
}

// dayWanted says whether a file or folder of one day may hold tombstones deleted at or after t.
func dayWanted(day string, t time.Time) bool {
	d, err := time.Parse(dayLayout, day)
	if err != nil {
		return false
	}
	return !d.Add(24 * time.Hour).Before(t.Add(-clockSkew))
}

// dayExpired says whether every tombstone of a day was appended before the given time.
func dayExpired(day string, before time.Time) bool {
	d, err := time.Parse(dayLayout, day)
	if err != nil {
		return false
	}
	return !d.Add(24 * time.Hour).Add(clockSkew).After(before)
}

// LocalTombstones is the tombstone log in a local directory: one file per day of JSON lines,
// opened append-only, each append written in one write and fsync'd before Append returns.
type LocalTombstones struct {
	dir   string
	clock ports.Clock
	mu    sync.Mutex
}

var _ ports.Tombstones = (*LocalTombstones)(nil)

// NewLocalTombstones keeps the log in root/tombstones.
func NewLocalTombstones(root string, clock ports.Clock) (*LocalTombstones, error) {
	dir := filepath.Join(root, tombstoneDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tombstone log: %w", err)
	}
	return &LocalTombstones{dir: dir, clock: clock}, nil
}

// Append writes the batch to today's file and fsyncs it (and the directory when the file is new).
func (l *LocalTombstones) Append(_ context.Context, ts []ports.Tombstone) error {
	if len(ts) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p := filepath.Join(l.dir, l.clock.Now().UTC().Format(dayLayout)+".jsonl")
	_, statErr := os.Stat(p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("tombstone log: %w", err)
	}
	_, err = f.Write(encodeTombstones(ts))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && errors.Is(statErr, os.ErrNotExist) {
		err = syncDir(l.dir)
	}
	if err != nil {
		return fmt.Errorf("tombstone log append: %w", err)
	}
	return nil
}

// Since reads the files of the days that may hold tombstones deleted at or after t.
func (l *LocalTombstones) Since(_ context.Context, t time.Time) ([]ports.Tombstone, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("tombstone log: %w", err)
	}
	var out []ports.Tombstone
	for _, e := range entries {
		day, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !dayWanted(day, t) {
			continue
		}
		f, err := os.Open(filepath.Join(l.dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("tombstone log: %w", err)
		}
		out, err = decodeTombstones(f, t, out)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("tombstone log %s: %w", e.Name(), err)
		}
	}
	sortTombstones(out)
	return out, nil
}

// Prune removes the files of days that ended (with the skew allowance) before the given time.
func (l *LocalTombstones) Prune(_ context.Context, before time.Time) error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("tombstone log: %w", err)
	}
	for _, e := range entries {
		if day, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && dayExpired(day, before) {
			if err := os.Remove(filepath.Join(l.dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("tombstone log prune: %w", err)
			}
		}
	}
	return nil
}

// StoreTombstones is the tombstone log in a Store whose blobs cannot be appended to (S3): one
// object per appended batch, under tombstones/<day>/<time>-<random>.jsonl.
type StoreTombstones struct {
	store Store
	clock ports.Clock
}

var _ ports.Tombstones = (*StoreTombstones)(nil)

// NewStoreTombstones keeps the log in the store.
func NewStoreTombstones(store Store, clock ports.Clock) *StoreTombstones {
	return &StoreTombstones{store: store, clock: clock}
}

// Append uploads the batch as one object; it returns once the store has acknowledged it.
func (s *StoreTombstones) Append(ctx context.Context, ts []ports.Tombstone) error {
	if len(ts) == 0 {
		return nil
	}
	now := s.clock.Now().UTC()
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return fmt.Errorf("tombstone log: %w", err)
	}
	name := path.Join(tombstoneDir, now.Format(dayLayout), fmt.Sprintf("%020d-%s.jsonl", now.UnixNano(), hex.EncodeToString(r[:])))
	body := encodeTombstones(ts)
	if err := s.store.Put(ctx, name, bytes.NewReader(body), int64(len(body))); err != nil {
		return fmt.Errorf("tombstone log append: %w", err)
	}
	return nil
}

// Since reads the objects of the days that may hold tombstones deleted at or after t.
func (s *StoreTombstones) Since(ctx context.Context, t time.Time) ([]ports.Tombstone, error) {
	names, err := s.store.List(ctx, tombstoneDir+"/")
	if err != nil {
		return nil, fmt.Errorf("tombstone log: %w", err)
	}
	var out []ports.Tombstone
	for _, name := range names {
		if !dayWanted(dayOf(name), t) {
			continue
		}
		rc, err := s.store.Get(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("tombstone log: %w", err)
		}
		out, err = decodeTombstones(rc, t, out)
		_ = rc.Close()
		if err != nil {
			return nil, fmt.Errorf("tombstone log %s: %w", name, err)
		}
	}
	sortTombstones(out)
	return out, nil
}

// Prune removes the objects of days that ended (with the skew allowance) before the given time.
func (s *StoreTombstones) Prune(ctx context.Context, before time.Time) error {
	names, err := s.store.List(ctx, tombstoneDir+"/")
	if err != nil {
		return fmt.Errorf("tombstone log: %w", err)
	}
	for _, name := range names {
		if dayExpired(dayOf(name), before) {
			if err := s.store.Delete(ctx, name); err != nil {
				return fmt.Errorf("tombstone log prune: %w", err)
			}
		}
	}
	return nil
}

// dayOf returns the day folder of tombstones/<day>/<object>.
func dayOf(name string) string {
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}
