package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/test/testkit"
)

func sqliteHarness(t *testing.T) *harness {
	return newHarness(t, persistencetest.SQLite(t, persistencetest.Cipher()), httpapi.Options{})
}

var contactFields = []map[string]any{
	{"label": "Name", "type": "text", "required": true},
	{"label": "Email", "type": "email"},
	{"label": "Budget", "type": "number"},
	{"label": "Plan", "type": "dropdown", "options": []string{"Free", "Pro"}},
}

// matrixEndpoint is one endpoint of an API key matrix (see keyMatrix).
type matrixEndpoint struct {
	method, path string
	body         any
	write        bool // a read-only key gets 403
	scoped       bool // names a resource, so another workspace gets 404
	ok           int  // what a key that may call it gets
}

// keyMatrix runs each endpoint with a missing, malformed, wrong-secret and revoked key (401),
// another workspace's key (404 for a resource, an empty list where it lists; otherWrite, when
// set, checks its other writes), a read-only key (403 for a write) and read-write and admin
// keys. what names the listed resources in messages. Deleting twice would be 404: a DELETE by
// each scope removes the resource at fresh(path) instead.
func (h *harness) keyMatrix(t *testing.T, what string, endpoints []matrixEndpoint, otherWrite func(response), fresh func(path string) string) {
	for _, e := range endpoints {
		t.Run(e.method+" "+e.path, func(t *testing.T) {
			h.t = t
			h.expect(h.do(e.method, e.path, "", e.body), 401, "unauthorized")
			h.expect(h.do(e.method, e.path, "not-a-key", e.body), 401, "unauthorized")
			h.expect(h.do(e.method, e.path, "fwk_"+h.keyIDs["admin"]+".wrong-secret-wrong-secret-wrong-secret", e.body), 401, "unauthorized")
			h.expect(h.do(e.method, e.path, h.keys["revoked"], e.body), 401, "unauthorized")
			r := h.do(e.method, e.path, h.keys["other"], e.body)
			switch {
			case e.scoped:
				h.expect(r, 404, "not_found")
			case e.method == "GET":
				h.expect(r, 200, "")
				if n := len(r.json["data"].([]any)); n != 0 {
					t.Fatalf("workspace B sees %d %s of workspace A", n, what)
				}
			case otherWrite != nil:
				otherWrite(r)
			}
			if e.write {
				h.expect(h.do(e.method, e.path, h.keys["read-only"], e.body), 403, "forbidden")
			} else {
				h.expect(h.do(e.method, e.path, h.keys["read-only"], e.body), e.ok, "")
			}
			for _, scope := range []string{"read-write", "admin"} {
				if e.method == "DELETE" {
					h.expect(h.do(e.method, fresh(e.path), h.keys[scope], nil), 204, "")
					continue
				}
				h.expect(h.do(e.method, e.path, h.keys[scope], e.body), e.ok, "")
			}
		})
	}
}

// TestAuthMatrix runs every endpoint with a missing, malformed, revoked, read-only, read-write,
// admin and other-workspace key.
func TestAuthMatrix(t *testing.T) {
	h := sqliteHarness(t)
	fresh := func() (form string, field string, sub string) {
		f := h.createForm(contactFields...)
		id := f["id"].(string)
		fid := fieldIDs(f)[0]
		r := h.do("POST", "/v1/forms/"+id+"/submissions", h.keys["admin"], map[string]any{"data": map[string]any{fid: "Ada"}})
		h.expect(r, 201, "")
		return id, fid, r.json["id"].(string)
	}
	formID, fieldID, subID := fresh()
	h.keyMatrix(t, "forms", []matrixEndpoint{
		{"GET", "/v1/forms", nil, false, false, 200},
		{"POST", "/v1/forms", map[string]any{"name": "New"}, true, false, 201},
		{"GET", "/v1/forms/" + formID, nil, false, true, 200},
		{"PATCH", "/v1/forms/" + formID, map[string]any{"name": "Renamed"}, true, true, 200},
		{"GET", "/v1/forms/" + formID + "/submissions", nil, false, true, 200},
		{"POST", "/v1/forms/" + formID + "/submissions", map[string]any{"data": map[string]any{fieldID: "Bob"}}, true, true, 201},
		{"GET", "/v1/forms/" + formID + "/submissions/" + subID, nil, false, true, 200},
		{"GET", "/v1/forms/" + formID + "/versions/1/schema", nil, false, true, 200},
		{"PATCH", "/v1/forms/" + formID + "/submissions/" + subID, map[string]any{"data": map[string]any{fieldID: "Eve"}}, true, true, 200},
		{"DELETE", "/v1/forms/" + formID + "/submissions/" + subID, nil, true, true, 204},
		{"DELETE", "/v1/forms/" + formID, nil, true, true, 204},
	}, nil, func(path string) string {
		f, _, s := fresh()
		return strings.NewReplacer(formID, f, subID, s).Replace(path)
	})
}

