package httpapi_test

import (
	"strings"
	"testing"
)

// TestControlCharactersRefused: text with NUL or another control character is refused with 422
// at its JSON path, on SQLite and PostgreSQL alike (PostgreSQL cannot store NUL in text, which
// once made these requests fail with 500 there and succeed on SQLite).
func TestControlCharactersRefused(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]

		h.expectDetail(h.do("POST", "/v1/forms", key, map[string]any{"name": "Con\x00tact"}), "name", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/forms", key, map[string]any{"name": "Contact", "description": "a\x00b"}), "description", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/forms", key, map[string]any{"name": "Bell\x07"}), "name", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/forms", key, map[string]any{"name": "C1 \u0085 control"}), "name", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/forms", key, map[string]any{"name": "Contact", "fields": []map[string]any{
			{"label": "Plan", "type": "dropdown", "options": []string{"Free", "P\x00ro"}},
		}}), "fields[0].options[1]", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/forms", key, map[string]any{"name": "Contact", "settings": map[string]any{
			"thank_you_message": "Thanks\x00",
		}}), "settings.thank_you_message", "invalid_value")

		// Tab, line feed and carriage return are text.
		r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Contact\tform", "description": "Line 1\r\nLine 2",
			"fields": []map[string]any{{"label": "Name", "type": "text"}}})
		h.expect(r, 201, "")
		formID := r.json["id"].(string)
		fieldID := fieldIDs(r.json)[0]

		h.expectDetail(h.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"name": "x\x00"}), "name", "invalid_value")
		h.expectDetail(h.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"description": "x\x00"}), "description", "invalid_value")

		wf := workflowBody(formID)
		wf["name"] = "Route\x00leads"
		h.expectDetail(h.do("POST", "/v1/workflows", key, wf), "name", "invalid_value")
		wf = workflowBody(formID, map[string]any{"type": "send_email", "config": map[string]any{"to": "a@example.com", "subject": "New\x00", "body": "x"}})
		h.expectDetail(h.do("POST", "/v1/workflows", key, wf), "actions[0].config.subject", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/workflows", key, workflowBody("frm_\x00")), "form_id", "invalid_value")
		wfID := h.createWorkflow(workflowBody(formID))["id"].(string)
		h.expectDetail(h.do("PATCH", "/v1/workflows/"+wfID, key, map[string]any{"name": "\x00"}), "name", "invalid_value")

		h.expectDetail(h.do("POST", "/v1/forms/"+formID+"/submissions", key, map[string]any{"data": map[string]any{fieldID: "Ada\x00"}}), fieldID, "invalid_value")

		h.expectDetail(h.do("POST", "/v1/webhooks", key, map[string]any{"url": "https://hooks.example.com/x", "events": []string{"submission.created"}, "secret": "s\x00"}), "secret", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/webhooks", key, map[string]any{"url": "https://hooks.example.com/x", "events": []string{"submission.created"}, "form_id": "frm_\x00"}), "form_id", "invalid_value")
		h.expectDetail(h.do("POST", "/v1/integrations", key, map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": "xoxb-\x00"}}), "credentials.bot_token", "invalid_value")

		// Nothing above was stored.
		r = h.do("GET", "/v1/forms", key, nil)
		h.expect(r, 200, "")
		if n := len(r.json["data"].([]any)); n != 1 {
			t.Fatalf("%d forms stored, want 1", n)
		}
		r = h.do("GET", "/v1/forms/"+formID+"/submissions", key, nil)
		h.expect(r, 200, "")
		if n := len(r.json["data"].([]any)); n != 0 {
			t.Fatalf("%d submissions stored, want 0", n)
		}
	})
}

// TestInvalidUTF8Body: a JSON body that is not valid UTF-8 is a bad request (400), never stored
// with replacement characters.
func TestInvalidUTF8Body(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		h.expect(h.do("POST", "/v1/forms", key, []byte("{\"name\": \"Con\xfftact\"}")), 400, "invalid_request")
		h.expect(h.do("POST", "/v1/forms", key, []byte("{\"name\": \"\xed\xa0\x80\"}")), 400, "invalid_request") // an encoded surrogate
		f := h.createForm(map[string]any{"label": "Name", "type": "text"})
		formID, fieldID := f["id"].(string), fieldIDs(f)[0]
		r := h.do("POST", "/v1/forms/"+formID+"/submissions", key, []byte("{\"data\": {\""+fieldID+"\": \"Ad\xc3a\"}}"))
		h.expect(r, 400, "invalid_request")
		if !strings.Contains(r.json["error"].(map[string]any)["message"].(string), "UTF-8") {
			t.Fatalf("message does not say what is wrong: %s", r.Body.String())
		}
	})
}

// TestMalformedIDsAreNotFound: an ID in a path with NUL, invalid UTF-8 or other characters no
// ID has names no resource: 404 on both databases (PostgreSQL once answered 500).
func TestMalformedIDsAreNotFound(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		formID := h.createForm(map[string]any{"label": "Name", "type": "text"})["id"].(string)
		h.undocumented = true // the validator cannot match these paths to a template
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/forms/frm_%00"},
			{"GET", "/v1/forms/frm_%FF"},
			{"GET", "/v1/forms/frm_%C2%85"},
			{"PATCH", "/v1/forms/frm_%00"},
			{"DELETE", "/v1/forms/frm_%00"},
			{"GET", "/v1/forms/frm_%00/submissions"},
			{"POST", "/v1/forms/frm_%00/submissions"},
			{"GET", "/v1/forms/" + formID + "/submissions/sub_%00"},
			{"GET", "/v1/workflows/wfl_%00"},
			{"GET", "/v1/workflows/wfl_%00/runs"},
			{"GET", "/v1/webhooks/whk_%00"},
			{"GET", "/v1/webhooks/whk_%00/deliveries"},
			{"GET", "/v1/integrations/int_%00"},
		} {
			var body any
			if c.method == "PATCH" || c.method == "POST" {
				body = map[string]any{"name": "x"}
			}
			h.expect(h.do(c.method, c.path, key, body), 404, "not_found")
		}
		h.undocumented = false
		h.expect(h.do("GET", "/v1/workflows?form_id=frm_%00", key, nil), 400, "invalid_request")
	})
}

// TestIdempotencyKeyMustBeASCII: HTTP lets bytes above 0x7F through in header values; a key
// made of them is a bad request, not a database error.
func TestIdempotencyKeyMustBeASCII(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		body := map[string]any{"name": "Contact"}
		h.expect(h.do("POST", "/v1/forms", h.keys["admin"], body, "Idempotency-Key", "key-\xff"), 400, "invalid_request")
		h.expect(h.do("POST", "/v1/forms", h.keys["admin"], body, "Idempotency-Key", "clé"), 400, "invalid_request")
		h.expect(h.do("POST", "/v1/forms", h.keys["admin"], body, "Idempotency-Key", "8e7c2a1e-5b0f-4f7e-9a51-2f1c0f2d9b11"), 201, "")
	})
}
