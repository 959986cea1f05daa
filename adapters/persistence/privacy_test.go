package persistence_test

import (
	"context"
	"testing"
	"time"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

func subIDs(subs []*submission.Submission) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.ID()
	}
	return out
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// newPrivacyIndex is the privacy index of r's database under the tests' blind index.
func newPrivacyIndex(r repos) (*persistence.PrivacyIndex, ports.BlindIndex) {
	ix := persistencetest.BlindIndex()
	return persistence.NewPrivacyIndex(r.db, r.cipher, ix), ix
}

// findByEmail returns the IDs of the workspace's submissions whose email hash is hash.
func findByEmail(t *testing.T, p *persistence.PrivacyIndex, workspaceID string, hash []byte) []string {
	t.Helper()
	subs, err := p.FindByEmail(context.Background(), workspaceID, hash)
	noErr(t, err)
	return subIDs(subs)
}

// reindexAll runs the backfill in batches of batch until it is done and returns how many it indexed.
func reindexAll(t *testing.T, p *persistence.PrivacyIndex, batch int) int {
	t.Helper()
	total := 0
	for done := false; !done; {
		n, d, err := p.Reindex(context.Background(), batch)
		noErr(t, err)
		total, done = total+n, d
	}
	return total
}

// The email index is written with the submission, follows its updates and goes with it.
func TestEmailIndexFollowsSubmissions(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		privacy, ix := newPrivacyIndex(r)
		w := mustWorkspace(t, r, base)
		other := mustWorkspace(t, r, base)
		f1, f2, fo := mustForm(t, r, w.ID(), base), mustForm(t, r, w.ID(), base), mustForm(t, r, other.ID(), base)
		find := func(ws, email string) []string {
			t.Helper()
			return findByEmail(t, privacy, ws, ix.Email(ws, email))
		}
		a := mustAdd(t, r, f1, base, subOpts{})                    // ada@example.com
		b := mustAdd(t, r, f2, base.Add(time.Second), subOpts{})   // ada@example.com, another form
		c := mustAdd(t, r, fo, base.Add(2*time.Second), subOpts{}) // another workspace
		if got := find(w.ID(), " ADA@example.com "); !same(got, []string{a.ID(), b.ID()}) {
			t.Fatalf("found %v, want %v and %v, oldest first", got, a.ID(), b.ID())
		}
		if got := find(other.ID(), "ada@example.com"); !same(got, []string{c.ID()}) {
			t.Fatalf("other workspace: %v", got)
		}
		// The other workspace's hash of the same address finds nothing here.
		if got := findByEmail(t, privacy, w.ID(), ix.Email(other.ID(), "ada@example.com")); len(got) != 0 {
			t.Fatalf("a hash from another workspace found %v", got)
		}

		_, emailID, _ := fieldIDs(f1)
		mustUpdateAnswers(t, r, f1, a.ID(), map[string]submission.Input{emailID: "grace@example.com"})
		if got := find(w.ID(), "ada@example.com"); !same(got, []string{b.ID()}) {
			t.Errorf("after the update, the old address finds %v", got)
		}
		if got := find(w.ID(), "grace@example.com"); !same(got, []string{a.ID()}) {
			t.Errorf("after the update, the new address finds %v", got)
		}
		if err := r.submissions.Delete(ctx, w.ID(), f2.ID(), b.ID()); err != nil {
			t.Fatal(err)
		}
		if got := find(w.ID(), "ada@example.com"); len(got) != 0 {
			t.Errorf("a deleted submission is still indexed: %v", got)
		}
		if err := r.forms.Delete(ctx, w.ID(), f1.ID()); err != nil {
			t.Fatal(err)
		}
		if got := find(w.ID(), "grace@example.com"); len(got) != 0 {
			t.Errorf("a deleted form's submission is still indexed: %v", got)
		}
		rows := count(t, r.db, `SELECT (SELECT COUNT(*) FROM submission_email_index)
			+ (SELECT COUNT(*) FROM submissions WHERE email_hash IS NOT NULL)`)
		if rows != 1 {
			t.Errorf("%d index entries left, want 1 (the other workspace's)", rows)
		}
	})
}

// Submissions stored without an index (before migration 00090) get theirs from Reindex, in
// batches, resumably; another master key rebuilds it.
func TestEmailIndexBackfill(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		privacy, ix := newPrivacyIndex(r)
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		var subs []*submission.Submission
		for i := range 25 {
			subs = append(subs, mustAdd(t, r, f, base.Add(time.Duration(i)*time.Second), subOpts{}))
		}
		// As before the index existed.
		if _, err := r.db.SQL().ExecContext(ctx, "UPDATE submissions SET email_hash = NULL"); err != nil {
			t.Fatal(err)
		}
		find := func(bi ports.BlindIndex) int {
			t.Helper()
			return len(findByEmail(t, privacy, w.ID(), bi.Email(w.ID(), "ada@example.com")))
		}
		if find(ix) != 0 {
			t.Fatal("index not emptied")
		}
		n, done, err := privacy.Reindex(ctx, 10)
		if err != nil || n != 10 || done {
			t.Fatalf("first batch: %d, %v, %v", n, done, err)
		}
		if got := find(ix); got != 10 {
			t.Fatalf("after one batch %d found, want 10", got)
		}
		// A new repository (a restart) resumes after the last batch.
		privacy = persistence.NewPrivacyIndex(r.db, r.cipher, ix)
		if total := n + reindexAll(t, privacy, 10); total != 25 || find(ix) != 25 {
			t.Fatalf("indexed %d, found %d, want 25", total, find(ix))
		}
		if n, done, err := privacy.Reindex(ctx, 10); n != 0 || !done || err != nil {
			t.Fatalf("a finished backfill ran again: %d, %v, %v", n, done, err)
		}
		// A new master key: the index is rebuilt under the new key.
		rotated := crypto.NewBlindIndex(crypto.GenerateMasterKey())
		privacy = persistence.NewPrivacyIndex(r.db, r.cipher, rotated)
		if total := reindexAll(t, privacy, 100); total != 25 || find(rotated) != 25 || find(ix) != 0 {
			t.Fatalf("after the key change: indexed %d, new key finds %d, old key %d", total, find(rotated), find(ix))
		}
	})
}