func TestNoSecretsInLogs(t *testing.T) {
	h := sqliteHarness(t)
	h.createForm(contactFields...)
	h.do("GET", "/v1/forms", h.keys["revoked"], nil)
	for _, e := range h.logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		for name, key := range h.keys {
			secret := key[strings.Index(key, ".")+1:]
			if strings.Contains(line, secret) {
				t.Fatalf("the %s key's secret appears in a log line: %s", name, line)
			}
		}
	}
	if h.logs.FilterMessage("request").Len() < 2 {
		t.Fatal("want one log line per request")
	}
	got := h.logs.FilterMessage("request").All()[0].ContextMap()
	for _, k := range []string{"request_id", "status", "latency_ms"} {
		if _, ok := got[k]; !ok {
			t.Fatalf("request log line lacks %s: %v", k, got)
		}
	}
}

func TestFormsLifecycle(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{})
		key := h.keys["read-write"]
		f := h.createForm(contactFields...)
		id := f["id"].(string)
		if !strings.HasPrefix(id, "frm_") || f["status"] != "draft" || f["submission_count"].(float64) != 0 {
			t.Fatalf("created form: %v", f)
		}
		ids := fieldIDs(f)
		for _, fid := range ids {
			if !strings.HasPrefix(fid, "fld_") {
				t.Fatalf("field id %q", fid)
			}
		}
		// PATCH only changes what is included; fields keep IDs, new ones get IDs, left-out ones go.
		r := h.do("PATCH", "/v1/forms/"+id, key, map[string]any{
			"fields": []map[string]any{
				{"id": ids[1], "label": "Work email", "type": "email", "required": true},
				{"label": "Notes", "type": "textarea"},
			},
		})
		h.expect(r, 200, "")
		fields := r.json["fields"].([]any)
		if len(fields) != 2 || fields[0].(map[string]any)["id"] != ids[1] || fields[0].(map[string]any)["label"] != "Work email" {
			t.Fatalf("fields after patch: %v", fields)
		}
		if r.json["name"] != "Contact" || r.json["status"] != "draft" {
			t.Fatalf("untouched properties changed: %v", r.json)
		}
		// Sending back what was read is accepted (read-only properties ignored).
		back := r.json
		back["name"] = "Contact us"
		r = h.do("PATCH", "/v1/forms/"+id, key, back)
		h.expect(r, 200, "")
		// A field ID of another form is refused.
		other := h.createForm(contactFields...)
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"fields": []map[string]any{{"id": fieldIDs(other)[0], "label": "x", "type": "text"}}})
		h.expect(r, 422, "validation_failed")
		// Status moves and form.published.
		for _, st := range []string{"published", "published", "archived", "draft", "published"} {
			h.expect(h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"status": st}), 200, "")
		}
		h.expect(h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"status": "live"}), 422, "validation_failed")
		published := 0
		recs, err := persistence.NewOutbox(db, persistencetest.Cipher()).Pending(t.Context(), 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if rec.Event.Type == "form.published" && rec.Event.FormID == id {
				published++
			}
		}
		if published != 2 {
			t.Fatalf("form.published events = %d, want 2 (draft→published twice; published→published emits none)", published)
		}
		// List with status filter and pagination.
		r = h.do("GET", "/v1/forms?status=published", key, nil)
		h.expect(r, 200, "")
		if items := r.json["data"].([]any); len(items) != 1 || items[0].(map[string]any)["fields"] != nil {
			t.Fatalf("published list: %v", items)
		}
		h.expect(h.do("GET", "/v1/forms?status=nope", key, nil), 400, "invalid_request")
		h.expect(h.do("DELETE", "/v1/forms/"+id, key, nil), 204, "")
		h.expect(h.do("GET", "/v1/forms/"+id, key, nil), 404, "not_found")
		h.expect(h.do("DELETE", "/v1/forms/"+id, key, nil), 404, "not_found")
	})
}

