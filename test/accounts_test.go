package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
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

// postPage posts a dashboard form without following redirects and returns the status, the
// Location and the body.
func postPage(t *testing.T, in *instance, path string, form url.Values) (int, string, string) {
	t.Helper()
	client := &http.Client{Timeout: in.client.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(in.baseURL+path, form)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(body)
}

// "Forgot password" end to end: serve answers an address with an account and one without
// alike, then mails the link from the account mail outbox through a real SMTP server, which
// refuses the first delivery, so the send is retried on FORMWARD_RETRY_DELAYS; the link sets a
// new password that signs in.
func TestForgotPasswordMailArrives(t *testing.T) {
	t.Parallel()
	mail := startRefusingSMTP(t)
	in := newInstance(t, "", "")
	notifyEnv(in, mail)
	in.cli("users", "create", "--email", "ada@example.com", "--name", "Ada Lovelace", "--role", "owner")
	in.startServe()

	unknownStatus, unknownAt, unknownBody := postPage(t, in, "/app/forgot-password", url.Values{"email": {"nobody@example.com"}})
	knownStatus, knownAt, knownBody := postPage(t, in, "/app/forgot-password", url.Values{"email": {"ada@example.com"}})
	if knownStatus != http.StatusSeeOther || unknownStatus != http.StatusSeeOther || knownAt != unknownAt || knownBody != unknownBody {
		t.Fatalf("forgot password answers differ: %d to %q and %d to %q\n%s\n%s", knownStatus, knownAt, unknownStatus, unknownAt, knownBody, unknownBody)
	}

	eventually(t, 20*time.Second, "the password link mail", func() bool { return len(mail.Messages()) > 0 })
	msgs := mail.Messages()
	refused := mail.Refused()
	if len(msgs) != 1 || len(msgs[0].Rcpts) != 1 || msgs[0].Rcpts[0] != "ada@example.com" || refused != 1 {
		t.Fatalf("%d messages (recipients %v), %d refused: want one to ada@example.com after one refusal", len(msgs), msgs[0].Rcpts, refused)
	}
	plain := msgs[0].Parts(t)["text/plain"]
	link := regexp.MustCompile(regexp.QuoteMeta(in.baseURL) + `/app/reset-password\?token=(\S+)`).FindStringSubmatch(plain)
	if link == nil {
		t.Fatalf("no link in the mail:\n%s", plain)
	}
	token, err := url.QueryUnescape(link[1])
	if err != nil {
		t.Fatal(err)
	}
	if status, loc, body := postPage(t, in, "/app/reset-password", url.Values{"token": {token}, "password": {"a brand new passphrase"}}); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/app/login") {
		t.Fatalf("reset with the mailed link: %d to %q\n%s", status, loc, body)
	}
	if status, loc, _ := postPage(t, in, "/app/login", url.Values{"email": {"ada@example.com"}, "password": {"a brand new passphrase"}}); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/app") {
		t.Fatalf("sign-in with the new password: %d to %q", status, loc)
	}
	in.stopServe()
	if strings.Contains(in.logs.String(), token) {
		t.Fatal("the password link was logged")
	}
}
