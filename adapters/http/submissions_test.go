package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

var everyType = []map[string]any{
	{"label": "Name", "type": "text", "required": true},
	{"label": "Email", "type": "email", "required": true},
	{"label": "Budget", "type": "number"},
	{"label": "Plan", "type": "dropdown", "options": []string{"Free", "Pro"}},
	{"label": "Channels", "type": "checkbox", "options": []string{"Mail", "Phone"}},
	{"label": "Size", "type": "radio", "options": []string{"S", "M"}},
	{"label": "Notes", "type": "textarea"},
	{"label": "CV", "type": "file", "accept": []string{"application/pdf"}, "max_file_size": 1048576},
	{"label": "Start", "type": "date"},
	{"label": "Agree", "type": "checkbox", "required": true},
}

func TestSubmissionsLifecycle(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["read-write"]
		f := h.createForm(everyType...)
		id := f["id"].(string)
		ids := fieldIDs(f)
		cv := f["fields"].([]any)[7].(map[string]any)
		if fmt.Sprint(cv["accept"]) != "[application/pdf]" || cv["max_file_size"] != float64(1048576) {
			t.Fatalf("file field rules not kept: %v", cv)
		}
		if _, shown := f["fields"].([]any)[0].(map[string]any)["accept"]; shown {
			t.Fatal("accept is shown on file fields only")
		}
		valid := map[string]any{
			ids[0]: "Ada", ids[1]: "ada@example.com", ids[2]: 1.50, ids[3]: "Pro", ids[4]: []string{"Mail", "Phone"},
			ids[5]: "M", ids[6]: "Line 1\nLine 2", ids[7]: "https://files.example.com/cv.pdf", ids[8]: "2024-02-29", ids[9]: true,
		}
		r := h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": valid})
		h.expect(r, 201, "")
		sub := r.json
		subID := sub["id"].(string)
		data := sub["data"].(map[string]any)
		if data[ids[2]] != "1.5" || data[ids[9]] != "true" || fmt.Sprint(data[ids[4]]) != "[Mail Phone]" || fmt.Sprint(data[ids[7]]) != "[https://files.example.com/cv.pdf]" {
			t.Fatalf("canonical values: %v", data)
		}
		meta := sub["metadata"].(map[string]any)
		if meta["source"] != "api" || meta["ip"] != nil || meta["user_agent"] != nil || meta["referrer"] != nil {
			t.Fatalf("metadata: %v", meta)
		}
		if !strings.HasPrefix(subID, "sub_") || sub["form_id"] != id {
			t.Fatalf("submission: %v", sub)
		}
		// Every failing field is reported.
		r = h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": map[string]any{
			ids[0]: "   ", ids[1]: "Ada <ada@example.com>", ids[2]: "twelve", ids[3]: "Enterprise", ids[8]: "2023-02-29", ids[9]: false, "fld_nope": "x",
		}})
		h.expect(r, 422, "validation_failed")
		got := map[string]string{}
		for _, d := range r.json["error"].(map[string]any)["details"].([]any) {
			m := d.(map[string]any)
			got[m["field"].(string)] = m["code"].(string)
		}
		for _, k := range []string{ids[0], ids[1], ids[2], ids[3], ids[8], ids[9], "fld_nope"} {
			if got[k] == "" {
				t.Errorf("no detail for %s: %v", k, got)
			}
		}
		if got[ids[0]] != "required" || got["fld_nope"] != "unknown_field" {
			t.Errorf("details: %v", got)
		}
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{}), 422, "validation_failed")
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": "x"}), 422, "validation_failed")
		// Read-only properties are ignored, others are not.
		back := map[string]any{"data": valid, "id": "sub_x", "form_id": "frm_x", "metadata": map[string]any{}, "submitted_at": "x"}
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, back), 201, "")
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": valid, "spam": 1}), 422, "validation_failed")

		// GET, PATCH (merge, null clears optional), count.
		r = h.do("GET", "/v1/forms/"+id+"/submissions/"+subID, h.keys["read-only"], nil)
		h.expect(r, 200, "")
		r = h.do("PATCH", "/v1/forms/"+id+"/submissions/"+subID, key, map[string]any{"data": map[string]any{ids[6]: nil, ids[3]: "Free"}})
		h.expect(r, 200, "")
		data = r.json["data"].(map[string]any)
		if _, ok := data[ids[6]]; ok || data[ids[3]] != "Free" || data[ids[0]] != "Ada" {
			t.Fatalf("after patch: %v", data)
		}
		h.expect(h.do("PATCH", "/v1/forms/"+id+"/submissions/"+subID, key, map[string]any{"data": map[string]any{ids[0]: nil}}), 422, "validation_failed")
		r = h.do("GET", "/v1/forms/"+id, key, nil)
		if r.json["submission_count"].(float64) != 2 {
			t.Fatalf("submission_count = %v, want 2", r.json["submission_count"])
		}
		// Archived forms refuse API submissions; drafts accept them.
		h.expect(h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"status": "archived"}), 200, "")
		h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": valid}), 409, "form_closed")
		h.expect(h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"status": "draft"}), 200, "")
		// Delete is permanent and the count follows.
		h.expect(h.do("DELETE", "/v1/forms/"+id+"/submissions/"+subID, key, nil), 204, "")
		h.expect(h.do("GET", "/v1/forms/"+id+"/submissions/"+subID, key, nil), 404, "not_found")
		r = h.do("GET", "/v1/forms/"+id, key, nil)
		if r.json["submission_count"].(float64) != 1 {
			t.Fatalf("submission_count after delete = %v, want 1", r.json["submission_count"])
		}
		// Submissions of another form's path are not found.
		other := h.createForm(contactFields...)
		h.expect(h.do("GET", "/v1/forms/"+other["id"].(string)+"/submissions/"+subID, key, nil), 404, "not_found")
	})
}

