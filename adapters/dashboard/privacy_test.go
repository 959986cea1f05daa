package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// privacyHarness is the dashboard harness with the privacy use cases' ports.
func privacyHarness(t *testing.T, db *persistence.DB) *harness {
	t.Helper()
	return newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
		cipher := persistencetest.Cipher()
		d.Retention = persistence.NewRetentionStore(db, cipher)
		d.Privacy = persistence.NewPrivacyIndex(db, cipher, persistencetest.BlindIndex())
		d.BlindIndex = persistencetest.BlindIndex()
	})
}

// seedRespondent stores, in the owner's workspace, a form with an email field and one
// submission per address given; it returns the submissions.
func seedRespondent(t *testing.T, db *persistence.DB, formName string, emails ...string) []*submission.Submission {
	t.Helper()
	ctx := context.Background()
	var wsID string
	if err := db.SQL().QueryRowContext(ctx, "SELECT id FROM workspaces").Scan(&wsID); err != nil {
		t.Fatalf("read workspace: %v", err)
	}
	ids := system.NewIDs()
	now := time.Now().UTC()
	f, err := form.New(ids.New("frm"), wsID, form.Draft{Name: formName, Fields: []form.FieldSpec{
		{Label: "Name", Type: "text"}, {Label: "Email", Type: "email"}}}, func() string { return ids.New("fld") }, form.DefaultLimits, now)
	if err != nil {
		t.Fatal(err)
	}
	cipher := persistencetest.Cipher()
	if err := persistence.NewFormRepository(db, cipher).Create(ctx, f); err != nil {
		t.Fatalf("create form: %v", err)
	}
	subs := persistence.NewSubmissionRepository(db, cipher, persistencetest.BlindIndex())
	var out []*submission.Submission
	for i, e := range emails {
		at := now.Add(time.Duration(i) * time.Millisecond)
		s, err := submission.New(ids.New("sub"), f, map[string]submission.Input{f.Fields()[0].ID: "PRIVMARK respondent", f.Fields()[1].ID: e},
			submission.Metadata{Source: submission.SourceAPI}, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := subs.Add(ctx, s, event.ForSubmission(ids.New("evt"), event.SubmissionCreated, s, at)); err != nil {
			t.Fatalf("add submission: %v", err)
		}
		out = append(out, s)
	}
	return out
}

// TestPrivacyRequests: an owner exports a respondent's submissions across forms as JSON, then
// erases them after a confirmation page that counts them; an editor may do neither; the
// address appears in no URL, flash or audit entry.
func TestPrivacyRequests(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := privacyHarness(t, db)
		owner := h.owner()
		editor := h.member(owner, "grace@example.org", "editor")
		jane1 := seedRespondent(t, db, "Contact", "Jane.Doe@example.net", "other@example.net")
		jane2 := seedRespondent(t, db, "Newsletter", "jane.doe@example.net")
		other := jane1[1]

		editor.get("/app/settings/privacy").expect(t, http.StatusForbidden)
		editor.post("/app/settings/privacy/export", url.Values{"email": {"jane.doe@example.net"}}).expect(t, http.StatusForbidden)
		editor.post("/app/settings/privacy/erase/confirm", url.Values{"email": {"jane.doe@example.net"}}).expect(t, http.StatusForbidden)

		pg := owner.get("/app/settings/privacy").expect(t, http.StatusOK)
		if !strings.Contains(pg.body, `href="/app/settings/privacy" aria-current="page"`) || !strings.Contains(pg.body, `formaction="/app/settings/privacy/erase"`) {
			t.Fatalf("privacy page: navigation entry or erase button missing: %s", text(pg.body))
		}
		bad := owner.post("/app/settings/privacy/export", url.Values{"email": {"not an address"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(bad.body, `aria-invalid="true"`) || !strings.Contains(bad.body, `value="not an address"`) {
			t.Fatalf("an invalid address is not shown next to the field: %s", text(bad.body))
		}

		exp := owner.post("/app/settings/privacy/export", url.Values{"email": {"  JANE.DOE@example.net "}}).expect(t, http.StatusOK)
		if cd := exp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || strings.Contains(cd, "jane") {
			t.Fatalf("export Content-Disposition %q", cd)
		}
		var got struct {
			Submissions []struct {
				ID     string         `json:"id"`
				FormID string         `json:"form_id"`
				Data   map[string]any `json:"data"`
			} `json:"submissions"`
		}
		if err := json.Unmarshal([]byte(exp.body), &got); err != nil {
			t.Fatalf("export is not JSON: %v: %s", err, exp.body)
		}
		if len(got.Submissions) != 2 || got.Submissions[0].ID != jane1[0].ID() || got.Submissions[1].ID != jane2[0].ID() {
			t.Fatalf("export: %+v, want %s then %s", got.Submissions, jane1[0].ID(), jane2[0].ID())
		}
		if !strings.Contains(exp.body, "Jane.Doe@example.net") || !strings.Contains(exp.body, "PRIVMARK respondent") {
			t.Fatalf("export lacks the answers: %s", exp.body)
		}

		asked := owner.post("/app/settings/privacy/erase", url.Values{"email": {"jane.doe@example.net"}}).redirectsTo(t, "/app/settings/privacy/erase?shown=")
		if loc := asked.Header.Get("Location"); strings.Contains(strings.ToLower(loc), "jane") {
			t.Fatalf("the address is in the redirect: %s", loc)
		}
		var sealedAddress int
		if err := db.SQL().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM flashes WHERE LOWER(CAST(sealed AS TEXT)) LIKE '%jane%'").Scan(&sealedAddress); err != nil {
			t.Fatal(err)
		}
		if sealedAddress != 0 {
			t.Fatal("the address waits in clear for the confirmation page")
		}
		conf := owner.get(asked.Header.Get("Location")).expect(t, http.StatusOK)
		ct := text(conf.body)
		if !strings.Contains(ct, "2 submissions in 2 forms") || !strings.Contains(ct, "Erase 2 submissions") ||
			!strings.Contains(conf.body, `action="/app/settings/privacy/erase/confirm"`) {
			t.Fatalf("confirmation page: %s", ct)
		}
		// A reload of the confirmation page asks for the address again.
		owner.get(asked.Header.Get("Location")).redirectsTo(t, "/app/settings/privacy")
		if p := text(owner.get("/app/settings/privacy").expect(t, http.StatusOK).body); !strings.Contains(p, "Enter the address again") {
			t.Fatalf("after reloading the confirmation page: %s", p)
		}
		// Asking for confirmation deleted nothing.
		ctx := context.Background()
		subs := persistence.NewSubmissionRepository(db, persistencetest.Cipher(), persistencetest.BlindIndex())
		if _, err := subs.Get(ctx, jane1[0].WorkspaceID(), jane1[0].FormID(), jane1[0].ID()); err != nil {
			t.Fatalf("the confirmation page deleted a submission: %v", err)
		}

		done := owner.post("/app/settings/privacy/erase/confirm", url.Values{"email": {"jane.doe@example.net"}}).redirectsTo(t, "/app/settings/privacy")
		if loc := done.Header.Get("Location"); strings.Contains(loc, "jane") {
			t.Fatalf("the address is in the redirect: %s", loc)
		}
		after := text(owner.get("/app/settings/privacy").expect(t, http.StatusOK).body)
		if !strings.Contains(after, "2 submissions deleted") {
			t.Fatalf("no count after erasing: %s", after)
		}
		for _, s := range []*submission.Submission{jane1[0], jane2[0]} {
			if _, err := subs.Get(ctx, s.WorkspaceID(), s.FormID(), s.ID()); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("erased submission %s: %v", s.ID(), err)
			}
		}
		if _, err := subs.Get(ctx, other.WorkspaceID(), other.FormID(), other.ID()); err != nil {
			t.Fatalf("another respondent's submission went too: %v", err)
		}
		again := owner.postFollow("/app/settings/privacy/erase", url.Values{"email": {"jane.doe@example.net"}})
		if !strings.Contains(text(again.body), "nothing to erase") {
			t.Fatalf("a repeated request: %s", text(again.body))
		}

		log := text(owner.get("/app/settings/audit-log").expect(t, http.StatusOK).body)
		if !strings.Contains(log, "privacy.exported") || !strings.Contains(log, "privacy.erased") {
			t.Fatalf("the audit log lacks the privacy events: %s", log)
		}
		var leaked int
		if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM audit_events WHERE LOWER(CAST(details AS TEXT)) LIKE '%jane%'").Scan(&leaked); err != nil {
			t.Fatalf("read audit events: %v", err)
		}
		if leaked != 0 {
			t.Fatalf("%d audit events hold the address", leaked)
		}
	})
}