// DeleteDeliveriesOf finds the deliveries of a form that carry the named submissions, though
// their bodies are sealed, and deletes only those.
func TestDeleteDeliveriesOfSubmissions(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		store := persistence.NewRetentionStore(r.db, r.cipher)
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		hook := mustWebhook(t, r, w.ID(), nil, nil, base)
		body := func(sub string) string {
			return `{"event":"submission.created","form_id":"` + f.ID() + `","data":{"submission_id":"` + sub + `","fields":{}}}`
		}
		var all []*webhook.Delivery
		for i := range 1200 { // more than a page
			sub := "sub_keep"
			if i%400 == 7 {
				sub = "sub_erase"
			}
			all = append(all, buildDelivery(hook, f.ID(), base.Add(time.Duration(i)*time.Millisecond), body(sub)))
		}
		if err := r.deliveries.AddAll(ctx, all); err != nil {
			t.Fatal(err)
		}
		n, err := store.DeleteDeliveriesOf(ctx, w.ID(), f.ID(), []string{"sub_erase"})
		if err != nil || n != 3 {
			t.Fatalf("deleted %d (%v), want 3", n, err)
		}
		if left := count(t, r.db, "SELECT COUNT(*) FROM deliveries"); left != 1197 {
			t.Errorf("%d deliveries left, want 1197", left)
		}
	})
}

// A form with several email fields: the first answer's hash sits in the submission's row, the
// others in submission_email_index; each address finds the submission once, an address given
// twice is indexed once, and an update that drops an address drops its entry.
func TestEmailIndexSeveralEmailFields(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		privacy, ix := newPrivacyIndex(r)
		w := mustWorkspace(t, r, base)
		f, err := form.New(newID("frm"), w.ID(), form.Draft{Name: "Referees", Fields: []form.FieldSpec{
			{Label: "Your email", Type: "email"}, {Label: "Referee", Type: "email"}, {Label: "Second referee", Type: "email"},
		}}, func() string { return newID("fld") }, form.DefaultLimits, base)
		noErr(t, err)
		noErr(t, r.forms.Create(ctx, f))
		ids := []string{f.Fields()[0].ID, f.Fields()[1].ID, f.Fields()[2].ID}
		s, err := submission.New(newID("sub"), f, map[string]submission.Input{
			ids[0]: "ada@example.com", ids[1]: "grace@example.com", ids[2]: "GRACE@example.com",
		}, submission.Metadata{Source: submission.SourceAPI}, base)
		noErr(t, err)
		noErr(t, r.submissions.Add(ctx, s, event.ForSubmission(newID("evt"), event.SubmissionCreated, s, base)))
		find := func(email string) []string {
			t.Helper()
			return findByEmail(t, privacy, w.ID(), ix.Email(w.ID(), email))
		}
		for _, email := range []string{"ada@example.com", "grace@example.com"} {
			if got := find(email); !same(got, []string{s.ID()}) {
				t.Errorf("%s finds %v, want %v once", email, got, s.ID())
			}
		}
		if n := count(t, r.db, "SELECT COUNT(*) FROM submission_email_index"); n != 1 {
			t.Errorf("%d rows in submission_email_index, want 1 (grace; ada is in the row, the repeat is dropped)", n)
		}
		mustUpdateAnswers(t, r, f, s.ID(), map[string]submission.Input{ids[1]: nil, ids[2]: nil})
		if got := find("grace@example.com"); len(got) != 0 {
			t.Errorf("a dropped address still finds %v", got)
		}
		if got := find("ada@example.com"); !same(got, []string{s.ID()}) {
			t.Errorf("the kept address finds %v", got)
		}
	})
}

// Migration 00110 moves each submission's first index row into submissions.email_hash and
// back down again; lookups find the same submissions on both sides.
func TestEmailHashMigration(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		privacy, ix := newPrivacyIndex(r)
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		a := mustAdd(t, r, f, base, subOpts{})
		b := mustAdd(t, r, f, base.Add(time.Second), subOpts{})
		p := migrationsOf(t, r.db)
		_, err := p.DownTo(ctx, 100)
		noErr(t, err)
		if n := count(t, r.db, "SELECT COUNT(*) FROM submission_email_index"); n != 2 {
			t.Fatalf("after 00110 down, %d index rows, want 2", n)
		}
		_, err = p.Up(ctx)
		noErr(t, err)
		if n := count(t, r.db, "SELECT COUNT(*) FROM submission_email_index"); n != 0 {
			t.Errorf("after 00110 up, %d index rows, want 0 (both moved into their submissions)", n)
		}
		if n := count(t, r.db, "SELECT COUNT(*) FROM submissions WHERE email_hash IS NOT NULL"); n != 2 {
			t.Errorf("after 00110 up, %d submissions carry their hash, want 2", n)
		}
		if got := findByEmail(t, privacy, w.ID(), ix.Email(w.ID(), "ada@example.com")); !same(got, []string{a.ID(), b.ID()}) {
			t.Errorf("found %v, want %v and %v", got, a.ID(), b.ID())
		}
	})
}
