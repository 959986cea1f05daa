package httpapi_test

import (
	"strings"
	"testing"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

// The stored response of a POST that created a submission goes with the submission, however
// it is deleted: the same request again gets 409 conflict saying the submission was deleted,
// without its answers and without creating it again. Another body under the key is still the
// Idempotency-Key's own conflict.
func TestReplayOfADeletedSubmission(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		for _, c := range []struct {
			name   string
			delete func(h *harness, formID, submissionID, email string)
		}{
			{"deleted through the API", func(h *harness, formID, submissionID, _ string) {
				h.expect(h.do("DELETE", "/v1/forms/"+formID+"/submissions/"+submissionID, h.keys["read-write"], nil), 204, "")
			}},
			{"erased", func(h *harness, _, _, email string) {
				r := h.do("POST", "/v1/privacy/erase", h.keys["admin"], map[string]any{"email": email})
				h.expect(r, 200, "")
				if r.json["submissions_deleted"] != float64(1) {
					h.t.Fatalf("erase: %s", r.Body.String())
				}
			}},
			{"with its form", func(h *harness, formID, _, _ string) {
				h.expect(h.do("DELETE", "/v1/forms/"+formID, h.keys["read-write"], nil), 204, "")
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				h := newHarness(t, db, httpapi.Options{})
				key := h.keys["read-write"]
				f := h.createForm(contactFields...)
				formID := f["id"].(string)
				email := "ada-" + strings.ReplaceAll(c.name, " ", "-") + "@example.org"
				body := map[string]any{"data": map[string]any{fieldIDs(f)[0]: "Ada Lovelace", fieldIDs(f)[1]: email}}
				idemKey := "create " + c.name
				first := h.do("POST", "/v1/forms/"+formID+"/submissions", key, body, "Idempotency-Key", idemKey)
				h.expect(first, 201, "")
				c.delete(h, formID, first.json["id"].(string), email)

				again := h.do("POST", "/v1/forms/"+formID+"/submissions", key, body, "Idempotency-Key", idemKey)
				h.expect(again, 409, "conflict")
				if msg := errorMessage(again); msg != "the submission this key created has been deleted" {
					t.Errorf("replay message %q", msg)
				}
				if strings.Contains(again.Body.String(), "Ada") || again.Header().Get("Idempotent-Replayed") != "" {
					t.Errorf("the replay shows the deleted answers: %s", again.Body.String())
				}
				if c.name != "with its form" {
					list := h.do("GET", "/v1/forms/"+formID+"/submissions", key, nil)
					h.expect(list, 200, "")
					if n := len(list.json["data"].([]any)); n != 0 {
						t.Errorf("the replay created %d submissions", n)
					}
				}
				other := h.do("POST", "/v1/forms/"+formID+"/submissions", key, map[string]any{"data": map[string]any{fieldIDs(f)[0]: "Grace"}},
					"Idempotency-Key", idemKey)
				h.expect(other, 409, "conflict")
				if msg := errorMessage(other); !strings.Contains(msg, "Idempotency-Key was already used") {
					t.Errorf("another body under the key: message %q", msg)
				}
			})
		}
	})
}

// A privacy export's answer is not kept for its Idempotency-Key: it holds the person's answers,
// which their erasure must not leave behind. The same request again runs the export again.
func TestPrivacyExportIsNotKeptForItsKey(t *testing.T) {
	h := sqliteHarness(t)
	f := h.createForm(contactFields...)
	formID := f["id"].(string)
	h.expect(h.do("POST", "/v1/forms/"+formID+"/submissions", h.keys["read-write"],
		map[string]any{"data": map[string]any{fieldIDs(f)[0]: "Ada Lovelace", fieldIDs(f)[1]: "ada@example.org"}}), 201, "")
	export := map[string]any{"email": "ada@example.org"}
	r := h.do("POST", "/v1/privacy/export", h.keys["admin"], export, "Idempotency-Key", "export-ada")
	h.expect(r, 200, "")
	if n := len(r.json["submissions"].([]any)); n != 1 {
		t.Fatalf("exported %d submissions", n)
	}
	h.expect(h.do("POST", "/v1/privacy/erase", h.keys["admin"], export), 200, "")
	r = h.do("POST", "/v1/privacy/export", h.keys["admin"], export, "Idempotency-Key", "export-ada")
	h.expect(r, 200, "")
	if n := len(r.json["submissions"].([]any)); n != 0 || strings.Contains(r.Body.String(), "Ada") || r.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("the export after the erasure: %s", r.Body.String())
	}
}
