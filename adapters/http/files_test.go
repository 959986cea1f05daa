package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// testPublicURL is the server's own public URL in these tests.
const testPublicURL = "https://forms.example.com"

// signedLinks is the file linker the serve role wires: only a submission's own uploads.
func signedLinks() httpkit.FileLinker {
	signer := objectstore.Signer{Key: []byte("file key"), BaseURL: testPublicURL}
	return func(s *submission.Submission, v string) string {
		if link, ok := signer.SubmissionLink(s.WorkspaceID(), s.FormID(), s.ID(), v, time.Now().Add(time.Hour)); ok {
			return link
		}
		return v
	}
}

// storeUpload stores a public-form submission of form formID holding values in field, as
// the capture (or an older version of it) would have.
func storeUpload(t *testing.T, db *persistence.DB, ws, formID, subID, field string, values ...string) {
	t.Helper()
	s := submission.UnmarshalFromDatabase(subID, ws, formID, map[string]submission.Value{field: submission.List(values)},
		submission.Metadata{Source: submission.SourceForm}, time.Now(), time.Now())
	e := event.ForSubmission("evt_"+strings.Repeat("e", 22)+subID[len(subID)-4:], event.SubmissionCreated, s, time.Now())
	if err := persistence.NewSubmissionRepository(db, persistencetest.Cipher(), persistencetest.BlindIndex()).Add(context.Background(), s, e); err != nil {
		t.Fatal(err)
	}
}

// Workspace B cannot get a signed link to workspace A's file by naming it in its own
// submission, whether through the API or stored by an older version.
func TestNoSignedLinkToAnotherSubmissionsFile(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{FileURL: signedLinks()})
		fa := h.createForm(map[string]any{"label": "CV", "type": "file"})
		aForm, aField := fa["id"].(string), fieldIDs(fa)[0]
		aSub := "sub_" + strings.Repeat("a", 22) + "0001"
		aKey := ports.SubmissionFilesPrefix(h.wsA, aForm, aSub) + "obj_1/secret.pdf"
		storeUpload(t, db, h.wsA, aForm, aSub, aField, aKey)

		// A sees its own upload as a signed link.
		r := h.do("GET", "/v1/forms/"+aForm+"/submissions/"+aSub, h.keys["read-only"], nil)
		h.expect(r, 200, "")
		if got := r.json["data"].(map[string]any)[aField].([]any)[0].(string); !strings.HasPrefix(got, testPublicURL+"/files/"+aKey+"?expires=") || !strings.Contains(got, "sig=") {
			t.Fatalf("own upload shown as %q", got)
		}

		other := h.keys["other"]
		rb := h.do("POST", "/v1/forms", other, map[string]any{"name": "B", "fields": []map[string]any{{"label": "CV", "type": "file"}}})
		h.expect(rb, 201, "")
		bForm, bField := rb.json["id"].(string), fieldIDs(rb.json)[0]
		legacyA := ports.FormFilesPrefix(h.wsA, aForm) + "0123456789abcdef0123456789abcdef/old.pdf"

		// Through the API: a link under the server's own URL is refused, a bare key is not a link.
		for _, v := range []string{testPublicURL + "/files/" + aKey, testPublicURL + "/files/" + legacyA, aKey} {
			r := h.do("POST", "/v1/forms/"+bForm+"/submissions", other, map[string]any{"data": map[string]any{bField: v}})
			h.expect(r, 422, "validation_failed")
			if d := details(r)[bField]; d != "invalid_value" && d != "invalid_url" {
				t.Fatalf("%s: detail %q", v, d)
			}
		}
		// An external link is kept as given and never signed.
		r = h.do("POST", "/v1/forms/"+bForm+"/submissions", other, map[string]any{"data": map[string]any{bField: "https://cdn.example.org/" + aKey}})
		h.expect(r, 201, "")
		if got := r.json["data"].(map[string]any)[bField].([]any)[0]; got != "https://cdn.example.org/"+aKey {
			t.Fatalf("external link shown as %v", got)
		}

		// Values an older version let B store: A's key, A's reference URLs. None is signed.
		bSub := "sub_" + strings.Repeat("b", 22) + "0002"
		storeUpload(t, db, h.wsB, bForm, bSub, bField, aKey, testPublicURL+"/files/"+aKey, testPublicURL+"/files/"+legacyA)
		r = h.do("GET", "/v1/forms/"+bForm+"/submissions/"+bSub, other, nil)
		h.expect(r, 200, "")
		list := h.do("GET", "/v1/forms/"+bForm+"/submissions", other, nil)
		h.expect(list, 200, "")
		for _, body := range []string{r.Body.String(), list.Body.String()} {
			if strings.Contains(body, "sig=") {
				t.Fatalf("B got a signed link to A's file: %s", body)
			}
		}
		// The event B's webhooks and Kafka consumers receive carries the values as stored, unsigned.
		stored, err := persistence.NewSubmissionRepository(db, persistencetest.Cipher(), persistencetest.BlindIndex()).Get(context.Background(), h.wsB, bForm, bSub)
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := json.Marshal(event.ForSubmission("evt_x", event.SubmissionCreated, stored, time.Now()).Data)
		if strings.Contains(string(payload), "sig=") {
			t.Fatalf("signed link in the event: %s", payload)
		}
	})
}
