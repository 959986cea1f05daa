package persistence_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/migrations"
	"github.com/formward/formward/ports"
)

var (
	runID = func() string {
		var b [4]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
	idSeq atomic.Int64
)

// newID returns a unique ID with the prefix; later IDs sort after earlier ones.
func newID(prefix string) string {
	return fmt.Sprintf("%s_%s%08d", prefix, runID, idSeq.Add(1))
}

// base is a fixed, millisecond-aligned test time.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

// repos bundles every repository over one database.
type repos struct {
	db          *persistence.DB
	cipher      ports.Cipher
	workspaces  *persistence.WorkspaceRepository
	keys        *persistence.APIKeyRepository
	dataKeys    *persistence.DataKeyRepository
	forms       *persistence.FormRepository
	submissions *persistence.SubmissionRepository
	idem        *persistence.IdempotencyStore
	outbox      *persistence.Outbox
	webhooks    *persistence.WebhookRepository
	deliveries  *persistence.DeliveryRepository
}

func newRepos(db *persistence.DB) repos {
	c := persistencetest.Cipher()
	return repos{
		db: db, cipher: c,
		workspaces:  persistence.NewWorkspaceRepository(db),
		keys:        persistence.NewAPIKeyRepository(db),
		dataKeys:    persistence.NewDataKeyRepository(db),
		forms:       persistence.NewFormRepository(db, c),
		submissions: persistence.NewSubmissionRepository(db, c, persistencetest.BlindIndex()),
		idem:        persistence.NewIdempotencyStore(db, c),
		outbox:      persistence.NewOutbox(db, c),
		webhooks:    persistence.NewWebhookRepository(db, c),
		deliveries:  persistence.NewDeliveryRepository(db, c),
	}
}

// each runs fn against SQLite and PostgreSQL with fresh repositories.
func each(t *testing.T, fn func(t *testing.T, r repos)) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) { fn(t, newRepos(db)) })
}

