package httpapi_test

import "testing"

func errorMessage(r response) string {
	e, _ := r.json["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// A conflict's message says what clashed; only a reused Idempotency-Key says the key was used.
func TestConflictMessagesSayWhatConflicted(t *testing.T) {
	h := sqliteHarness(t)
	owner := h.memberID(func() string { email, _ := h.addPerson("owner"); return email }())
	member, _ := h.addPerson("editor")
	for _, c := range []struct {
		name string
		r    response
		want string
	}{
		{"the last owner", h.do("PATCH", "/v1/members/"+owner, h.keys["admin"], map[string]any{"role": "admin"}),
			"a workspace keeps at least one owner: make another member owner first"},
		{"inviting a member", h.do("POST", "/v1/invitations", h.keys["admin"], map[string]any{"email": member, "role": "viewer"}),
			"this person is already a member of the workspace"},
	} {
		h.expect(c.r, 409, "conflict")
		if msg := errorMessage(c.r); msg != c.want {
			t.Errorf("%s: message %q, want %q", c.name, msg, c.want)
		}
	}
	body := map[string]any{"name": "Contact"}
	h.expect(h.do("POST", "/v1/forms", h.keys["admin"], body, "Idempotency-Key", "form-1"), 201, "")
	reused := h.do("POST", "/v1/forms", h.keys["admin"], map[string]any{"name": "Other"}, "Idempotency-Key", "form-1")
	h.expect(reused, 409, "conflict")
	if msg := errorMessage(reused); msg != "this Idempotency-Key was already used with another request, or that request is still running" {
		t.Errorf("reused key: message %q", msg)
	}
}
