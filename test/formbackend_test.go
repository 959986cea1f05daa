package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBrowserFormBackend serves docs/form-backend-example.html from another origin on
// loopback (the owner's static site) and drives it in Chromium (test/browser/formbackend.spec.mjs):
// a plain cross-origin post without JavaScript that follows _next, the same form posted with
// fetch() and a JSON answer, then the closed page of the now-full form (max_submissions 2)
// with zero axe-core violations. The API then shows both submissions, with _subject and
// _replyto kept, and closed_reason max_submissions.
//
// Skipped when Chromium or Node.js is missing, unless FORMWARD_TEST_REQUIRE_BROWSER=1 (CI).
func TestBrowserFormBackend(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)

	example, err := os.ReadFile(filepath.Join("..", "docs", "form-backend-example.html"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		ownerHTML string
	)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/contact.html":
			mu.Lock()
			page := ownerHTML
			mu.Unlock()
			fmt.Fprint(w, page)
		case "/thanks.html":
			fmt.Fprint(w, "<!doctype html><html lang=en><title>Thanks</title><h1>Thanks!</h1><p>We will answer soon.</p>")
		case "/favicon.ico":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	defer owner.Close()

	in := newInstance(t, "", "")
	adminKey := in.cli("keys", "create", "--name", "backend", "--scope", "admin")
	in.startServe()
	const closedMessage = "We are full for this year: see you next spring!"
	formID, r := publishedForm(t, in, adminKey, map[string]any{
		"name": "Contact (form backend)",
		"fields": []map[string]any{
			{"label": "Name", "type": "text", "required": true},
			{"label": "Email", "type": "email", "required": true},
			{"label": "Message", "type": "textarea"},
		},
		"settings": map[string]any{
			"allowed_origins": []string{owner.URL},
			"closing":         map[string]any{"max_submissions": 2, "message": closedMessage},
		},
	})
	fields, _ := r.obj["fields"].([]any)
	id := func(i int) string { s, _ := fields[i].(map[string]any)["id"].(string); return s }

	formURL := in.baseURL + "/f/" + formID
	page := strings.NewReplacer(
		"https://forms.example.com/f/frm_EXAMPLE", formURL,
		"https://www.example.com/thanks.html", owner.URL+"/thanks.html",
	).Replace(string(example))
	// The page names its inputs by the fields' keys (the labels in snake_case), as a form backend's
	// users expect: nothing to fill in but the form's URL.
	if !strings.Contains(page, formURL) || !strings.Contains(page, `name="email"`) || !strings.Contains(page, owner.URL+"/thanks.html") {
		t.Fatal("docs/form-backend-example.html no longer has the placeholders this test fills in")
	}
	mu.Lock()
	ownerHTML = page
	mu.Unlock()

	runNode(t, node, []string{"FORMWARD_CHROMIUM=" + chromium, "FORMWARD_CLOSED_MESSAGE=" + closedMessage},
		"formbackend.spec.mjs", owner.URL+"/contact.html", formURL, artifactsDir(t))

	r, list := submissionsOf(t, in, adminKey, formID)
	if len(list) != 2 {
		t.Fatalf("want the 2 submissions the form takes, got %d: %s", len(list), r.raw)
	}
	byName := map[string]map[string]any{}
	for _, item := range list {
		sub, _ := item.(map[string]any)
		data, _ := sub["data"].(map[string]any)
		name, _ := data[id(0)].(string)
		byName[name] = sub
	}
	for name, want := range map[string]struct{ email, replyTo string }{
		"Grace Hopper": {"grace@example.org", ""},
		"Ada Lovelace": {"Ada@Example.org", "Ada@Example.org"},
	} {
		sub := byName[name]
		if sub == nil {
			t.Fatalf("no submission from %s: %s", name, r.raw)
		}
		data, _ := sub["data"].(map[string]any)
		meta, _ := sub["metadata"].(map[string]any)
		if data[id(1)] != want.email || meta["source"] != "form" || meta["subject"] != "New message from the contact page" {
			t.Errorf("%s: %v", name, sub)
		}
		if got, _ := meta["reply_to"].(string); got != want.replyTo {
			t.Errorf("%s: reply_to %q, want %q", name, got, want.replyTo)
		}
	}
	r = in.do("GET", "/v1/forms/"+formID, adminKey, nil)
	r.expect(t, http.StatusOK)
	if r.obj["closed_reason"] != "max_submissions" {
		t.Errorf("closed_reason = %v", r.obj["closed_reason"])
	}
}
