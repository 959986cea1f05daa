package backup

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/minio/sio"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// MaxRetention is the longest a backup is kept, and the default: a deletion reaches every
// backup within this time, because every older backup is gone.
const MaxRetention = 30 * 24 * time.Hour

// ReapplyMargin widens the tombstones a restore re-applies to those recorded up to this long
// before the backup began: a deletion takes its time just before its commit, so one that
// committed after the snapshot began is always included. Re-applying is idempotent, so the
// overlap costs nothing but time.
const ReapplyMargin = 10 * time.Minute

// ErrCorrupt means a backup does not decrypt, or is not the backup its manifest describes.
var ErrCorrupt = errors.New("backup is corrupt")

// Manifest describes one backup; it is stored in clear beside the encrypted backup (it holds
// no personal data) so backups can be listed without the key.
type Manifest struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// Database is "sqlite" or "postgres"; Format says what the plaintext is.
	Database string `json:"database"`
	Format   string `json:"format"`
	// Size and SHA256 describe the plaintext; EncryptedSize the stored blob.
	Size          int64  `json:"size"`
	SHA256        string `json:"sha256"`
	EncryptedSize int64  `json:"encrypted_size"`
	Encryption    string `json:"encryption"`
	MasterKeyID   string `json:"master_key_id"`
	// Tables maps every table to its row count in the snapshot.
	Tables map[string]int64 `json:"tables"`
}

const encryptionName = "DARE 2.0, AES-256-GCM, 64 KiB packages"

func manifestName(id string) string { return id + ".manifest.json" }
func blobName(id string) string     { return id + ".backup" }

// Config configures Backups.
type Config struct {
	Store      Store
	Tombstones ports.Tombstones
	Keyring    *crypto.Keyring
	Clock      ports.Clock
	// Retention is how long backups are kept (0: MaxRetention; more is refused).
	Retention time.Duration
	// Database names the database as persistence opens it.
	Database persistence.Config
	// PGDump and PGRestore are the PostgreSQL client tools, looked up when they are needed
	// (PostgreSQL only).
	PGDump, PGRestore Tool
	// TempDir holds PostgreSQL dumps while they are encrypted or checked (default os.TempDir);
	// SQLite copies are made in the data dir.
	TempDir string
}

// database is one kind of database: snapshot, check a copy, restore a copy.
type database interface {
	kind() string
	format() string
	workDir() string
	snapshot(ctx context.Context, db *sql.DB, path string) (map[string]int64, error)
	check(ctx context.Context, path string, m Manifest) error
	restore(ctx context.Context, path string) error
}

// Backups takes, lists, verifies, restores and prunes backups.
type Backups struct {
	cfg Config
	db  database
}

