package persistence_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/auth"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// keyedAt is when the Idempotency-Keys of these tests are stored; they are read an hour later,
// well within their 24 hours.
var keyedAt = base

// postedWithKey stores the response of the POST that created s under key, as the API's
// idempotent middleware does, and returns the request's fingerprint.
func postedWithKey(t *testing.T, r repos, s *submission.Submission, key string) []byte {
	t.Helper()
	ctx := context.Background()
	fp := []byte("fingerprint of " + key)
	got, err := r.idem.Reserve(ctx, s.WorkspaceID(), "api", key, fp, keyedAt)
	noErr(t, err)
	if got != nil {
		t.Fatalf("key %s already held", key)
	}
	noErr(t, r.idem.Complete(ctx, s.WorkspaceID(), "api", key, ports.StoredResponse{Status: 201, Body: createdBody(s), SubmissionID: s.ID()}))
	return fp
}

func createdBody(s *submission.Submission) []byte {
	return []byte(`{"id":"` + s.ID() + `","data":{"name":"Ada Lovelace","email":"ada@example.com"}}`)
}

// keyed is a submission created through the API with an Idempotency-Key.
type keyed struct {
	sub *submission.Submission
	key string
	fp  []byte
}

func addKeyed(t *testing.T, r repos, f *form.Form, at time.Time, o subOpts) keyed {
	t.Helper()
	s := mustAdd(t, r, f, at, o)
	key := newID("key")
	return keyed{sub: s, key: key, fp: postedWithKey(t, r, s, key)}
}

// forgotten checks that k's stored response is gone while the key and its fingerprint stay: the
// same request again is told the submission was deleted, another one that the key is taken.
func (k keyed) forgotten(t *testing.T, r repos) {
	t.Helper()
	ctx := context.Background()
	ws := k.sub.WorkspaceID()
	got, err := r.idem.Reserve(ctx, ws, "api", k.key, k.fp, keyedAt.Add(time.Hour))
	if got != nil {
		t.Fatalf("the key of deleted %s still replays %d %s", k.sub.ID(), got.Status, got.Body)
	}
	wantErr(t, err, ports.ErrIdempotentSubmissionDeleted)
	_, err = r.idem.Reserve(ctx, ws, "api", k.key, []byte("another body"), keyedAt.Add(time.Hour))
	wantErr(t, err, ports.ErrIdempotencyKeyReused)
	var status sql.NullInt64
	var body, fp []byte
	var sid sql.NullString
	err = r.db.SQL().QueryRowContext(ctx, "SELECT status, body, fingerprint, submission_id FROM idempotency_keys WHERE workspace_id = $1 AND key = $2",
		ws, k.key).Scan(&status, &body, &fp, &sid)
	noErr(t, err)
	if status.Valid || body != nil || string(fp) != string(k.fp) || sid.String != k.sub.ID() {
		t.Fatalf("row of %s: status %v, body %d bytes, fingerprint %q, submission %q; want no response, the fingerprint and the ID",
			k.key, status, len(body), fp, sid.String)
	}
}

// replays checks that k's stored response is still there.
func (k keyed) replays(t *testing.T, r repos) {
	t.Helper()
	got, err := r.idem.Reserve(context.Background(), k.sub.WorkspaceID(), "api", k.key, k.fp, keyedAt.Add(time.Hour))
	noErr(t, err)
	if got == nil || got.Status != 201 || string(got.Body) != string(createdBody(k.sub)) {
		t.Fatalf("the key of kept %s replays %+v", k.sub.ID(), got)
	}
}

// keyScene is a starter workspace with two forms: gone (on form f, received 400 days before
// keyedAt, with the email gone@example.com) and kept (on form f2, received at keyedAt), both
// created with an Idempotency-Key; and elsewhere, the same in a business workspace.
type keyScene struct {
	w, other        *workspace.Workspace
	f, f2           *form.Form
	gone, kept      keyed
	elsewhere       keyed
	plainKey        string // a key of a POST that created no submission, in w
	plainFP         []byte
	oldAt, recentAt time.Time
}

