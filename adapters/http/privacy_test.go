package httpapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// Privacy requests need the admin scope: read-write and read-only keys get 403.
func TestPrivacyRequestsNeedAdmin(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		for _, path := range []string{"/v1/privacy/export", "/v1/privacy/erase"} {
			for key, want := range map[string]int{"admin": 200, "read-write": 403, "read-only": 403, "revoked": 401} {
				r := h.do("POST", path, h.keys[key], map[string]any{"email": "jane@example.org"})
				if r.Code != want {
					t.Errorf("%s with a %s key: %d, want %d; %s", path, key, r.Code, want, r.Body.String())
				}
				if want == 403 && r.errorCode() != "forbidden" {
					t.Errorf("%s with a %s key: code %q", path, key, r.errorCode())
				}
			}
			h.expect(h.do("POST", path, "", map[string]any{"email": "jane@example.org"}), 401, "")
			h.expect(h.do("POST", path, h.keys["admin"], map[string]any{}), 422, "validation_failed")
			h.expect(h.do("POST", path, h.keys["admin"], map[string]any{"email": "not an address"}), 422, "validation_failed")
			h.expect(h.do("POST", path, h.keys["admin"], map[string]any{"email": "jane@example.org", "name": "Jane"}), 422, "validation_failed")
		}
	})
}