// New checks the configuration.
func New(cfg Config) (*Backups, error) {
	if cfg.Retention == 0 {
		cfg.Retention = MaxRetention
	}
	if cfg.Retention < 0 || cfg.Retention > MaxRetention {
		return nil, fmt.Errorf("backup retention %s: must be between 1s and %s", cfg.Retention, MaxRetention)
	}
	if cfg.Store == nil || cfg.Tombstones == nil || cfg.Keyring == nil || cfg.Clock == nil {
		return nil, errors.New("backup: store, tombstone log, keyring and clock are required")
	}
	b := &Backups{cfg: cfg}
	if cfg.Database.DatabaseURL == "" {
		dir := cfg.Database.DataDir
		if dir == "" {
			dir = "data"
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		b.db = sqliteFile{path: filepath.Join(abs, "formward.db")}
	} else {
		tmp := cfg.TempDir
		if tmp == "" {
			tmp = os.TempDir()
		}
		b.db = postgresDB{url: cfg.Database.DatabaseURL, pgDump: cfg.PGDump, pgRestore: cfg.PGRestore, tmp: tmp}
	}
	return b, nil
}

// Retention is how long backups are kept.
func (b *Backups) Retention() time.Duration { return b.cfg.Retention }

// Where says where backups are written.
func (b *Backups) Where() string { return b.cfg.Store.String() }

func newID(at time.Time) (string, error) {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	return "bkp_" + at.UTC().Format("20060102T150405Z") + "_" + hex.EncodeToString(r[:]), nil
}

// idTime reads the creation time back from an ID.
func idTime(id string) (time.Time, bool) {
	parts := strings.Split(id, "_")
	if len(parts) != 3 || parts[0] != "bkp" {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102T150405Z", parts[1])
	return t, err == nil
}

// ShipTombstones copies the tombstones db holds to the log.
func (b *Backups) ShipTombstones(ctx context.Context, db *persistence.DB) (int, error) {
	return b.Shipper(db).Ship(ctx)
}

// onlyWrite hides the destination's Close from sio, which would close it.
type onlyWrite struct{ io.Writer }

// Create copies the pending tombstones to the log, snapshots db, encrypts the snapshot into
// the store and writes its manifest last: a backup without a manifest is incomplete and is
// neither listed nor restorable (prune removes it).
func (b *Backups) Create(ctx context.Context, db *persistence.DB) (Manifest, error) {
	if _, err := b.ShipTombstones(ctx, db); err != nil {
		return Manifest{}, fmt.Errorf("backup: copy tombstones: %w", err)
	}
	now := b.cfg.Clock.Now().UTC()
	id, err := newID(now)
	if err != nil {
		return Manifest{}, err
	}
	plain, err := tempPath(b.db.workDir(), id)
	if err != nil {
		return Manifest{}, err
	}
	defer func() { _ = os.Remove(plain) }()
	counts, err := b.db.snapshot(ctx, db.SQL(), plain)
	if err != nil {
		return Manifest{}, err
	}
	st, err := os.Stat(plain)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	master := b.cfg.Keyring.Primary()
	key, err := backupKey(master, id)
	if err != nil {
		return Manifest{}, err
	}
	encSize, err := sio.EncryptedSize(uint64(st.Size()))
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	sum, err := b.upload(ctx, plain, blobName(id), key, int64(encSize))
	if err != nil {
		return Manifest{}, err
	}
	m := Manifest{ID: id, CreatedAt: now, Database: b.db.kind(), Format: b.db.format(), Size: st.Size(),
		SHA256: sum, EncryptedSize: int64(encSize), Encryption: encryptionName, MasterKeyID: master.ID(), Tables: counts}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	if err := b.cfg.Store.Put(ctx, manifestName(id), strings.NewReader(string(body)), int64(len(body))); err != nil {
		return Manifest{}, fmt.Errorf("backup: write manifest: %w", err)
	}
	return m, nil
}

// upload streams the file through the hash and the encryption into the store.
func (b *Backups) upload(ctx context.Context, path, name string, key []byte, encSize int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	pr, pw := io.Pipe()
	go func() {
		ew, err := encryptWriter(onlyWrite{pw}, key)
		if err == nil {
			_, err = io.Copy(ew, &pacedReader{r: io.TeeReader(f, h), mark: time.Now()})
			if cerr := ew.Close(); err == nil {
				err = cerr
			}
		}
		_ = pw.CloseWithError(err)
	}()
	err = b.cfg.Store.Put(ctx, name, pr, encSize)
	_ = pr.CloseWithError(errors.New("upload ended"))
	if err != nil {
		return "", fmt.Errorf("backup: write %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func tempPath(dir, id string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	f, err := os.CreateTemp(dir, ".formward-"+id+"-*")
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	_ = f.Close()
	// The database tools create the file themselves.
	if err := os.Remove(f.Name()); err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	return f.Name(), nil
}

// List returns the complete backups (those with a manifest), newest first.
func (b *Backups) List(ctx context.Context) ([]Manifest, error) {
	names, err := b.cfg.Store.List(ctx, "bkp_")
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, name := range names {
		id, ok := strings.CutSuffix(name, ".manifest.json")
		if !ok {
			continue
		}
		m, err := b.manifest(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, nil
}

func (b *Backups) manifest(ctx context.Context, id string) (Manifest, error) {
	if _, ok := idTime(id); !ok {
		return Manifest{}, fmt.Errorf("backup %s: %w", id, domain.ErrNotFound)
	}
	rc, err := b.cfg.Store.Get(ctx, manifestName(id))
	if err != nil {
		return Manifest{}, fmt.Errorf("backup %s: %w", id, err)
	}
	defer func() { _ = rc.Close() }()
	var m Manifest
	if err := json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%w: backup %s: manifest: %v", ErrCorrupt, id, err)
	}
	if m.ID != id {
		return Manifest{}, fmt.Errorf("%w: backup %s: the manifest names %s", ErrCorrupt, id, m.ID)
	}
	return m, nil
}

// Verify proves that the backup decrypts, is byte for byte what was backed up (size and
// SHA-256 of the plaintext) and is a complete database (SQLite: integrity check and row counts
// of every table; PostgreSQL: pg_restore reads the archive, and the rows of every table are
// counted from its data), without restoring it.
func (b *Backups) Verify(ctx context.Context, id string) (Manifest, error) {
	m, path, err := b.decrypt(ctx, id, b.db.workDir())
	if path != "" {
		defer func() { _ = os.Remove(path) }()
	}
	return m, err
}

// decrypt checks the backup and leaves its verified plaintext in a temporary file in dir.
func (b *Backups) decrypt(ctx context.Context, id, dir string) (Manifest, string, error) {
	m, err := b.manifest(ctx, id)
	if err != nil {
		return Manifest{}, "", err
	}
	if m.Database != b.db.kind() {
		return m, "", fmt.Errorf("backup %s is of a %s database; this one is %s", id, m.Database, b.db.kind())
	}
	master, ok := b.cfg.Keyring.Get(m.MasterKeyID)
	if !ok {
		return m, "", fmt.Errorf("backup %s was encrypted under master key %s, which is not configured (FORMWARD_MASTER_KEY or FORMWARD_PREVIOUS_MASTER_KEYS)", id, m.MasterKeyID)
	}
	key, err := backupKey(master, id)
	if err != nil {
		return m, "", err
	}
	path, err := tempPath(dir, id)
	if err != nil {
		return m, "", err
	}
	if err := b.decryptTo(ctx, m, key, path); err != nil {
		return m, path, err
	}
	if err := b.db.check(ctx, path, m); err != nil {
		return m, path, fmt.Errorf("backup %s: %w", id, err)
	}
	return m, path, nil
}

func (b *Backups) decryptTo(ctx context.Context, m Manifest, key []byte, path string) error {
	rc, err := b.cfg.Store.Get(ctx, blobName(m.ID))
	if err != nil {
		return fmt.Errorf("backup %s: %w", m.ID, err)
	}
	defer func() { _ = rc.Close() }()
	dr, err := decryptReader(rc, key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), dr)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var serr sio.Error
		if errors.As(err, &serr) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: backup %s does not decrypt (changed or cut short): %v", ErrCorrupt, m.ID, err)
		}
		return fmt.Errorf("backup %s: %w", m.ID, err)
	}
	return checkSum(m, n, h)
}

func checkSum(m Manifest, n int64, h hash.Hash) error {
	if n != m.Size {
		return fmt.Errorf("%w: backup %s decrypts to %d bytes, the manifest says %d", ErrCorrupt, m.ID, n, m.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != m.SHA256 {
		return fmt.Errorf("%w: backup %s: SHA-256 %s, the manifest says %s", ErrCorrupt, m.ID, got, m.SHA256)
	}
	return nil
}

// RestoreResult says what a restore did.
type RestoreResult struct {
	Backup Manifest
	// TombstonesShipped were copied from the database being replaced before it was replaced.
	TombstonesShipped int
	// TombstonesRead were read from the log (recorded since the backup began, with the margin);
	// Reapplied counts what they deleted from the restored database.
	TombstonesRead int
	Reapplied      ports.TombstoneCounts
	// Warnings are problems that did not stop the restore.
	Warnings []string
}

// Restore replaces the configured database with the backup, then re-applies every tombstone
// of the log recorded since the backup began, so nothing deleted after the backup comes back.
//
// Before replacing, the tombstones the current database still holds are copied to the log
// (when it can be opened). SQLite: every process using the database file must be stopped;
// while one has it open the restore refuses with ErrInUse.
// PostgreSQL: pg_restore runs in one transaction; stop the processes, or they wait for it.
func (b *Backups) Restore(ctx context.Context, id string) (RestoreResult, error) {
	res := RestoreResult{}
	if sf, ok := b.db.(sqliteFile); ok {
		if err := sf.checkUnused(ctx); err != nil {
			return res, err
		}
	}
	if n, err := b.shipFromCurrent(ctx); err != nil {
		res.Warnings = append(res.Warnings, "the current database's pending tombstones were not copied to the log: "+err.Error())
	} else {
		res.TombstonesShipped = n
	}
	m, path, err := b.decrypt(ctx, id, b.db.workDir())
	if path != "" {
		defer func() { _ = os.Remove(path) }()
	}
	res.Backup = m
	if err != nil {
		return res, err
	}
	if err := b.db.restore(ctx, path); err != nil {
		return res, err
	}
	db, err := persistence.Open(ctx, b.cfg.Database)
	if err != nil {
		return res, fmt.Errorf("open restored database: %w", err)
	}
	defer func() { _ = db.Close() }()
	if err := db.Migrate(ctx); err != nil {
		return res, fmt.Errorf("migrate restored database: %w", err)
	}
	ts, err := b.cfg.Tombstones.Since(ctx, m.CreatedAt.Add(-ReapplyMargin))
	if err != nil {
		return res, fmt.Errorf("read tombstone log: %w", err)
	}
	res.TombstonesRead = len(ts)
	repo := persistence.NewTombstoneRepository(db)
	if res.Reapplied, err = repo.Apply(ctx, ts); err != nil {
		return res, fmt.Errorf("re-apply tombstones: %w", err)
	}
	// The restored database may hold tombstones that were pending when the backup was taken.
	if _, err := b.ShipTombstones(ctx, db); err != nil {
		res.Warnings = append(res.Warnings, "copying the restored database's tombstones: "+err.Error())
	}
	return res, nil
}

func (b *Backups) shipFromCurrent(ctx context.Context) (int, error) {
	if sf, ok := b.db.(sqliteFile); ok {
		if _, err := os.Stat(sf.path); err != nil {
			return 0, err
		}
	}
	db, err := persistence.Open(ctx, b.cfg.Database)
	if err != nil {
		return 0, err
	}
	defer func() { _ = db.Close() }()
	return b.ShipTombstones(ctx, db)
}

// Prune deletes the backups (and incomplete uploads) older than the retention, then the
// tombstones older than every backup left. It returns the IDs it deleted.
func (b *Backups) Prune(ctx context.Context) ([]string, error) {
	now := b.cfg.Clock.Now()
	cutoff := now.Add(-b.cfg.Retention)
	names, err := b.cfg.Store.List(ctx, "bkp_")
	if err != nil {
		return nil, err
	}
	byID := map[string][]string{}
	for _, name := range names {
		id := strings.TrimSuffix(strings.TrimSuffix(name, ".manifest.json"), ".backup")
		byID[id] = append(byID[id], name)
	}
	oldestKept := now
	var deleted []string
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		at, ok := idTime(id)
		if !ok {
			continue
		}
		if !at.Before(cutoff) {
			oldestKept = minTime(oldestKept, at)
			continue
		}
		// The blob first, the manifest last: an interrupted prune leaves a listed backup that
		// the next prune finishes, never an unlisted blob.
		sort.Slice(byID[id], func(i, j int) bool { return strings.HasSuffix(byID[id][i], ".backup") })
		for _, name := range byID[id] {
			if err := b.cfg.Store.Delete(ctx, name); err != nil {
				return deleted, err
			}
		}
		deleted = append(deleted, id)
	}
	if err := b.cfg.Tombstones.Prune(ctx, oldestKept.Add(-ReapplyMargin)); err != nil {
		return deleted, err
	}
	return deleted, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Shipper copies the tombstones db records to this service's log.
func (b *Backups) Shipper(db *persistence.DB) *Shipper {
	return NewShipper(persistence.NewTombstoneRepository(db), b.cfg.Tombstones)
}

// pacedReader pauses after every MiB as long as producing it took (reading, hashing,
// encrypting, writing), so a backup takes at most about half of the disk and a core from the
// captures that run beside it.
type pacedReader struct {
	r    io.Reader
	n    int
	mark time.Time
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if p.n >= 1<<20 {
		time.Sleep(pause * time.Since(p.mark))
		p.n, p.mark = 0, time.Now()
	}
	n, err := p.r.Read(b)
	p.n += n
	return n, err
}

// pause is how many times its own duration a backup rests after each step of work: 3 leaves
// the captures three quarters of the disk and of a core.
const pause = 3
