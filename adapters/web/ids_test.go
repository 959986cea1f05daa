package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// A malformed form ID in the public URL is a not-found page on both databases: PostgreSQL
// refuses NUL and invalid UTF-8 in a query, which must never surface as a 500.
func TestMalformedFormIDIsNotFound(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarnessOn(t, db, nil, submission.FileLimits{}, zap.NewNop())
		for _, id := range []string{"frm_%00", "frm_%FF%FE", "frm_a%0Ab", strings.Repeat("x", 300)} {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				req := httptest.NewRequest(method, "/f/"+id, strings.NewReader(""))
				if method == http.MethodPost {
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				rec := httptest.NewRecorder()
				h.handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusNotFound {
					t.Errorf("%s /f/%s: %d, want 404", method, id, rec.Code)
				}
			}
			rec := h.get("/f/" + id + "/challenge")
			if rec.Code != http.StatusNotFound {
				t.Errorf("challenge of %s: %d, want 404", id, rec.Code)
			}
		}
	})
}

// A JSON post whose body is not valid UTF-8 is refused with 400, as the API refuses it.
func TestPublicJSONPostMustBeUTF8(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	body := `{"data": {"` + f.Fields()[0].ID + `": "Ad` + "\xff" + `a"}}`
	req := httptest.NewRequest(http.MethodPost, "/f/"+f.ID(), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "invalid_request") {
		t.Fatalf("%d %s, want 400 invalid_request", rec.Code, rec.Body.String())
	}
	if n := len(h.submissions(f)); n != 0 {
		t.Fatalf("%d stored", n)
	}
}