func TestFormValidation(t *testing.T) {
	h := sqliteHarness(t)
	key := h.keys["admin"]
	r := h.do("POST", "/v1/forms", key, map[string]any{
		"name": strings.Repeat("x", 201),
		"fields": []map[string]any{
			{"label": "", "type": "text"},
			{"label": "Pick", "type": "dropdown"},
			{"label": "Typo", "type": "txt"},
			{"label": "Bad", "type": "text", "options": []string{"a"}},
		},
	})
	h.expect(r, 422, "validation_failed")
	got := map[string]string{}
	for _, d := range r.json["error"].(map[string]any)["details"].([]any) {
		m := d.(map[string]any)
		got[m["field"].(string)] = m["code"].(string)
	}
	want := map[string]string{"name": "invalid_length", "fields[0].label": "required", "fields[1].options": "required",
		"fields[2].type": "invalid_value", "fields[3].options": "not_allowed"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("detail %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	h.expect(h.do("POST", "/v1/forms", key, map[string]any{"fields": []any{}}), 422, "validation_failed")
	h.expect(h.do("POST", "/v1/forms", key, "not json"), 400, "invalid_request")
	h.expect(h.do("POST", "/v1/forms", key, "[1,2]"), 400, "invalid_request")
	h.expect(h.do("POST", "/v1/forms", key, `{"name": 5}`), 422, "validation_failed")
	r = h.do("POST", "/v1/forms", key, `{"name": "ok", "colour": "red", "fields": [{"label": "a", "type": "text", "extra": 1}]}`)
	h.expect(r, 422, "validation_failed")
	if d := fmt.Sprint(r.json["error"].(map[string]any)["details"]); !strings.Contains(d, "field:fields[0].extra") || !strings.Contains(d, "field:colour") {
		t.Fatalf("unknown properties at every depth: %s", d)
	}
	big := `{"name": "` + strings.Repeat("a", httpapi.MaxBodyBytes) + `"}`
	h.expect(h.do("POST", "/v1/forms", key, big), 413, "payload_too_large")
	// Content-Type is ignored: the body is JSON whatever it says.
	h.expect(h.do("POST", "/v1/forms", key, `{"name": "typed"}`, "Content-Type", "text/plain"), 201, "")
}

func TestRoutingErrorsAreJSON(t *testing.T) {
	h := sqliteHarness(t)
	h.undocumented = true // the document cannot describe paths that do not exist
	h.expect(h.do("GET", "/v1/nothing", h.keys["admin"], nil), 404, "not_found")
	h.undocumented = false
	h.expect(h.do("PUT", "/v1/forms", h.keys["admin"], nil), 405, "method_not_allowed")
	h.expect(h.do("GET", "/v1/forms/frm_doesnotexist", h.keys["admin"], nil), 404, "not_found")
	h.expect(h.do("GET", "/v1/forms/%20", h.keys["admin"], nil), 404, "not_found")
	r := h.do("GET", "/healthz", "", nil)
	h.expect(r, 200, "")
	h.expect(h.do("GET", "/readyz", "", nil), 200, "")
	r = h.do("GET", "/v1/openapi.json", "", nil)
	h.expect(r, 200, "")
	if r.json["openapi"] != "3.1.0" {
		t.Fatalf("openapi document: %v", r.json["openapi"])
	}
	if r.Header().Get("X-Request-ID") == "" {
		t.Fatal("no X-Request-ID")
	}
}

func TestRateLimit(t *testing.T) {
	clock := testkit.NewClock(time.Now())
	h := newHarness(t, persistencetest.SQLite(t, persistencetest.Cipher()), httpapi.Options{RateLimit: 1, RateBurst: 3, RateClock: clock})
	for i := 0; i < 3; i++ {
		r := h.do("GET", "/v1/forms", h.keys["admin"], nil)
		h.expect(r, 200, "")
		if r.Header().Get("RateLimit-Limit") != "3" {
			t.Fatalf("RateLimit-Limit = %q", r.Header().Get("RateLimit-Limit"))
		}
	}
	r := h.do("GET", "/v1/forms", h.keys["admin"], nil)
	h.expect(r, 429, "rate_limited")
	if r.Header().Get("Retry-After") == "" || r.Header().Get("RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers: %v", r.Header())
	}
	// Another key has its own bucket.
	h.expect(h.do("GET", "/v1/forms", h.keys["read-only"], nil), 200, "")
	clock.Advance(900 * time.Millisecond) // not yet a whole token
	h.expect(h.do("GET", "/v1/forms", h.keys["admin"], nil), 429, "rate_limited")
	clock.Advance(100 * time.Millisecond) // one token back
	h.expect(h.do("GET", "/v1/forms", h.keys["admin"], nil), 200, "")
	h.expect(h.do("GET", "/v1/forms", h.keys["admin"], nil), 429, "rate_limited")
}
