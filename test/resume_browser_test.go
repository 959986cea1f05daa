package e2e_test

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/email/smtptest"
	"github.com/formward/formward/test/testkit"
)

// TestBrowserSaveAndResume drives save and resume in Chromium (test/browser/resume.spec.mjs)
// against a real `formward serve` with a real SMTP server in-process: with JavaScript on and
// off, at 390 px and desktop width, a respondent fills page 1 of a three-page form, saves on
// page 2, opens the resume link in a fresh browser context, finishes and submits; the used
// link then says so. One more respondent has the link emailed and never comes back. Then:
// the four submissions arrived with every answer; the emailed link resumes the draft; no file
// under the data directory (database, its log, uploads) holds that draft's answers in plain
// text; the drafts endpoint lists it without answers; an erase by the address deletes it.
func TestBrowserSaveAndResume(t *testing.T) {
	t.Parallel()
	node, chromium := browserPrerequisites(t)
	mail := smtptest.Start(t, smtptest.Options{Timeout: 10 * time.Second})
	in := newInstance(t, "", "")
	in.setEnv("FORMWARD_SMTP_URL", "smtp://"+mail.Addr)
	in.setEnv("FORMWARD_SMTP_FROM", "forms@formward.test")
	in.setEnv("FORMWARD_PUBLIC_URL", in.baseURL)
	adminKey := in.cli("keys", "create", "--name", "resume", "--scope", "admin")
	in.startServe()
	formID, r := publishedForm(t, in, adminKey, map[string]any{
		"name": "Browser test: save and resume",
		"fields": []map[string]any{
			{"label": "Name", "type": "text", "required": true},
			{"label": "Email", "type": "email", "required": true},
			{"label": "Colour", "type": "radio", "required": true, "options": []string{"Red", "Blue"}, "page": 2},
			{"label": "Comments", "type": "textarea", "page": 3},
		},
		"settings": map[string]any{"spam": map[string]any{"honeypot": true, "min_fill_seconds": 1},
			"partial": map[string]any{"enabled": true, "ttl_days": 14}},
	})
	ids := fieldIDsByKey(r)

	runNodeWithin(t, 5*time.Minute, node, []string{"FORMWARD_CHROMIUM=" + chromium}, "resume.spec.mjs", in.baseURL+"/f/"+formID, artifactsDir(t))

	r, list := submissionsOf(t, in, adminKey, formID)
	if len(list) != 4 {
		t.Fatalf("want 4 submissions (JavaScript on and off, two widths), got %d: %s", len(list), r.raw)
	}
	for _, item := range list {
		data, _ := item.(map[string]any)["data"].(map[string]any)
		if s, _ := data[ids["comments"]].(string); !strings.HasPrefix(s, "Finished later") || data[ids["name"]] == "" || data[ids["colour"]] == nil {
			t.Errorf("answers: %v", data)
		}
	}

	// The emailed link, to the address typed on the saved page (the typo was refused).
	var msg smtptest.Message
	testkit.Eventually(t, 20*time.Second, func() bool {
		for _, m := range mail.Messages() {
			if len(m.Rcpts) == 1 && m.Rcpts[0] == "quokka@example.org" {
				msg = m
				return true
			}
		}
		return false
	}, "no resume link mailed to quokka@example.org; got %d messages", len(mail.Messages()))
	if n := len(mail.Messages()); n != 1 {
		t.Fatalf("%d messages, want 1 (the refused address got none)", n)
	}
	text := msg.Parts(t)["text/plain"]
	link := regexp.MustCompile(regexp.QuoteMeta(in.baseURL) + `/f/` + formID + `\?resume=drf_[0-9A-Za-z]+\.[0-9A-Za-z_-]+`).FindString(text)
	if link == "" || !strings.Contains(msg.Subject(t), "save and resume") {
		t.Fatalf("resume mail %q: %s", msg.Subject(t), text)
	}
	resp, err := in.client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	page := string(body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `value="Zanzibar Quokka"`) {
		t.Fatalf("the emailed link: %d %s", resp.StatusCode, page)
	}

	// At rest: nothing of the open draft in plain text anywhere under the data directory.
	err = filepath.WalkDir(in.dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, plain := range []string{"Zanzibar", "Quokka", "quokka@example"} {
			if bytes.Contains(b, []byte(plain)) {
				t.Errorf("%s holds %q in plain text", p, plain)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	drafts := in.do("GET", "/v1/forms/"+formID+"/drafts", adminKey, nil)
	drafts.expect(t, http.StatusOK)
	if data, _ := drafts.obj["data"].([]any); len(data) != 1 || bytes.Contains(drafts.raw, []byte("Quokka")) {
		t.Fatalf("open drafts: %s", drafts.raw)
	}
	erased := in.do("POST", "/v1/privacy/erase", adminKey, map[string]any{"email": "Quokka@Example.org"})
	erased.expect(t, http.StatusOK)
	if erased.obj["drafts_deleted"] != float64(1) {
		t.Fatalf("erase: %s", erased.raw)
	}
	drafts = in.do("GET", "/v1/forms/"+formID+"/drafts", adminKey, nil)
	if data, _ := drafts.obj["data"].([]any); len(data) != 0 {
		t.Fatalf("drafts after the erase: %s", drafts.raw)
	}
	if resp, err := in.client.Get(link); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the erased draft's link: %v %v", resp, err)
	}
}
