package bootstrap

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/formward/formward/application/accounts"
)

// While nobody has an account, serve logs a one-time setup link under the public URL, a fresh
// one at each start (the earlier one stops working); once a person exists, none.
func TestSetupLinkIsLoggedUntilSomeoneHasAnAccount(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t, "--public-url", "https://forms.example.com/")
	rt, cleanup, err := newRuntime(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	core, logs := observer.New(zap.InfoLevel)
	rt.Log = zap.New(core)

	link := func() string {
		t.Helper()
		if err := announceSetup(ctx, cfg, rt); err != nil {
			t.Fatal(err)
		}
		entries := logs.TakeAll()
		if len(entries) == 0 {
			return ""
		}
		if len(entries) != 1 || !strings.Contains(entries[0].Message, "create the first owner") {
			t.Fatalf("log entries %+v", entries)
		}
		return entries[0].ContextMap()["setup_url"].(string)
	}
	first := link()
	u, err := url.Parse(first)
	if err != nil || u.Scheme != "https" || u.Host != "forms.example.com" || u.Path != "/app/setup" || len(u.Query().Get("token")) < 20 {
		t.Fatalf("setup link %q is not <public URL>/app/setup?token=…", first)
	}
	second := link()
	if second == "" || second == first {
		t.Fatalf("second start: link %q, want a fresh one", second)
	}
	if _, err := rt.App.Commands.CreateUser.Handle(ctx, accounts.CreateUser{Email: "ada@example.com", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	if l := link(); l != "" {
		t.Fatalf("a setup link was logged although a user exists: %s", l)
	}
}

type createdUser struct {
	User struct {
		ID    string `json:"id"`
		Email string `json:"email"`
		Name  string `json:"name"`
	} `json:"user"`
	MembershipID   string `json:"membership_id"`
	WorkspaceID    string `json:"workspace_id"`
	Role           string `json:"role"`
	SetPasswordURL string `json:"set_password_url"`
	ExpiresAt      string `json:"expires_at"`
}

func TestUsersCreateAndList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	base := []string{"--data-dir", dir, "--log-level", "error"}
	code, stdout, stderr := run(t, append([]string{"users", "create", "--init", "--email", "Ada@Example.com", "--name", "Ada Lovelace",
		"--public-url", "https://forms.example.com"}, base...)...)
	if code != 0 {
		t.Fatalf("users create: exit %d\n%s", code, stderr)
	}
	var ada createdUser
	if err := json.Unmarshal([]byte(stdout), &ada); err != nil {
		t.Fatalf("users create printed no JSON: %v\n%s", err, stdout)
	}
	if !strings.HasPrefix(ada.User.ID, "usr_") || ada.User.Email != "ada@example.com" || ada.User.Name != "Ada Lovelace" ||
		ada.Role != "owner" || !strings.HasPrefix(ada.WorkspaceID, "wsp_") || !strings.HasPrefix(ada.MembershipID, "mem_") || ada.ExpiresAt == "" {
		t.Fatalf("users create: %s", stdout)
	}
	if !strings.HasPrefix(ada.SetPasswordURL, "https://forms.example.com/app/reset-password?token=") {
		t.Fatalf("set-password link %q", ada.SetPasswordURL)
	}

	// Without --public-url the link is under the listen address, as serve's links are.
	t.Setenv("FORMWARD_HTTP_ADDR", "127.0.0.1:9123")
	var out, errOut strings.Builder
	if c := Main(append([]string{"users", "create", "--email", "grace@example.com", "--role", "viewer"}, base...), &out, &errOut); c != 0 {
		t.Fatalf("users create --role viewer: exit %d\n%s", c, errOut.String())
	}
	var grace createdUser
	if err := json.Unmarshal([]byte(out.String()), &grace); err != nil {
		t.Fatal(err)
	}
	if grace.Role != "viewer" || grace.WorkspaceID != ada.WorkspaceID || !strings.HasPrefix(grace.SetPasswordURL, "http://127.0.0.1:9123/app/reset-password?token=") {
		t.Fatalf("second user: %s", out.String())
	}

	for _, bad := range [][]string{
		{"--email", "not-an-email"},
		{"--email", "linus@example.com", "--role", "emperor"},
		{"--email", "linus@example.com", "--workspace", "wsp_missing"},
	} {
		if code, stdout, _ := run(t, append(append([]string{"users", "create"}, bad...), base...)...); code == 0 {
			t.Errorf("users create %v succeeded: %s", bad, stdout)
		}
	}

	code, stdout, stderr = run(t, append([]string{"users", "list", "--json"}, base...)...)
	if code != 0 {
		t.Fatalf("users list: exit %d\n%s", code, stderr)
	}
	var rows []map[string]string
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0]["email"] != "ada@example.com" || rows[0]["role"] != "owner" || rows[1]["email"] != "grace@example.com" || rows[1]["role"] != "viewer" {
		t.Fatalf("users list: %s", stdout)
	}
	if strings.Contains(stdout, "token") {
		t.Fatal("users list shows a token")
	}
	code, stdout, _ = run(t, append([]string{"users", "list"}, base...)...)
	if code != 0 || !strings.Contains(stdout, "grace@example.com") || !strings.Contains(stdout, "EMAIL") {
		t.Fatalf("users list (table): %d\n%s", code, stdout)
	}
	if code, _, _ := run(t, append([]string{"users", "list", "--workspace", "wsp_missing"}, base...)...); code == 0 {
		t.Fatal("users list of an unknown workspace succeeded")
	}
}
