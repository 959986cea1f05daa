package httpapi_test

import (
	"encoding/csv"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/submission"
)

// An export names some submissions with id (repeated): only those, oldest first, within the
// bounds; an ID of another form is not there; an empty ID, or more than 500, is a 400.
func TestExportChosenIDs(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{})
		r := h.do("POST", "/v1/forms", h.keys["admin"], map[string]any{"name": "Survey", "fields": []map[string]any{{"label": "Name", "type": "text"}}})
		h.expect(r, 201, "")
		formID, fields := r.json["id"].(string), fieldIDs(r.json)
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		for i := 1; i <= 5; i++ {
			storeAt(t, db, h.wsA, formID, subID(i), at.Add(time.Duration(i)*time.Minute), map[string]submission.Value{
				fields[0]: submission.Single(fmt.Sprintf("Person %d", i))}, submission.Metadata{Source: submission.SourceAPI})
		}
		path := "/v1/forms/" + formID + "/submissions/export?"
		res := h.do("GET", path+url.Values{"id": {subID(4), subID(2), "sub_elsewhere"}}.Encode(), h.keys["read-only"], nil)
		h.expect(res, 200, "")
		got, err := csv.NewReader(strings.NewReader(res.Body.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[1][0] != subID(2) || got[2][0] != subID(4) || got[2][2] != "Person 4" {
			t.Fatalf("export of two chosen IDs: %v", got)
		}
		// With a bound, the chosen ones outside it are left out.
		res = h.do("GET", path+url.Values{"id": {subID(1), subID(5)}, "created_after": {at.Add(2 * time.Minute).Format(time.RFC3339)}}.Encode(), h.keys["read-only"], nil)
		h.expect(res, 200, "")
		if n := strings.Count(strings.TrimSpace(res.Body.String()), "\n"); n != 1 || !strings.Contains(res.Body.String(), subID(5)) {
			t.Fatalf("chosen IDs within a bound: %s", res.Body.String())
		}
		h.expect(h.do("GET", path+"id=", h.keys["read-only"], nil), 400, "invalid_request")
		many := url.Values{}
		for i := range capture.MaxExportIDs + 1 {
			many.Add("id", fmt.Sprintf("sub_%d", i))
		}
		h.expect(h.do("GET", path+many.Encode(), h.keys["read-only"], nil), 400, "invalid_request")
	})
}