func newKeyScene(t *testing.T, r repos) keyScene {
	t.Helper()
	ctx := context.Background()
	sc := keyScene{oldAt: keyedAt.Add(-400 * 24 * time.Hour), recentAt: keyedAt}
	var err error
	sc.w, err = workspace.New(newID("ws"), "Acme", workspace.PlanStarter, sc.oldAt)
	noErr(t, err)
	noErr(t, r.workspaces.Create(ctx, sc.w))
	sc.other = mustWorkspace(t, r, sc.oldAt)
	sc.f, sc.f2 = mustForm(t, r, sc.w.ID(), sc.oldAt), mustForm(t, r, sc.w.ID(), sc.oldAt)
	sc.gone = addKeyed(t, r, sc.f, sc.oldAt, subOpts{email: "gone@example.com"})
	sc.kept = addKeyed(t, r, sc.f2, sc.recentAt, subOpts{email: "kept@example.com"})
	sc.elsewhere = addKeyed(t, r, mustForm(t, r, sc.other.ID(), sc.oldAt), sc.oldAt, subOpts{email: "gone@example.com"})
	sc.plainKey, sc.plainFP = newID("key"), []byte("a form's creation")
	_, err = r.idem.Reserve(ctx, sc.w.ID(), "api", sc.plainKey, sc.plainFP, keyedAt)
	noErr(t, err)
	noErr(t, r.idem.Complete(ctx, sc.w.ID(), "api", sc.plainKey, ports.StoredResponse{Status: 201, Body: []byte(`{"id":"frm_x"}`)}))
	return sc
}

func (sc keyScene) refs() []ports.SubmissionRef {
	s := sc.gone.sub
	return []ports.SubmissionRef{{WorkspaceID: s.WorkspaceID(), FormID: s.FormID(), ID: s.ID(), SubmittedAt: s.SubmittedAt()}}
}

func retentionAt(r repos, now time.Time) workspaceapp.RunRetentionHandler {
	return workspaceapp.NewRunRetentionHandler(r.workspaces, r.forms, persistence.NewRetentionStore(r.db, r.cipher), nil,
		persistence.NewAuditLog(r.db), nil, nil, r.idem, persistence.NewFlashRepository(r.db), system.NewIDs(), clockAt{now}, 0)
}

// deletionPath is one way a submission is deleted, acted out on a keyScene: the scene's gone
// submission goes; wholeWorkspace says its workspace's kept submission goes too.
type deletionPath struct {
	name           string
	wholeWorkspace bool
	delete         func(t *testing.T, sc keyScene)
}