func mustWorkspace(t testing.TB, r repos, at time.Time) *workspace.Workspace {
	t.Helper()
	w, err := workspace.New(newID("ws"), "Acme", workspace.PlanBusiness, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.workspaces.Create(context.Background(), w); err != nil {
		t.Fatalf("create workspace: %v", err)
	}
	return w
}

// buildForm builds (without storing) a form with a text, an email and a multi-choice field.
func buildForm(t testing.TB, workspaceID string, at time.Time) *form.Form {
	t.Helper()
	desc := "Tell us about you"
	ph := "Jane"
	help := "Where we answer you.\nWe never share it."
	f, err := form.New(newID("frm"), workspaceID, form.Draft{
		Name:        "Contact",
		Description: &desc,
		Fields: []form.FieldSpec{
			{Label: "Name", Type: "text", Required: true, Placeholder: &ph},
			{Label: "Email", Type: "email", Help: &help},
			{Label: "Topics", Type: "checkbox", Options: []string{"sales", "support", "press"}},
		},
	}, func() string { return newID("fld") }, form.DefaultLimits, at)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustForm(t testing.TB, r repos, workspaceID string, at time.Time) *form.Form {
	t.Helper()
	f := buildForm(t, workspaceID, at)
	if err := r.forms.Create(context.Background(), f); err != nil {
		t.Fatalf("create form: %v", err)
	}
	return f
}

// mustUpdateAnswers changes answers of the form's submission a minute after base, with its
// submission.updated event, as an edit through the API does.
func mustUpdateAnswers(t testing.TB, r repos, f *form.Form, id string, answers map[string]submission.Input) {
	t.Helper()
	at := base.Add(time.Minute)
	_, err := r.submissions.Update(context.Background(), f.WorkspaceID(), f.ID(), id, func(s *submission.Submission) (ports.Effects, error) {
		if err := s.Update(f, answers, at); err != nil {
			return ports.Effects{}, err
		}
		return ports.Effects{Events: []event.Event{event.ForSubmission(newID("evt"), event.SubmissionUpdated, s, at)}}, nil
	})
	noErr(t, err)
}

// mustDeletedForm creates a form of the workspace and deletes it, before anything arrives for it.
func mustDeletedForm(t testing.TB, r repos, workspaceID string) *form.Form {
	t.Helper()
	f := mustForm(t, r, workspaceID, base)
	noErr(t, r.forms.Delete(context.Background(), workspaceID, f.ID()))
	return f
}

// fieldIDs returns the IDs of the text, email and checkbox fields.
func fieldIDs(f *form.Form) (name, email, topics string) {
	fs := f.Fields()
	return fs[0].ID, fs[1].ID, fs[2].ID
}

type subOpts struct {
	name      string
	email     string // "ada@example.com" when empty
	userAgent string
	referrer  string
}

func buildSubmission(t testing.TB, f *form.Form, at time.Time, o subOpts) (*submission.Submission, event.Event) {
	t.Helper()
	nameID, emailID, topicsID := fieldIDs(f)
	if o.name == "" {
		o.name = "Ada Lovelace"
	}
	if o.email == "" {
		o.email = "ada@example.com"
	}
	meta := submission.Metadata{Source: submission.SourceAPI}
	if o.userAgent != "" || o.referrer != "" {
		ua, ref, ip := o.userAgent, o.referrer, "9f86d081884c7d659a2feaa0c55ad015"
		meta = submission.Metadata{Source: submission.SourceForm, UserAgent: &ua, Referrer: &ref, IPHash: &ip,
			UTM: map[string]string{"utm_source": "newsletter", "utm_campaign": o.name + "-campaign"}}
	}
	if meta.Source == submission.SourceForm && f.Status() != form.StatusPublished {
		meta.Source = submission.SourceAPI
	}
	s, err := submission.New(newID("sub"), f, map[string]submission.Input{
		nameID:   o.name,
		emailID:  o.email,
		topicsID: []any{"sales", "press"},
	}, meta, at)
	if err != nil {
		t.Fatal(err)
	}
	return s, event.ForSubmission(newID("evt"), event.SubmissionCreated, s, at)
}

func mustAdd(t testing.TB, r repos, f *form.Form, at time.Time, o subOpts) *submission.Submission {
	t.Helper()
	s, e := buildSubmission(t, f, at, o)
	if err := r.submissions.Add(context.Background(), s, e); err != nil {
		t.Fatalf("add submission: %v", err)
	}
	return s
}

func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

// race runs attempt(i) for each i < n on a goroutine of its own, all released at once, and
// returns their errors by i.
func race(n int, attempt func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = attempt(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// winners counts the attempts of a race that succeeded; any error but lost fails the test.
func winners(t testing.TB, errs []error, lost error) int {
	t.Helper()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, lost):
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	return won
}

func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// count returns SELECT COUNT(*) of a query on the raw pool; use ? placeholders on SQLite and $n on
// PostgreSQL — tests only call it without arguments or through countWhere.
func count(t testing.TB, db *persistence.DB, query string) int64 {
	t.Helper()
	var n int64
	if err := db.SQL().QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// countWhere counts rows of table whose column equals value.
func countWhere(t testing.TB, db *persistence.DB, table, column, value string) int64 {
	t.Helper()
	ph := "?"
	if db.Dialect() == persistence.DialectPostgres {
		ph = "$1"
	}
	var n int64
	if err := db.SQL().QueryRow("SELECT COUNT(*) FROM "+table+" WHERE "+column+" = "+ph, value).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// migrationsOf returns a goose provider of the test database's own migration set, to move its
// schema down and up in migration tests.
func migrationsOf(t testing.TB, db *persistence.DB) *goose.Provider {
	t.Helper()
	dialect := goose.DialectSQLite3
	if db.Dialect() == persistence.DialectPostgres {
		dialect = goose.DialectPostgres
	}
	dir, err := fs.Sub(migrations.FS, db.Dialect())
	noErr(t, err)
	p, err := goose.NewProvider(dialect, db.SQL(), dir)
	noErr(t, err)
	return p
}