// POST and PATCH take data keyed by field key as well as by field ID; what is stored and
// returned stays keyed by field ID.
func TestSubmissionsByKey(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{})
		key := h.keys["read-write"]
		f := h.createForm(
			map[string]any{"label": "Full name", "type": "text", "required": true},
			map[string]any{"label": "Budget", "type": "number", "key": "budget_eur"},
			map[string]any{"label": "Plan", "type": "dropdown", "options": []string{"Free", "Pro"}},
		)
		formID, ids := f["id"].(string), fieldIDs(f)
		path := "/v1/forms/" + formID + "/submissions"

		r := h.do("POST", path, key, map[string]any{"data": map[string]any{"full_name": "Ada", "budget_eur": 1200, ids[2]: "Pro"}})
		h.expect(r, 201, "")
		subID := r.json["id"].(string)
		want := fmt.Sprint(map[string]any{ids[0]: "Ada", ids[1]: "1200", ids[2]: "Pro"})
		if got := fmt.Sprint(r.json["data"]); got != want {
			t.Fatalf("returned data %s, want %s", got, want)
		}
		stored, err := persistence.NewSubmissionRepository(db, persistencetest.Cipher(), persistencetest.BlindIndex()).
			Get(context.Background(), h.wsA, formID, subID)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(stored.Data()); got != fmt.Sprint(map[string]any{ids[0]: "Ada", ids[1]: "1200", ids[2]: "Pro"}) {
			t.Fatalf("stored data %s, want it keyed by field ID", got)
		}

		r = h.do("PATCH", path+"/"+subID, key, map[string]any{"data": map[string]any{"plan": "Free", "budget_eur": nil}})
		h.expect(r, 200, "")
		if got := fmt.Sprint(r.json["data"]); got != fmt.Sprint(map[string]any{ids[0]: "Ada", ids[2]: "Free"}) {
			t.Fatalf("data after PATCH by key: %s", got)
		}
		if got := fmt.Sprint(h.do("GET", path+"/"+subID, key, nil).json["data"]); got != fmt.Sprint(map[string]any{ids[0]: "Ada", ids[2]: "Free"}) {
			t.Fatalf("GET after PATCH by key: %s", got)
		}

		// One field named both ways is invalid_value, naming the field; in PATCH, nothing changes.
		both := map[string]any{"data": map[string]any{"full_name": "Ada", ids[0]: "Bob"}}
		r = h.do("POST", path, key, both)
		h.expectDetail(r, ids[0], "invalid_value")
		if msg := fmt.Sprint(r.json["error"].(map[string]any)["details"]); !strings.Contains(msg, "Full name") || !strings.Contains(msg, "full_name") {
			t.Fatalf("the detail does not name the field: %s", msg)
		}
		h.expectDetail(h.do("PATCH", path+"/"+subID, key, both), ids[0], "invalid_value")
		if got := fmt.Sprint(h.do("GET", path+"/"+subID, key, nil).json["data"]); got != fmt.Sprint(map[string]any{ids[0]: "Ada", ids[2]: "Free"}) {
			t.Fatalf("a refused PATCH changed the data: %s", got)
		}

		// A name that is neither an ID nor a key is unknown_field, as before.
		h.expectDetail(h.do("POST", path, key, map[string]any{"data": map[string]any{"full_name": "Ada", "fullname": "x"}}), "fullname", "unknown_field")
		h.expectDetail(h.do("PATCH", path+"/"+subID, key, map[string]any{"data": map[string]any{"Plan": "Pro"}}), "Plan", "unknown_field")
		// A key's answer is checked as its field's, and reported at the field's ID.
		h.expectDetail(h.do("POST", path, key, map[string]any{"data": map[string]any{"full_name": "Ada", "budget_eur": "lots"}}), ids[1], "invalid_number")
	})
}

