package backup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/backup"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/auth"
	captureapp "github.com/formward/formward/application/capture"
	formsapp "github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// dialects runs fn against a fresh SQLite data dir and a fresh PostgreSQL database.
func dialects(t *testing.T, fn func(t *testing.T, cfg persistence.Config)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, persistence.Config{DataDir: t.TempDir()}) })
	t.Run("postgres", func(t *testing.T) { fn(t, persistence.Config{DatabaseURL: persistencetest.PostgresURL(t)}) })
}

// app is the database with the use cases that write and delete.
type app struct {
	db          *persistence.DB
	workspaces  *persistence.WorkspaceRepository
	forms       *persistence.FormRepository
	submissions *persistence.SubmissionRepository
	create      formsapp.CreateFormHandler
	capture     captureapp.CaptureSubmissionHandler
	deleteSub   captureapp.DeleteSubmissionHandler
	deleteForm  formsapp.DeleteFormHandler
}

func openApp(t testing.TB, cfg persistence.Config) *app {
	t.Helper()
	ctx := context.Background()
	db, err := persistence.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		_ = db.Close()
		t.Fatal(err)
	}
	c := persistencetest.Cipher()
	ids, clock := system.NewIDs(), system.Clock{}
	a := &app{db: db, workspaces: persistence.NewWorkspaceRepository(db), forms: persistence.NewFormRepository(db, c),
		submissions: persistence.NewSubmissionRepository(db, c, persistencetest.BlindIndex())}
	a.create = formsapp.NewCreateFormHandler(a.forms, ids, clock, form.DefaultLimits)
	a.capture = captureapp.NewCaptureSubmissionHandler(a.forms, a.submissions, ids, clock, crypto.NewIPHasher([]byte("test")), nil, "https://forms.example")
	a.deleteSub = captureapp.NewDeleteSubmissionHandler(a.forms, a.submissions, nil, ids, clock)
	a.deleteForm = formsapp.NewDeleteFormHandler(a.forms, nil, ids, clock)
	return a
}

func (a *app) close(t testing.TB) {
	t.Helper()
	if err := a.db.Close(); err != nil {
		t.Fatal(err)
	}
}

func (a *app) workspace(t testing.TB) string {
	t.Helper()
	w, err := workspace.New(system.NewIDs().New("wsp"), "Acme", workspace.PlanBusiness, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.workspaces.Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w.ID()
}

func (a *app) form(t testing.TB, ws string) *form.Form {
	t.Helper()
	v, err := a.create.Handle(auth.WithPrincipal(context.Background(), auth.SystemPrincipal(ws)), formsapp.CreateForm{
		Draft: form.Draft{Name: "Contact", Fields: []form.FieldSpec{{Label: "Name", Type: "text"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return v.Form
}

func (a *app) submit(ctx context.Context, f *form.Form, text string) (*submission.Submission, error) {
	return a.capture.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(f.WorkspaceID())), captureapp.CaptureSubmission{FormID: f.ID(),
		Data: map[string]submission.Input{f.Fields()[0].ID: text}, Source: submission.SourceAPI, IP: "203.0.113.9"})
}

func (a *app) mustSubmit(t testing.TB, f *form.Form, text string) string {
	t.Helper()
	s, err := a.submit(context.Background(), f, text)
	if err != nil {
		t.Fatal(err)
	}
	return s.ID()
}

func (a *app) hasSubmission(t testing.TB, ws, formID, id string) bool {
	t.Helper()
	_, err := a.submissions.Get(context.Background(), ws, formID, id)
	return err == nil
}

func (a *app) hasForm(t testing.TB, ws, id string) bool {
	t.Helper()
	_, err := a.forms.Get(context.Background(), ws, id)
	return err == nil
}

// newBackups makes the service over a local backup directory.
func newBackups(t testing.TB, cfg persistence.Config, store backup.Store, log ports.Tombstones, clock ports.Clock, ring *crypto.Keyring) *backup.Backups {
	t.Helper()
	bcfg := backup.Config{Store: store, Tombstones: log, Keyring: ring, Clock: clock, Database: cfg}
	if cfg.DatabaseURL != "" {
		bcfg.PGDump = backup.Tool{Path: os.Getenv("FORMWARD_PG_DUMP")}
		bcfg.PGRestore = backup.Tool{Path: os.Getenv("FORMWARD_PG_RESTORE")}
	}
	b, err := backup.New(bcfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func localBackups(t testing.TB, cfg persistence.Config, clock ports.Clock) (*backup.Backups, *backup.Dir, ports.Tombstones) {
	t.Helper()
	dir, err := backup.NewDir(filepath.Join(t.TempDir(), "backups"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := backup.NewLocalTombstones(dir.Root(), clock)
	if err != nil {
		t.Fatal(err)
	}
	return newBackups(t, cfg, dir, log, clock, crypto.NewKeyring(crypto.GenerateMasterKey())), dir, log
}

func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func label(i int) string { return fmt.Sprintf("respondent %d", i) }
