package backup_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/auth"
	captureapp "github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
	"github.com/formward/formward/domain/submission"
)

// TestBackupsHoldNoPlaintext stores submissions whose text answer, email answer, uploaded
// file name and file content all carry a marker, deletes some (tombstones shipped to the log
// before and after a backup), takes a backup, and reads every byte the backup directory holds
// — blobs, manifests, the tombstone log — and the encrypted file store: the marker is in none
// of them, nor in a path. On SQLite the backup is also restored and the restored database file
// read raw: its plaintext holds no marker either, while the submission opened through the
// repository still does (the data is there, sealed).
func TestBackupsHoldNoPlaintext(t *testing.T) {
	dialects(t, func(t *testing.T, cfg persistence.Config) {
		ctx := context.Background()
		raw := make([]byte, 8)
		_, _ = rand.Read(raw)
		marker := "zqmark" + hex.EncodeToString(raw)

		a := openApp(t, cfg)
		ws := a.workspace(t)
		ids, clock := system.NewIDs(), system.Clock{}
		f, err := form.New(ids.New("frm"), ws, form.Draft{Name: "Passport check", Fields: []form.FieldSpec{
			{Label: "Name", Type: "text"}, {Label: "Email", Type: "email"}, {Label: "Passport", Type: "file"},
		}}, func() string { return ids.New("fld") }, form.DefaultLimits, clock.Now())
		noErr(t, err)
		// Posts come from the owner's site (a form-backend post): no render token to forge.
		published, settings := string(form.StatusPublished), f.Settings()
		owner, err := origin.Parse("https://owner.example")
		noErr(t, err)
		settings.AllowedOrigins = []origin.Origin{owner}
		_, err = f.Apply(form.Patch{Status: &published, Settings: &settings}, func() string { return ids.New("fld") }, form.DefaultLimits, clock.Now())
		noErr(t, err)
		noErr(t, a.forms.Create(ctx, f))

		fileDir := t.TempDir()
		local, err := objectstore.NewLocal(fileDir)
		noErr(t, err)
		files := objectstore.NewEncrypted(local, persistencetest.Cipher())
		capture := captureapp.NewSubmitPublicFormHandler(a.forms, a.workspaces, a.submissions, files, ids, clock,
			crypto.NewIPHasher([]byte("test")), captureapp.SpamChecks{}, submission.FileLimits{PerField: 10, PerPost: 20}, nil)
		content := "Passport of " + marker + ", number 123456789"
		var subs []*submission.Submission
		for i := range 4 {
			res, err := capture.Handle(ctx, captureapp.SubmitPublicForm{FormID: f.ID(), IP: "203.0.113.9", Origin: owner,
				Data: map[string]submission.Input{f.Fields()[0].ID: marker + " respondent " + label(i), f.Fields()[1].ID: marker + "@example.org"},
				Uploads: map[string][]captureapp.Upload{f.Fields()[2].ID: {{
					Info: submission.FileInfo{Name: marker + "_passport.txt", Size: int64(len(content)), Declared: "text/plain", Sniffed: "text/plain"},
					Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(content)), nil },
				}}}})
			noErr(t, err)
			subs = append(subs, res)
		}

		b, dir, _ := localBackups(t, cfg, clock)
		noErr(t, a.deleteSub.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws)), captureapp.DeleteSubmission{FormID: f.ID(), ID: subs[0].ID()}))
		_, err = b.ShipTombstones(ctx, a.db)
		noErr(t, err)
		m, err := b.Create(ctx, a.db)
		noErr(t, err)
		noErr(t, a.deleteSub.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws)), captureapp.DeleteSubmission{FormID: f.ID(), ID: subs[1].ID()}))
		n, err := b.ShipTombstones(ctx, a.db)
		noErr(t, err)
		if n == 0 {
			t.Fatal("no tombstone shipped after the second deletion")
		}

		scanned := noMarker(t, dir.Root(), marker)
		if scanned < 3 { // a blob, its manifest, a tombstone log
			t.Fatalf("the backup directory holds %d files", scanned)
		}
		if noMarker(t, fileDir, marker) == 0 {
			t.Fatal("the file store is empty")
		}
		a.close(t)

		if cfg.DatabaseURL != "" {
			return
		}
		_, err = b.Restore(ctx, m.ID)
		noErr(t, err)
		noMarker(t, cfg.DataDir, marker)
		a = openApp(t, cfg)
		defer a.close(t)
		got, err := a.submissions.Get(ctx, ws, f.ID(), subs[2].ID())
		noErr(t, err)
		if !strings.Contains(got.Data()[f.Fields()[0].ID].String(), marker) {
			t.Fatal("the restored submission lost its answer")
		}
	})
}

// noMarker reads every file under root and fails if the marker is in one's path or bytes
// (case-insensitively); it returns how many files it read.
func noMarker(t *testing.T, root, marker string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(strings.ToLower(path), marker) {
			t.Errorf("the path %s names the marker", path)
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if bytes.Contains(bytes.ToLower(data), []byte(marker)) {
			t.Errorf("%s holds the marker in the clear", path)
		}
		return nil
	})
	noErr(t, err)
	return n
}