func TestSubmissionPagination(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		f := h.createForm(contactFields...)
		id := f["id"].(string)
		name := fieldIDs(f)[0]
		const n = 25
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": map[string]any{name: fmt.Sprint("n", i)}})
			}(i)
		}
		wg.Wait()
		seen := map[string]bool{}
		var last time.Time
		cursor := ""
		pages := 0
		for {
			path := "/v1/forms/" + id + "/submissions?limit=10"
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			r := h.do("GET", path, key, nil)
			h.expect(r, 200, "")
			pages++
			for _, it := range r.json["data"].([]any) {
				s := it.(map[string]any)
				at, _ := time.Parse(time.RFC3339, s["submitted_at"].(string))
				if !last.IsZero() && at.After(last) {
					t.Fatal("not newest first")
				}
				last = at
				if seen[s["id"].(string)] {
					t.Fatalf("%s listed twice", s["id"])
				}
				seen[s["id"].(string)] = true
			}
			if !r.json["has_more"].(bool) {
				if r.json["next_cursor"] != nil {
					t.Fatal("next_cursor on the last page")
				}
				break
			}
			cursor = r.json["next_cursor"].(string)
		}
		if len(seen) != n || pages != 3 {
			t.Fatalf("saw %d submissions in %d pages, want %d in 3", len(seen), pages, n)
		}
		// Bad parameters.
		for _, q := range []string{"limit=0", "limit=101", "limit=abc", "cursor=garbage", "created_after=yesterday", "created_before=2026-13-01T00:00:00Z"} {
			h.expect(h.do("GET", "/v1/forms/"+id+"/submissions?"+q, key, nil), 400, "invalid_request")
		}
		// A cursor is bound to its list and cannot be edited.
		r := h.do("GET", "/v1/forms/"+id+"/submissions?limit=1", key, nil)
		cur := r.json["next_cursor"].(string)
		other := h.createForm(contactFields...)
		h.expect(h.do("GET", "/v1/forms/"+other["id"].(string)+"/submissions?cursor="+url.QueryEscape(cur), key, nil), 400, "invalid_request")
		h.expect(h.do("GET", "/v1/forms?cursor="+url.QueryEscape(cur), key, nil), 400, "invalid_request")
		tampered := []byte(cur)
		tampered[3] ^= 1
		h.expect(h.do("GET", "/v1/forms/"+id+"/submissions?cursor="+url.QueryEscape(string(tampered)), key, nil), 400, "invalid_request")
		// Exclusive time bounds.
		r = h.do("GET", "/v1/forms/"+id+"/submissions?limit=100", key, nil)
		items := r.json["data"].([]any)
		newest := items[0].(map[string]any)["submitted_at"].(string)
		r = h.do("GET", "/v1/forms/"+id+"/submissions?limit=100&created_after="+url.QueryEscape(newest), key, nil)
		if len(r.json["data"].([]any)) != 0 {
			t.Fatal("created_after is not exclusive")
		}
		r = h.do("GET", "/v1/forms/"+id+"/submissions?limit=100&created_before="+url.QueryEscape(newest), key, nil)
		for _, it := range r.json["data"].([]any) {
			if it.(map[string]any)["submitted_at"] == newest {
				t.Fatal("created_before is not exclusive")
			}
		}
	})
}

func TestIdempotencyKey(t *testing.T) {
	h := sqliteHarness(t)
	key := h.keys["admin"]
	f := h.createForm(contactFields...)
	id := f["id"].(string)
	body := map[string]any{"data": map[string]any{fieldIDs(f)[0]: "Once"}}
	first := h.do("POST", "/v1/forms/"+id+"/submissions", key, body, "Idempotency-Key", "abc-123")
	h.expect(first, 201, "")
	again := h.do("POST", "/v1/forms/"+id+"/submissions", key, body, "Idempotency-Key", "abc-123")
	h.expect(again, 201, "")
	if again.json["id"] != first.json["id"] {
		t.Fatalf("replay made a new submission: %v vs %v", again.json["id"], first.json["id"])
	}
	h.expect(h.do("POST", "/v1/forms/"+id+"/submissions", key, map[string]any{"data": map[string]any{fieldIDs(f)[0]: "Twice"}}, "Idempotency-Key", "abc-123"), 409, "conflict")
	r := h.do("GET", "/v1/forms/"+id, key, nil)
	if r.json["submission_count"].(float64) != 1 {
		t.Fatalf("submission_count = %v, want 1", r.json["submission_count"])
	}
	// Another key value is a new request; a failed validation is replayed as it was.
	h.expect(h.do("POST", "/v1/forms", key, map[string]any{"name": ""}, "Idempotency-Key", "v1"), 422, "validation_failed")
	h.expect(h.do("POST", "/v1/forms", key, map[string]any{"name": ""}, "Idempotency-Key", "v1"), 422, "validation_failed")
}
