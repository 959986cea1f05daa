// Package persistencetest opens migrated throw-away databases for tests: a SQLite file in a
// temporary directory, and a fresh PostgreSQL database created through an admin URL and dropped
// afterwards. It also provides a small real AES-256-GCM Cipher with a fixed key.
package persistencetest

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the admin connection

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/ports"
)

// DefaultPostgresURL is the admin URL used when FORMWARD_TEST_POSTGRES_URL is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// SQLite opens a migrated SQLite database in a temporary directory, closed at cleanup.
// The cipher is accepted for symmetry with the repositories' constructors and may be nil.
func SQLite(t testing.TB, _ ports.Cipher) *persistence.DB {
	t.Helper()
	return open(t, persistence.Config{DataDir: t.TempDir()})
}

// Postgres creates a uniquely named database through the admin URL (FORMWARD_TEST_POSTGRES_URL),
// opens and migrates it, and drops it at cleanup. When PostgreSQL is unreachable the test is
// skipped, unless FORMWARD_TEST_REQUIRE_POSTGRES=1 makes that fatal.
func Postgres(t testing.TB, _ ...ports.Cipher) *persistence.DB {
	t.Helper()
	return open(t, persistence.Config{DatabaseURL: PostgresURL(t)})
}

// PostgresURL creates a fresh database like Postgres, without opening or migrating it, and
// returns its URL; for tests that open it more than once (e.g. racing migrations).
func PostgresURL(t testing.TB) string {
	t.Helper()
	adminURL := os.Getenv("FORMWARD_TEST_POSTGRES_URL")
	if adminURL == "" {
		adminURL = DefaultPostgresURL
	}
	unavailable := func(err error) {
		t.Helper()
		if os.Getenv("FORMWARD_TEST_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("postgres unavailable at FORMWARD_TEST_POSTGRES_URL: %v", err)
		}
		t.Skipf("postgres unavailable (set FORMWARD_TEST_POSTGRES_URL, or FORMWARD_TEST_REQUIRE_POSTGRES=1 to fail): %v", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatalf("FORMWARD_TEST_POSTGRES_URL: %v", err)
	}
	q := u.Query()
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", "5")
	}
	u.RawQuery = q.Encode()

	admin, err := sql.Open("pgx", u.String())
	if err != nil {
		unavailable(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		_ = admin.Close()
		unavailable(err)
	}
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	name := "formward_test_" + hex.EncodeToString(suffix[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
		_ = admin.Close()
	})
	u.Path = "/" + name
	return u.String()
}

func open(t testing.TB, cfg persistence.Config) *persistence.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := persistence.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", dialectOf(cfg), err)
	}
	// Registered before any caller cleanup, so it runs after them (and before the drop).
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close database: %v", err)
		}
	})
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate %s: %v", dialectOf(cfg), err)
	}
	return db
}

func dialectOf(cfg persistence.Config) string {
	if cfg.DatabaseURL == "" {
		return persistence.DialectSQLite
	}
	return persistence.DialectPostgres
}

// Each runs fn as the subtests "sqlite" and "postgres", each with its own fresh database.
func Each(t *testing.T, fn func(t *testing.T, db *persistence.DB)) {
	t.Helper()
	t.Run(persistence.DialectSQLite, func(t *testing.T) { fn(t, SQLite(t, nil)) })
	t.Run(persistence.DialectPostgres, func(t *testing.T) { fn(t, Postgres(t)) })
}

// Cipher returns a real AES-256-GCM ports.Cipher with a fixed key, standing in for the crypto
// adapter: nonce || ciphertext, with the workspace ID bound into the additional data.
func Cipher() ports.Cipher {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i*7 + 1)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return gcmCipher{aead: aead}
}

type gcmCipher struct{ aead cipher.AEAD }

// errOpen hides why a ciphertext did not open.
var errOpen = errors.New("persistencetest: ciphertext does not open")

func (c gcmCipher) additional(workspaceID string, aad []byte) []byte {
	return append(append([]byte(workspaceID), 0), aad...)
}

func (c gcmCipher) Seal(_ context.Context, workspaceID string, plaintext, aad []byte) ([]byte, error) {
	nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plaintext)+c.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return c.aead.Seal(nonce, nonce, plaintext, c.additional(workspaceID, aad)), nil
}

func (c gcmCipher) Open(_ context.Context, workspaceID string, ciphertext, aad []byte) ([]byte, error) {
	n := c.aead.NonceSize()
	if len(ciphertext) < n+c.aead.Overhead() {
		return nil, errOpen
	}
	plain, err := c.aead.Open(nil, ciphertext[:n], ciphertext[n:], c.additional(workspaceID, aad))
	if err != nil {
		return nil, errOpen
	}
	return plain, nil
}

// EnsureKey does nothing: the test cipher has one fixed key for every workspace.
func (c gcmCipher) EnsureKey(context.Context, string) error { return nil }

// BlindIndex returns the real email blind index (adapters/crypto) under a fixed master key.
func BlindIndex() ports.BlindIndex {
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = byte(i*11 + 3)
	}
	master, err := crypto.ParseMasterKey(base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		panic(err)
	}
	return crypto.NewBlindIndex(master)
}