// deletionPaths are every way a submission is deleted: through the API or the dashboard, a
// retention batch or pass, a privacy erasure, its form's deletion, its workspace's deletion or
// purge, and a restore re-applying a tombstone.
func deletionPaths(r repos) []deletionPath {
	ctx := context.Background()
	store := persistence.NewRetentionStore(r.db, r.cipher)
	return []deletionPath{
		{"API or dashboard deletion", false, func(t *testing.T, sc keyScene) {
			noErr(t, r.submissions.Delete(ctx, sc.w.ID(), sc.f.ID(), sc.gone.sub.ID()))
		}},
		{"retention batch", false, func(t *testing.T, sc keyScene) {
			res, err := store.DeleteSubmissions(ctx, sc.refs(), nil)
			noErr(t, err)
			if res.Deleted != 1 {
				t.Fatalf("deleted %d", res.Deleted)
			}
		}},
		{"retention pass", false, func(t *testing.T, sc keyScene) {
			res, err := retentionAt(r, keyedAt).Handle(ctx, workspaceapp.RunRetention{})
			noErr(t, err)
			if res.SubmissionsDeleted != 1 {
				t.Fatalf("retention deleted %d, want the old one", res.SubmissionsDeleted)
			}
		}},
		{"privacy erasure", false, func(t *testing.T, sc keyScene) {
			erase := workspaceapp.NewPrivacyEraseHandler(persistence.NewPrivacyIndex(r.db, r.cipher, persistencetest.BlindIndex()),
				persistencetest.BlindIndex(), r.forms, store, nil, system.NewIDs(), clockAt{keyedAt})
			res, err := erase.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(sc.w.ID())), workspaceapp.PrivacyErase{Email: "gone@example.com"})
			noErr(t, err)
			if res.SubmissionsDeleted != 1 {
				t.Fatalf("erased %d", res.SubmissionsDeleted)
			}
		}},
		{"form deletion", false, func(t *testing.T, sc keyScene) {
			noErr(t, r.forms.Delete(ctx, sc.w.ID(), sc.f.ID()))
		}},
		{"workspace deletion", true, func(t *testing.T, sc keyScene) {
			_, err := r.workspaces.Update(ctx, sc.w.ID(), func(w *workspace.Workspace) (ports.Effects, error) {
				cancelled := string(workspace.StatusCancelled)
				_, err := w.Change(workspace.Settings{Status: &cancelled}, keyedAt.Add(-91*24*time.Hour))
				return ports.Effects{}, err
			})
			noErr(t, err)
			res, err := retentionAt(r, keyedAt).Handle(ctx, workspaceapp.RunRetention{})
			noErr(t, err)
			if res.WorkspacesDeleted != 1 || res.SubmissionsDeleted != 2 {
				t.Fatalf("retention %+v, want the workspace and its 2 submissions", res)
			}
		}},
		{"workspace purge's last transaction", true, func(t *testing.T, sc keyScene) {
			// Submissions captured while the purge ran go with their forms at its end.
			_, err := store.PurgeWorkspaceData(ctx, sc.w.ID(), 10, nil)
			noErr(t, err)
		}},
		{"restore re-applying a submission's tombstone", false, func(t *testing.T, sc keyScene) {
			_, err := persistence.NewTombstoneRepository(r.db).Apply(ctx, []ports.Tombstone{
				{Kind: ports.TombstoneSubmission, ID: sc.gone.sub.ID(), WorkspaceID: sc.w.ID()}})
			noErr(t, err)
		}},
		{"restore re-applying a form's tombstone", false, func(t *testing.T, sc keyScene) {
			_, err := persistence.NewTombstoneRepository(r.db).Apply(ctx, []ports.Tombstone{
				{Kind: ports.TombstoneForm, ID: sc.f.ID(), WorkspaceID: sc.w.ID()}})
			noErr(t, err)
		}},
	}
}

// Every way a submission is deleted deletes the stored response of the POST that created it,
// in the same transaction, and keeps the key with its fingerprint: a replay is refused with
// ports.ErrIdempotentSubmissionDeleted. Other submissions' responses stay.
func TestDeletionForgetsIdempotentResponses(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		for _, c := range deletionPaths(r) {
			t.Run(c.name, func(t *testing.T) {
				sc := newKeyScene(t, r)
				c.delete(t, sc)
				sc.gone.forgotten(t, r)
				if c.wholeWorkspace {
					sc.kept.forgotten(t, r)
				} else {
					sc.kept.replays(t, r)
				}
				sc.elsewhere.replays(t, r)
			})
		}
	})
}

// A workspace's purge deletes the keys of requests that created no submission, and keeps
// those of its deleted submissions (without their responses).
func TestWorkspacePurgeKeepsOnlyKeysOfDeletedSubmissions(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		sc := newKeyScene(t, r)
		_, err := persistence.NewRetentionStore(r.db, r.cipher).PurgeWorkspaceData(ctx, sc.w.ID(), 1, nil)
		noErr(t, err)
		if got, err := r.idem.Reserve(ctx, sc.w.ID(), "api", sc.plainKey, sc.plainFP, keyedAt.Add(time.Hour)); err != nil || got != nil {
			t.Fatalf("the form creation's key after the purge: %+v, %v; want it gone", got, err)
		}
		sc.gone.forgotten(t, r)
		sc.kept.forgotten(t, r)
	})
}

