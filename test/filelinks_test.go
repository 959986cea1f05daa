package e2e_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestMemberFileLinks through `formward serve`: a file posted on the public page is exported
// (CSV, the default) as <public URL>/app/files/<submission>/<file>; a signed-in member opening
// that link is sent to a signed download with the file's bytes, a signed-out visitor to the
// sign-in page. file_links=signed exports the signed link itself.
func TestMemberFileLinks(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "", "")
	key := in.cli("keys", "create", "--name", "files", "--scope", "admin")
	var created struct {
		SetPasswordURL string `json:"set_password_url"`
	}
	if err := json.Unmarshal([]byte(in.cli("users", "create", "--email", "ada@example.com", "--name", "Ada Lovelace", "--role", "owner")), &created); err != nil {
		t.Fatal(err)
	}
	in.startServe()

	r := in.do("POST", "/v1/forms", key, map[string]any{"name": "Applications", "fields": []map[string]any{
		{"label": "Name", "type": "text"}, {"label": "CV", "type": "file"}}})
	r.expect(t, http.StatusCreated)
	formID := r.str(t, "id")
	var ids []string
	for _, f := range r.obj["fields"].([]any) {
		ids = append(ids, f.(map[string]any)["id"].(string))
	}
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published",
		"settings": map[string]any{"spam": map[string]any{"honeypot": true, "min_fill_seconds": 0}}}).expect(t, http.StatusOK)

	// The public page's post, with a file.
	resp, err := in.client.Get(in.baseURL + "/f/" + formID)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := tokenRe.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no render token on the page:\n%s", page)
	}
	cv := []byte("%PDF-1.7\n" + strings.Repeat("experience ", 300))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("_token", string(m[1]))
	_ = mw.WriteField(ids[0], "Ada")
	fw, _ := mw.CreateFormFile(ids[1], "cv.pdf")
	_, _ = fw.Write(cv)
	_ = mw.Close()
	noRedirect := func(jar http.CookieJar) *http.Client {
		return &http.Client{Timeout: in.client.Timeout, Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	req, _ := http.NewRequest("POST", in.baseURL+"/f/"+formID, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if resp, err = noRedirect(nil).Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		t.Fatalf("public post: %d", resp.StatusCode)
	}

	export := func(query string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", in.baseURL+"/v1/forms/"+formID+"/submissions/export"+query, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := in.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
		if resp.StatusCode != http.StatusOK || err != nil || len(rows) != 2 {
			t.Fatalf("export%s: %d %v\n%s", query, resp.StatusCode, err, raw)
		}
		return rows[1][3]
	}
	link := export("")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(in.baseURL) + `/app/files/sub_[0-9A-Za-z]+/obj_[0-9A-Za-z]+/cv\.pdf$`).MatchString(link) {
		t.Fatalf("the CSV export's file link is %q, want %s/app/files/<submission>/<file>", link, in.baseURL)
	}
	if signed := export("?file_links=signed"); !strings.HasPrefix(signed, in.baseURL+"/files/") || !strings.Contains(signed, "sig=") {
		t.Fatalf("file_links=signed gave %q", signed)
	}

	// Signed out: the sign-in page, with the way back.
	if resp, err = noRedirect(nil).Get(link); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/app/login?next="+url.QueryEscape(strings.TrimPrefix(link, in.baseURL)) {
		t.Fatalf("signed out: %d to %q", resp.StatusCode, loc)
	}

	// Signed in (after setting the password): a fresh signed download of the file.
	u, _ := url.Parse(created.SetPasswordURL)
	if status, loc, b := postPage(t, in, "/app/reset-password", url.Values{"token": {u.Query().Get("token")}, "password": {"a brand new passphrase"}}); status != http.StatusSeeOther {
		t.Fatalf("set the password: %d to %q\n%s", status, loc, b)
	}
	jar, _ := cookiejar.New(nil)
	member := noRedirect(jar)
	if resp, err = member.PostForm(in.baseURL+"/app/login", url.Values{"email": {"ada@example.com"}, "password": {"a brand new passphrase"}}); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err = member.Get(link); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	to := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, in.baseURL+"/files/") {
		t.Fatalf("a member opening the link: %d to %q", resp.StatusCode, to)
	}
	if resp, err = member.Get(to); err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, cv) {
		t.Fatalf("the download: %d, %d bytes, want the %d of cv.pdf", resp.StatusCode, len(got), len(cv))
	}
}