// A respondent's submissions are found across forms by their email answer (trimmed, any case),
// shown as the API shows them (uploads as signed links), and erased; other respondents and
// other workspaces are untouched, and the audit log records counts, never the address.
func TestPrivacyExportAndErase(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		ctx := context.Background()
		h := newHarness(t, db, httpapi.Options{FileURL: signedLinks()})
		f1 := h.createForm(map[string]any{"label": "Email", "type": "email"}, map[string]any{"label": "CV", "type": "file"})
		f2 := h.createForm(map[string]any{"label": "Name", "type": "text"}, map[string]any{"label": "Work email", "type": "email"})
		id1, id2 := f1["id"].(string), f2["id"].(string)
		h.expect(h.do("PATCH", "/v1/forms/"+id1, h.keys["admin"], map[string]any{"status": "published"}), 200, "")

		// An upload on form 1, stored as the public capture stores it.
		admin := auth.WithPrincipal(ctx, auth.Principal{WorkspaceID: h.wsA, Scope: "admin"})
		form1, err := h.app.Queries.GetForm.Handle(admin, forms.GetForm{ID: id1})
		if err != nil {
			t.Fatal(err)
		}
		emailField, fileField := fieldIDs(f1)[0], fieldIDs(f1)[1]
		draft, err := submission.Prepare(form1.Form, map[string]submission.Input{
			emailField: " Jane@Example.org",
			fileField:  []submission.FileInfo{{Name: "cv.txt", Size: 4, Declared: "text/plain", Sniffed: "text/plain"}},
		}, submission.Metadata{}, submission.FileLimits{PerField: 10, PerPost: 20})
		if err != nil {
			t.Fatal(err)
		}
		subID := "sub_" + strings.Repeat("j", 22) + "0001"
		past := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
		key := ports.SubmissionFilesPrefix(h.wsA, id1, subID) + "obj_1/cv.txt"
		if err := draft.Attach(fileField, []string{key}); err != nil {
			t.Fatal(err)
		}
		uploaded, err := draft.Submit(subID, past)
		if err != nil {
			t.Fatal(err)
		}
		repo := persistence.NewSubmissionRepository(db, persistencetest.Cipher(), persistencetest.BlindIndex())
		if err := repo.Add(ctx, uploaded, event.ForSubmission("evt_"+strings.Repeat("j", 26), event.SubmissionCreated, uploaded, past)); err != nil {
			t.Fatal(err)
		}
		post := func(formID string, data map[string]any) string {
			t.Helper()
			r := h.do("POST", "/v1/forms/"+formID+"/submissions", h.keys["read-write"], map[string]any{"data": data})
			h.expect(r, 201, "")
			return r.json["id"].(string)
		}
		second := post(id2, map[string]any{fieldIDs(f2)[0]: "Jane", fieldIDs(f2)[1]: "jane@example.org"})
		someoneElse := post(id2, map[string]any{fieldIDs(f2)[0]: "John", fieldIDs(f2)[1]: "john@example.org"})
		// Another workspace's respondent with the same address is not this workspace's.
		fb := h.do("POST", "/v1/forms", h.keys["other"], map[string]any{"name": "B", "fields": []map[string]any{{"label": "Email", "type": "email"}}})
		h.expect(fb, 201, "")
		rb := h.do("POST", "/v1/forms/"+fb.json["id"].(string)+"/submissions", h.keys["other"], map[string]any{"data": map[string]any{fieldIDs(fb.json)[0]: "jane@example.org"}})
		h.expect(rb, 201, "")

		r := h.do("POST", "/v1/privacy/export", h.keys["admin"], map[string]any{"email": "JANE@example.org "})
		h.expect(r, 200, "")
		subs := r.json["submissions"].([]any)
		if len(subs) != 2 {
			t.Fatalf("exported %d submissions, want 2: %s", len(subs), r.Body.String())
		}
		first := subs[0].(map[string]any)
		if first["id"] != subID || subs[1].(map[string]any)["id"] != second {
			t.Fatalf("exported %v and %v, want %s then %s (oldest first)", first["id"], subs[1].(map[string]any)["id"], subID, second)
		}
		link := first["data"].(map[string]any)[fileField].([]any)[0].(string)
		if !strings.HasPrefix(link, testPublicURL+"/files/"+key+"?expires=") || !strings.Contains(link, "sig=") {
			t.Errorf("upload exported as %q, want a signed link", link)
		}

		r = h.do("POST", "/v1/privacy/erase", h.keys["admin"], map[string]any{"email": "jane@example.org"})
		h.expect(r, 200, "")
		if r.json["submissions_deleted"] != float64(2) {
			t.Fatalf("erase: %s", r.Body.String())
		}
		h.expect(h.do("GET", "/v1/forms/"+id1+"/submissions/"+subID, h.keys["read-only"], nil), 404, "not_found")
		h.expect(h.do("GET", "/v1/forms/"+id2+"/submissions/"+second, h.keys["read-only"], nil), 404, "not_found")
		h.expect(h.do("GET", "/v1/forms/"+id2+"/submissions/"+someoneElse, h.keys["read-only"], nil), 200, "")
		h.expect(h.do("GET", "/v1/forms/"+fb.json["id"].(string)+"/submissions/"+rb.json["id"].(string), h.keys["other"], nil), 200, "")

		r = h.do("POST", "/v1/privacy/export", h.keys["admin"], map[string]any{"email": "jane@example.org"})
		h.expect(r, 200, "")
		if n := len(r.json["submissions"].([]any)); n != 0 {
			t.Errorf("%d submissions exported after the erase", n)
		}
		r = h.do("POST", "/v1/privacy/erase", h.keys["admin"], map[string]any{"email": "jane@example.org"})
		h.expect(r, 200, "")
		if r.json["submissions_deleted"] != float64(0) {
			t.Errorf("second erase: %s", r.Body.String())
		}

		rows, err := db.SQL().QueryContext(ctx, "SELECT action, details FROM audit_events WHERE action LIKE 'privacy.%' ORDER BY created_at, id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var action, details string
			if err := rows.Scan(&action, &details); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.ToLower(details), "example.org") {
				t.Errorf("%s details hold the address: %s", action, details)
			}
			got = append(got, action+" "+details)
		}
		want := []string{`privacy.exported {"submissions":2}`, `privacy.erased {"deliveries_deleted":0,"drafts_deleted":0,"files_deleted":1,"submissions_deleted":2}`,
			`privacy.exported {"submissions":0}`, `privacy.erased {"deliveries_deleted":0,"drafts_deleted":0,"files_deleted":0,"submissions_deleted":0}`}
		slices.Sort(got)
		slices.Sort(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
