package e2e_test

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var setupLinkRe = regexp.MustCompile(`"setup_url":"([^"]+)"`)

// The first run as the README tells it: serve on a fresh data dir logs a one-time setup link
// under the public URL; every start logs a fresh one while no user exists; once a person has
// been created (here with `users create`, as scripted installs do), no link is logged.
func TestFirstRunSetupLinkAndUsersCreate(t *testing.T) {
	in := newInstance(t, "", randomMasterKey(t))
	in.setEnv("FORMWARD_PUBLIC_URL", "https://forms.example.com/")

	in.startServe()
	in.stopServe()
	links := setupLinkRe.FindAllStringSubmatch(in.logs.String(), -1)
	if len(links) != 1 {
		t.Fatalf("serve on a fresh data dir logged %d setup links, want 1", len(links))
	}
	first := links[0][1]
	u, err := url.Parse(first)
	if err != nil || u.Scheme != "https" || u.Host != "forms.example.com" || u.Path != "/app/setup" || len(u.Query().Get("token")) < 20 {
		t.Fatalf("setup link %q is not <public URL>/app/setup?token=…", first)
	}

	in.startServe()
	in.stopServe()
	links = setupLinkRe.FindAllStringSubmatch(in.logs.String(), -1)
	if len(links) != 2 || links[1][1] == first {
		t.Fatalf("a second start without users logged %d links (%v), want a fresh second one", len(links), links)
	}

	out := in.cli("users", "create", "--email", "ada@example.com", "--name", "Ada Lovelace", "--role", "owner")
	var created struct {
		User struct {
			ID    string `json:"id"`
			Email string `json:"email"`
			Name  string `json:"name"`
		} `json:"user"`
		WorkspaceID    string `json:"workspace_id"`
		Role           string `json:"role"`
		SetPasswordURL string `json:"set_password_url"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("users create printed no JSON: %v\n%s", err, out)
	}
	if !strings.HasPrefix(created.User.ID, "usr_") || created.User.Email != "ada@example.com" || created.Role != "owner" ||
		!strings.HasPrefix(created.SetPasswordURL, "https://forms.example.com/app/reset-password?token=") {
		t.Fatalf("users create: %s", out)
	}
	if strings.Contains(in.logs.String(), created.SetPasswordURL) {
		t.Fatal("the set-password link was logged")
	}
	list := in.cli("users", "list")
	if !strings.Contains(list, "ada@example.com") || !strings.Contains(list, "owner") {
		t.Fatalf("users list:\n%s", list)
	}

	in.startServe()
	in.stopServe()
	if n := len(setupLinkRe.FindAllStringSubmatch(in.logs.String(), -1)); n != 2 {
		t.Fatalf("serve logged a setup link although a user exists (%d links)", n)
	}
}
