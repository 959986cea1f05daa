package e2e_test

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/email/smtptest"
	"github.com/formward/formward/test/testkit"
)

// A form's notifications end to end: a public post produces the owner email (every answer by
// label, files as signed links, reply-to the respondent) and the respondent confirmation,
// through a real SMTP server in-process that refuses every recipient's first delivery with a
// 4xx, so each notification is retried on FORMWARD_RETRY_DELAYS; the run log shows both runs.

var tokenRe = regexp.MustCompile(`name="_token" value="([^"]+)"`)

func notifyEnv(in *instance, mail *smtptest.Server) {
	in.setEnv("FORMWARD_RETRY_DELAYS", "200ms,200ms,200ms")
	in.setEnv("FORMWARD_API_RATE_LIMIT", "0")
	in.setEnv("FORMWARD_SMTP_URL", "smtp://"+mail.Addr)
	in.setEnv("FORMWARD_SMTP_FROM", "forms@formward.test")
	in.setEnv("FORMWARD_PUBLIC_URL", in.baseURL)
}

// TestNotificationsEmbedded: serve alone on SQLite, the pipeline in-process.
func TestNotificationsEmbedded(t *testing.T) {
	t.Parallel()
	mail := startRefusingSMTP(t)
	in := newInstance(t, "", "")
	notifyEnv(in, mail)
	inServe(t, in, "notifications", func(key string) { testNotifications(t, in, mail, key) })
}

// TestNotificationsKafka: serve, relay and worker as separate processes on PostgreSQL and
// Kafka; the worker queues and sends the notifications.
func TestNotificationsKafka(t *testing.T) {
	t.Parallel()
	mail := startRefusingSMTP(t)
	in, _ := newKafkaInstance(t)
	notifyEnv(in, mail)
	inThreeProcesses(t, in, "kafka-notifications", func(key string) { testNotifications(t, in, mail, key) })
}

