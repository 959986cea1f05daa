package bootstrap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
)

// storeDataKey starts a runtime with cfg and seals something in a workspace, as the first
// capture does, so the database holds a data key wrapped by cfg's master key.
func storeDataKey(t *testing.T, cfg Config) {
	t.Helper()
	ctx := context.Background()
	rt, cleanup := testRuntime(t, cfg)
	defer cleanup()
	c := crypto.NewCipher(rt.Keyring, rt.DataKeys, system.NewIDs(), system.Clock{})
	if _, err := c.Seal(ctx, "wsp_keycheck", []byte("answer"), nil); err != nil {
		t.Fatal(err)
	}
}

func keyID(t *testing.T, b64 string) string {
	t.Helper()
	k, err := crypto.ParseMasterKey(b64)
	if err != nil {
		t.Fatal(err)
	}
	return k.ID()
}

// Every process proves its master keys on the data keys already stored: started with another
// key it stops, naming the key IDs found and configured, instead of failing every capture;
// with the old key among the previous ones (a rotation) it starts; a fresh database passes.
func TestEveryProcessChecksItsMasterKeyAtStart(t *testing.T) {
	for _, dialect := range []string{persistence.DialectSQLite, persistence.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			cfg := testConfig(t)
			if dialect == persistence.DialectPostgres {
				cfg.DatabaseURL = persistencetest.PostgresURL(t)
			}
			oldKey := cfg.MasterKey
			// A fresh database passes with any key, and the check leaves it as it was.
			_, cleanup, err := newRuntime(ctx, cfg, zap.NewNop())
			if err != nil {
				t.Fatalf("fresh database: %v", err)
			}
			cleanup()
			storeDataKey(t, cfg)

			wrong := cfg
			wrong.MasterKey = crypto.GenerateMasterKey().Base64()
			wrong.KafkaBrokers = "127.0.0.1:1" // never reached: the check comes first
			roles := map[string]func() error{
				"runtime": func() error { _, c, err := newRuntime(ctx, wrong, zap.NewNop()); release(c); return err },
				"serve":   func() error { _, c, err := newServeProcess(ctx, wrong, zap.NewNop()); release(c); return err },
				"relay":   func() error { _, c, err := newRelayProcess(ctx, wrong, zap.NewNop()); release(c); return err },
				"worker":  func() error { _, c, err := newWorkerProcess(ctx, wrong, zap.NewNop()); release(c); return err },
			}
			for role, start := range roles {
				err := start()
				var mismatch *crypto.MasterKeyMismatchError
				if !errors.As(err, &mismatch) {
					t.Fatalf("%s with another master key: %v, want a master key mismatch", role, err)
				}
				for _, id := range []string{keyID(t, oldKey), keyID(t, wrong.MasterKey)} {
					if !strings.Contains(err.Error(), id) {
						t.Fatalf("%s: the error does not name master key %s: %v", role, id, err)
					}
				}
				if !strings.Contains(err.Error(), "FORMWARD_PREVIOUS_MASTER_KEYS") {
					t.Fatalf("%s: the error does not say how to fix it: %v", role, err)
				}
			}

			rotating := wrong
			rotating.PreviousMasterKeys = oldKey
			_, cleanup, err = newRuntime(ctx, rotating, zap.NewNop())
			if err != nil {
				t.Fatalf("new key with the old one as previous: %v", err)
			}
			cleanup()
		})
	}
}

func release(cleanup func()) {
	if cleanup != nil {
		cleanup()
	}
}

// The CLI exits non-zero with the IDs on stderr, before serving anything.
func TestServeWithAnotherMasterKeyExits(t *testing.T) {
	cfg := testConfig(t)
	storeDataKey(t, cfg)
	other := crypto.GenerateMasterKey()
	code, _, stderr := runToExit(t, "serve", "--data-dir", cfg.DataDir, "--http-addr", "127.0.0.1:0", "--log-level", "error",
		"--master-key", other.Base64())
	if code == 0 || !strings.Contains(stderr, keyID(t, cfg.MasterKey)) || !strings.Contains(stderr, other.ID()) {
		t.Fatalf("serve with another master key: exit %d, stderr:\n%s", code, stderr)
	}
}

// In the embedded mode a key is generated only while the database holds no data key: a data
// dir that lost its key file is refused, naming the key the data needs, and no new key file
// appears.
func TestNoKeyFileGeneratedOverStoredDataKeys(t *testing.T) {
	cfg := testConfig(t)
	cfg.MasterKey = ""
	storeDataKey(t, cfg) // generates master.key
	file := filepath.Join(cfg.DataDir, crypto.MasterKeyFile)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	id := keyID(t, string(b))
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	_, cleanup, err := newRuntime(context.Background(), cfg, zap.NewNop())
	release(cleanup)
	if err == nil || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "FORMWARD_MASTER_KEY") {
		t.Fatalf("start without the key file: %v, want an error naming master key %s", err, id)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a new key file was generated over stored data keys (%v)", err)
	}
}

// With PostgreSQL, FORMWARD_MASTER_KEY is required: every command stops with a clear error
// and no key file is generated into the data dir.
func TestPostgresWithoutMasterKeyIsRefused(t *testing.T) {
	url := persistencetest.PostgresURL(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"keys", "create", "--init", "--name", "ci", "--scope", "admin"},
		{"serve", "--http-addr", "127.0.0.1:0"},
		{"migrate"},
	} {
		code, stdout, stderr := run(t, append(args, "--data-dir", dir, "--database-url", url, "--log-level", "error")...)
		if code == 0 || stdout != "" || !strings.Contains(stderr, "FORMWARD_MASTER_KEY is required with FORMWARD_DATABASE_URL") {
			t.Fatalf("%v on PostgreSQL without a master key: exit %d, stdout %q, stderr:\n%s", args, code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, crypto.MasterKeyFile)); !os.IsNotExist(err) {
			t.Fatalf("%v generated a key file on PostgreSQL (%v)", args, err)
		}
	}
}