// A response completed after its submission was deleted is not stored: the key is forgotten.
// Deletions racing completions never leave a response behind (on PostgreSQL the completion
// locks the submission's row; on SQLite writes take turns).
func TestCompletionAfterDeletionStoresNoResponse(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		s := mustAdd(t, r, f, base, subOpts{})
		k := keyed{sub: s, key: newID("key"), fp: []byte("late")}
		_, err := r.idem.Reserve(ctx, w.ID(), "api", k.key, k.fp, keyedAt)
		noErr(t, err)
		noErr(t, r.submissions.Delete(ctx, w.ID(), f.ID(), s.ID()))
		noErr(t, r.idem.Complete(ctx, w.ID(), "api", k.key, ports.StoredResponse{Status: 201, Body: createdBody(s), SubmissionID: s.ID()}))
		k.forgotten(t, r)

		for range 20 {
			s := mustAdd(t, r, f, base, subOpts{})
			k := keyed{sub: s, key: newID("key"), fp: []byte("racing")}
			_, err := r.idem.Reserve(ctx, w.ID(), "api", k.key, k.fp, keyedAt)
			noErr(t, err)
			var wg sync.WaitGroup
			wg.Go(func() {
				err := r.idem.Complete(ctx, w.ID(), "api", k.key, ports.StoredResponse{Status: 201, Body: createdBody(s), SubmissionID: s.ID()})
				if err != nil {
					t.Error(err)
				}
			})
			wg.Go(func() {
				if err := r.submissions.Delete(ctx, w.ID(), f.ID(), s.ID()); err != nil {
					t.Error(err)
				}
			})
			wg.Wait()
			k.forgotten(t, r)
		}
	})
}

// Migration 00160 adds idempotency_keys.submission_id (and its index): a key stored before it
// keeps its response, which still replays; down and up again keep every row.
func TestIdempotencySubmissionMigration(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		p := migrationsOf(t, r.db)
		_, err := p.DownTo(ctx, 150)
		noErr(t, err)
		body := []byte(`{"id":"sub_before"}`)
		sealed, err := r.cipher.Seal(ctx, "wsp_x", body, []byte("idempotency_keys/api/before"))
		noErr(t, err)
		_, err = r.db.SQL().ExecContext(ctx, `INSERT INTO idempotency_keys (workspace_id, scope, key, fingerprint, status, body, created_at)
			VALUES ('wsp_x', 'api', 'before', $1, 201, $2, $3)`, []byte("fp"), sealed, keyedAt.UnixMilli())
		noErr(t, err)
		_, err = p.Up(ctx)
		noErr(t, err)
		if n := count(t, r.db, "SELECT COUNT(*) FROM idempotency_keys WHERE submission_id IS NULL"); n != 1 {
			t.Fatalf("%d rows without a submission after 00160 up, want the one stored before", n)
		}
		got, err := r.idem.Reserve(ctx, "wsp_x", "api", "before", []byte("fp"), keyedAt.Add(time.Hour))
		noErr(t, err)
		if got == nil || got.Status != 201 || string(got.Body) != string(body) {
			t.Fatalf("the key stored before 00160 replays %+v", got)
		}
		_, err = p.DownTo(ctx, 150)
		noErr(t, err)
		if n := count(t, r.db, "SELECT COUNT(*) FROM idempotency_keys"); n != 1 {
			t.Fatalf("%d rows after 00160 down", n)
		}
		_, err = p.Up(ctx)
		noErr(t, err)
	})
}

// The retention job purges Idempotency-Keys once their 24 hours are over, stored responses and
// all, however many there are; younger keys stay.
func TestRetentionPurgesExpiredKeys(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		old := addKeyed(t, r, mustForm(t, r, w.ID(), base), base, subOpts{})
		_, err := r.db.SQL().ExecContext(ctx, `INSERT INTO idempotency_keys (workspace_id, scope, key, fingerprint, status, body, created_at)
			SELECT $1, 'api', 'bulk-' || CAST(n AS TEXT), $2, 201, $2, CAST($3 AS BIGINT) + n % 700 FROM (
				WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 2500) SELECT n FROM seq) numbers`,
			w.ID(), []byte("sealed"), keyedAt.UnixMilli())
		noErr(t, err)
		young := newID("key")
		_, err = r.idem.Reserve(ctx, w.ID(), "api", young, []byte("young"), keyedAt.Add(2*time.Hour))
		noErr(t, err)
		_, err = retentionAt(r, keyedAt.Add(25*time.Hour)).Handle(ctx, workspaceapp.RunRetention{})
		noErr(t, err)
		if n := count(t, r.db, "SELECT COUNT(*) FROM idempotency_keys"); n != 1 {
			t.Fatalf("%d keys after the pass, want the young one", n)
		}
		if countWhere(t, r.db, "idempotency_keys", "key", young) != 1 || countWhere(t, r.db, "idempotency_keys", "key", old.key) != 0 {
			t.Fatal("the pass purged the wrong keys")
		}
	})
}