func testNotifications(t *testing.T, in *instance, mail *smtptest.Server, key string) {
	t.Helper()

	r := in.do("POST", "/v1/forms", key, map[string]any{"name": "Support & <Sales>", "fields": []map[string]any{
		{"label": "Your name", "type": "text", "required": true},
		{"label": "Your email", "type": "email", "required": true},
		{"label": "Topics", "type": "checkbox", "options": []string{"billing", "bugs", "other"}},
		{"label": "Screenshot", "type": "file"},
		{"label": "Message", "type": "textarea"},
	}})
	r.expect(t, http.StatusCreated)
	formID := r.str(t, "id")
	var ids []string
	for _, f := range r.obj["fields"].([]any) {
		ids = append(ids, f.(map[string]any)["id"].(string))
	}
	nameID, emailID, topicsID, fileID, msgID := ids[0], ids[1], ids[2], ids[3], ids[4]

	// The confirmation must point to an email field.
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"settings": map[string]any{"notifications": map[string]any{
		"respondent": map[string]any{"enabled": true, "email_field_id": nameID, "body": "x"}}}}).expectError(t, http.StatusUnprocessableEntity, "validation_failed")

	r = in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published", "settings": map[string]any{
		"spam": map[string]any{"honeypot": true, "min_fill_seconds": 0},
		"notifications": map[string]any{
			"owner": map[string]any{"enabled": true, "to": []string{"owner@example.com", "Lead <lead@example.com>"}},
			"respondent": map[string]any{"enabled": true, "email_field_id": emailID,
				"subject": "We got your message, {{" + nameID + "}}",
				"body":    "<p>Thanks {{" + nameID + "}} for writing to {{form_name}}.</p><p>Reference: {{submission_id}}</p>"},
		}}})
	r.expect(t, http.StatusOK)

	// A public post, as the page sends it: the render token, the answers and a file.
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
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string][]string{"_token": {string(m[1])}, nameID: {`Ada "<b>Lovelace</b>"`}, emailID: {"ada@example.com"},
		topicsID: {"billing", "bugs"}, msgID: {"Line one & more"}} {
		for _, x := range v {
			_ = mw.WriteField(k, x)
		}
	}
	fw, _ := mw.CreateFormFile(fileID, "screen.png")
	_, _ = fw.Write([]byte("\x89PNG\r\n\x1a\n" + strings.Repeat("x", 100)))
	_ = mw.Close()
	req, _ := http.NewRequest("POST", in.baseURL+"/f/"+formID, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	noRedirect := *in.client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		t.Fatalf("public post: %d\n%s", resp.StatusCode, answer)
	}

	// Both emails arrive, each after one refused attempt.
	var runs []any
	if !testkit.Wait(30*time.Second, func() bool {
		r = in.do("GET", "/v1/forms/"+formID+"/notification-runs", key, nil)
		r.expect(t, http.StatusOK)
		runs = r.obj["data"].([]any)
		done := 0
		for _, x := range runs {
			if x.(map[string]any)["finished_at"] != nil {
				done++
			}
		}
		return len(runs) == 2 && done == 2
	}) {
		t.Fatalf("timed out waiting for the notification runs: %s", r.raw)
	}
	var subID string
	for _, x := range runs {
		run := x.(map[string]any)
		acts := run["actions"].([]any)
		act := acts[0].(map[string]any)
		atts := act["attempts"].([]any)
		if run["status"] != "succeeded" || run["workflow_id"] != nil || run["event"] != "submission.created" || len(acts) != 1 ||
			act["type"] != "send_email" || len(atts) != 2 || !strings.Contains(atts[0].(map[string]any)["error"].(string), "451") {
			t.Fatalf("run %v", run)
		}
		if run["kind"] != "owner" && run["kind"] != "respondent" {
			t.Fatalf("kind %v", run["kind"])
		}
		subID = run["submission_id"].(string)
	}
	if runs[0].(map[string]any)["kind"] == runs[1].(map[string]any)["kind"] {
		t.Fatalf("two runs of one kind: %s", r.raw)
	}

	msgs := mail.Messages()
	if len(msgs) != 2 {
		t.Fatalf("SMTP server got %d messages, want 2", len(msgs))
	}
	var owner, confirmation *smtptest.Message
	for i := range msgs {
		if len(msgs[i].Rcpts) == 2 {
			owner = &msgs[i]
		} else {
			confirmation = &msgs[i]
		}
	}
	if owner == nil || confirmation == nil {
		t.Fatalf("messages to %v and %v", msgs[0].Rcpts, msgs[1].Rcpts)
	}

	// The owner email: both owners, reply-to the respondent, every answer by label in form order.
	if strings.Join(owner.Rcpts, ",") != "owner@example.com,lead@example.com" {
		t.Fatalf("owner recipients %v", owner.Rcpts)
	}
	if rt := owner.Header.Get("Reply-To"); !strings.Contains(rt, "ada@example.com") {
		t.Fatalf("Reply-To %q", rt)
	}
	if s, _ := new(mime.WordDecoder).DecodeHeader(owner.Header.Get("Subject")); s != "New response to Support & <Sales>" {
		t.Fatalf("owner subject %q", s)
	}
	parts := owner.Parts(t)
	html, plain := parts["text/html"], strings.ReplaceAll(parts["text/plain"], "\r\n", "\n")
	if !strings.Contains(html, "Ada &#34;&lt;b&gt;Lovelace&lt;/b&gt;&#34;") || strings.Contains(html, "<b>Lovelace") ||
		!strings.Contains(html, "billing, bugs") || !strings.Contains(html, "Line one &amp; more") {
		t.Fatalf("owner HTML:\n%s", html)
	}
	last := -1
	for _, label := range []string{"Your name:", "Your email:\nada@example.com", "Topics:\nbilling, bugs", "Screenshot:\n" + in.baseURL + "/files/", "Message:\nLine one & more"} {
		i := strings.Index(plain, label)
		if i <= last {
			t.Fatalf("plain part lacks %q in form order:\n%s", label, plain)
		}
		last = i
	}
	link := regexp.MustCompile(`href="(` + regexp.QuoteMeta(in.baseURL) + `/files/[^"]+)"`).FindStringSubmatch(html)
	if link == nil {
		t.Fatalf("no file link in the owner HTML:\n%s", html)
	}
	file, err := in.client.Get(strings.ReplaceAll(link[1], "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(file.Body)
	file.Body.Close()
	if file.StatusCode != http.StatusOK || !bytes.HasPrefix(got, []byte("\x89PNG")) {
		t.Fatalf("signed file link: %d", file.StatusCode)
	}

	// The confirmation: to the respondent, templated, values escaped in the HTML.
	if len(confirmation.Rcpts) != 1 || confirmation.Rcpts[0] != "ada@example.com" {
		t.Fatalf("confirmation recipients %v", confirmation.Rcpts)
	}
	if s, _ := new(mime.WordDecoder).DecodeHeader(confirmation.Header.Get("Subject")); s != `We got your message, Ada "<b>Lovelace</b>"` {
		t.Fatalf("confirmation subject %q", s)
	}
	cparts := confirmation.Parts(t)
	if h := cparts["text/html"]; !strings.Contains(h, "Thanks Ada &#34;&lt;b&gt;Lovelace&lt;/b&gt;&#34; for writing to Support &amp; &lt;Sales&gt;.") ||
		!strings.Contains(h, "Reference: "+subID) {
		t.Fatalf("confirmation HTML:\n%s", h)
	}
	if mail.Refused() != 2 {
		t.Fatalf("the server refused %d first deliveries, want 2 (the owners', the respondent's)", mail.Refused())
	}
}
