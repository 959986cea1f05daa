package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/email/smtptest"
	"github.com/formward/formward/adapters/sheets/sheetstest"
	"github.com/formward/formward/test/testkit"
)

// The destinations of send_email, chat_message and spreadsheet_append: a real SMTP server
// in-process, a fake Slack Web API and a fake Google OAuth token endpoint + Sheets API v4, the
// two HTTPS fakes with certificates of a throwaway CA given to formward as
// FORMWARD_WEBHOOK_CA_FILE (the SMTP server offers STARTTLS with the same CA).

const (
	destSlackToken   = "xoxb-1234-5678-e2etoken"
	destClientEmail  = "formward-e2e@proj.iam.gserviceaccount.com"
	destKeyID        = "e2e-kid-1"
	destSpreadsheet  = "sheet-e2e-123"
	destSheet        = "Leads 2026"
	destMailFrom     = "forms@formward.test"
	destMailTo       = "sales@example.com"
	destNoteValue    = "<b>x</b>"
	destNameValue    = "Ada Lovelace"
	destNoteEscaped  = "&lt;b&gt;x&lt;/b&gt;"
	destSheetSource  = "website"
	destSlackChannel = "#leads"
)

// destHeaders is the header row of the fake sheet; the mapping names some in another case.
var destHeaders = []any{"Submission", "Name", "Unmapped", "Note", "Source"}

// ---- SMTP ----

func startDestSMTP(t *testing.T, ca *actiontest.TestCA) *smtptest.Server {
	t.Helper()
	return smtptest.Start(t, smtptest.Options{TLS: ca.TLSConfig(), Timeout: 10 * time.Second})
}

// startRefusingSMTP is a plain SMTP server that refuses each address's first delivery (451).
func startRefusingSMTP(t *testing.T) *smtptest.Server {
	t.Helper()
	return smtptest.Start(t, smtptest.Options{RefuseFirst: true, Timeout: 10 * time.Second})
}

// ---- Slack ----

type destSlackPost struct {
	auth, contentType string
	body              map[string]any
}

type destSlack struct {
	mu    sync.Mutex
	posts []destSlackPost
}

func (s *destSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if r.Method != http.MethodPost || r.URL.Path != "/api/chat.postMessage" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"ok":false,"error":"unknown_method"}`))
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	post := destSlackPost{auth: r.Header.Get("Authorization"), contentType: r.Header.Get("Content-Type")}
	if err := json.Unmarshal(raw, &body); err != nil {
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_json"}`))
		return
	}
	post.body = body
	s.mu.Lock()
	s.posts = append(s.posts, post)
	s.mu.Unlock()
	switch {
	case post.auth != "Bearer "+destSlackToken:
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
	case body["channel"] == nil || body["channel"] == "":
		_, _ = w.Write([]byte(`{"ok":false,"error":"channel_not_found"}`))
	case body["text"] == nil || body["text"] == "":
		_, _ = w.Write([]byte(`{"ok":false,"error":"no_text"}`))
	default:
		_, _ = w.Write([]byte(`{"ok":true,"channel":"C0123","ts":"1700000000.000100","message":{"text":"ok"}}`))
	}
}

func (s *destSlack) received() []destSlackPost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]destSlackPost(nil), s.posts...)
}

// ---- all three ----

type destinations struct {
	ca     *actiontest.TestCA
	mail   *smtptest.Server
	slack  *destSlack
	google *sheetstest.Google
	saJSON string
}

func newDestinations(t *testing.T) *destinations {
	t.Helper()
	ca := actiontest.NewCA(t)
	sa := sheetstest.NewServiceAccount(t, destClientEmail, destKeyID)
	return &destinations{ca: ca, mail: startDestSMTP(t, ca), slack: &destSlack{}, saJSON: sa.JSON(t),
		google: sheetstest.NewGoogle(sa, destSpreadsheet, destSheet, destHeaders...)}
}

// env points an instance at the three destinations, with the fast retry schedule of the other
// pipeline tests.
func (d *destinations) env(t *testing.T, in *instance) {
	t.Helper()
	slackSrv := d.ca.HTTPSServer(t, d.slack)
	googleURL := d.google.Serve(t, d.ca)
	in.setEnv("FORMWARD_WEBHOOK_CA_FILE", d.ca.File)
	in.setEnv("FORMWARD_ALLOW_PRIVATE_DESTINATIONS", "true")
	in.setEnv("FORMWARD_RETRY_DELAYS", "200ms,200ms,200ms,200ms")
	in.setEnv("FORMWARD_BREAKER_COOLDOWN", "300ms")
	in.setEnv("FORMWARD_API_RATE_LIMIT", "0")
	in.setEnv("FORMWARD_SMTP_URL", "smtp://"+d.mail.Addr)
	in.setEnv("FORMWARD_SMTP_FROM", destMailFrom)
	in.setEnv("FORMWARD_SLACK_API_URL", slackSrv.URL)
	in.setEnv("FORMWARD_GOOGLE_SHEETS_URL", googleURL)
	in.setEnv("FORMWARD_GOOGLE_TOKEN_URL", googleURL+"/token")
}

// TestWorkflowDestinationsEmbedded: send_email, chat_message and spreadsheet_append of one
// workflow reach a real SMTP server, a Slack fake and a Google fake from a published form's
// submission, in embedded mode (SQLite, one process).
func TestWorkflowDestinationsEmbedded(t *testing.T) {
	t.Parallel()
	d := newDestinations(t)
	in := newInstance(t, "", "")
	d.env(t, in)
	inServe(t, in, "destinations", func(key string) { testWorkflowDestinations(t, in, d, key) })
}

// TestWorkflowDestinationsKafka: the same with serve, relay and worker as separate processes on
// PostgreSQL and Kafka.
func TestWorkflowDestinationsKafka(t *testing.T) {
	t.Parallel()
	d := newDestinations(t)
	in, _ := newKafkaInstance(t)
	d.env(t, in)
	inThreeProcesses(t, in, "kafka-destinations", func(key string) { testWorkflowDestinations(t, in, d, key) })
}

func testWorkflowDestinations(t *testing.T, in *instance, d *destinations, key string) {
	t.Helper()

	// Integrations: the Slack bot token and the service-account key file (as the JSON object).
	r := in.do("POST", "/v1/integrations", key, map[string]any{"type": "slack", "credentials": map[string]any{"bot_token": destSlackToken}})
	r.expect(t, http.StatusCreated)
	if bytes.Contains(r.raw, []byte(destSlackToken)) {
		t.Fatalf("POST /v1/integrations returned the bot token: %s", r.raw)
	}
	r = in.do("POST", "/v1/integrations", key, map[string]any{"type": "google_sheets",
		"credentials": map[string]any{"service_account_json": json.RawMessage(d.saJSON)}})
	r.expect(t, http.StatusCreated)
	if bytes.Contains(r.raw, []byte("PRIVATE KEY")) {
		t.Fatalf("POST /v1/integrations returned the private key: %s", r.raw)
	}

	// A published form with two fields.
	r = in.do("POST", "/v1/forms", key, map[string]any{"name": "Leads", "fields": []map[string]any{
		{"label": "Name", "type": "text", "required": true},
		{"label": "Note", "type": "text", "required": true},
	}})
	r.expect(t, http.StatusCreated)
	formID := r.str(t, "id")
	fields, _ := r.obj["fields"].([]any)
	if len(fields) != 2 {
		t.Fatalf("form fields = %v", r.obj["fields"])
	}
	nameID := fields[0].(map[string]any)["id"].(string)
	noteID := fields[1].(map[string]any)["id"].(string)
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)

	wfID, actIDs := createWorkflow(t, in, key, formID, "Route lead",
		map[string]any{"type": "send_email", "config": map[string]any{
			"to":      destMailTo,
			"subject": "New {{form_name}} lead: {{" + nameID + "}}",
			"body":    "<h1>New lead</h1><p>Name: {{" + nameID + "}}</p><p>Note: {{" + noteID + "}}</p>",
		}},
		map[string]any{"type": "chat_message", "config": map[string]any{
			"channel": destSlackChannel,
			"message": "New lead on {{form_name}}: {{" + nameID + "}} says {{" + noteID + "}}",
		}},
		map[string]any{"type": "spreadsheet_append", "config": map[string]any{
			"spreadsheet_id": destSpreadsheet, "sheet_name": destSheet,
			"row_mapping": map[string]any{
				"name": nameID, "NOTE": noteID, "Source": destSheetSource, "Submission": "{{submission_id}}",
			},
		}})
	if len(actIDs) != 3 {
		t.Fatalf("workflow actions = %v", actIDs)
	}

	r = in.do("POST", "/v1/forms/"+formID+"/submissions", key, map[string]any{"data": map[string]any{nameID: destNameValue, noteID: destNoteValue}})
	r.expect(t, http.StatusCreated)
	subID := r.str(t, "id")

	// All three destinations received it.
	arrived := func() bool {
		return len(d.mail.Messages()) >= 1 && len(d.slack.received()) >= 1 && len(d.google.Log().Appended) >= 1
	}
	if !testkit.Wait(30*time.Second, arrived) {
		google := d.google.Log()
		t.Fatalf("timed out after 30s waiting for the destinations: %d mails, %d Slack posts, %d sheet rows (Google refused %q); runs: %v",
			len(d.mail.Messages()), len(d.slack.received()), len(google.Appended), google.Refused, runsOf(t, in, key, wfID))
	}

	// The run log: one run, succeeded, three succeeded actions in order.
	run := finishedRun(t, in, key, wfID)
	if run["status"] != "succeeded" || run["submission_id"] != subID || run["event"] != "submission.created" || run["finished_at"] == nil {
		t.Fatalf("run = %v", run)
	}
	acts := runActions(run)
	if len(acts) != 3 {
		t.Fatalf("run actions = %v", acts)
	}
	for i, a := range acts {
		if a["action_id"] != actIDs[i] || a["status"] != "succeeded" || len(attemptsOf(a)) != 1 {
			t.Fatalf("run action %d = %v (want %s succeeded at the first attempt)", i, a, actIDs[i])
		}
	}

	// send_email: one message over STARTTLS to the recipient, templated subject, the value
	// escaped in the HTML part, a text/plain alternative reading it as itself.
	msgs := d.mail.Messages()
	if len(msgs) != 1 {
		t.Fatalf("SMTP server got %d messages, want 1", len(msgs))
	}
	mail := msgs[0]
	if mail.From != destMailFrom || len(mail.Rcpts) != 1 || mail.Rcpts[0] != destMailTo {
		t.Fatalf("envelope from %q to %v", mail.From, mail.Rcpts)
	}
	if !mail.TLS {
		t.Errorf("the mail was not sent over STARTTLS, though the server offered it")
	}
	if want := "New Leads lead: " + destNameValue; mail.Subject(t) != want {
		t.Errorf("Subject = %q, want %q", mail.Subject(t), want)
	}
	if to := mail.Header.Get("To"); !strings.Contains(to, destMailTo) {
		t.Errorf("To = %q", to)
	}
	if mt := mail.MediaType(t); mt != "multipart/alternative" {
		t.Fatalf("mail Content-Type %q, want multipart/alternative\n%s", mt, mail.Body)
	}
	parts := mail.Parts(t)
	htmlPart, plain := parts["text/html"], parts["text/plain"]
	if !strings.Contains(htmlPart, "<p>Note: "+destNoteEscaped+"</p>") || strings.Contains(htmlPart, destNoteValue) ||
		!strings.Contains(htmlPart, "<p>Name: "+destNameValue+"</p>") {
		t.Errorf("HTML part does not carry the escaped value:\n%s", htmlPart)
	}
	if plain == "" {
		t.Errorf("no text/plain alternative; parts: %v", parts)
	} else if strings.Contains(plain, "<p>") || !strings.Contains(plain, "Note: "+destNoteValue) || !strings.Contains(plain, "Name: "+destNameValue) {
		t.Errorf("text/plain alternative:\n%s", plain)
	}

	// chat_message: one chat.postMessage with the bot token and the rendered text.
	posts := d.slack.received()
	if len(posts) != 1 {
		t.Fatalf("Slack got %d posts, want 1", len(posts))
	}
	p := posts[0]
	if p.auth != "Bearer "+destSlackToken || !strings.HasPrefix(p.contentType, "application/json") {
		t.Errorf("Slack request Authorization %q Content-Type %q", p.auth, p.contentType)
	}
	if want := "New lead on Leads: " + destNameValue + " says " + destNoteValue; p.body["channel"] != destSlackChannel || p.body["text"] != want {
		t.Errorf("Slack body = %v, want channel %q text %q", p.body, destSlackChannel, want)
	}

	// spreadsheet_append: the row follows the header row (case-insensitive), unmapped columns
	// empty, static and templated values written.
	google := d.google.Log()
	if len(google.Refused) > 0 {
		t.Errorf("the Google fake refused: %q", google.Refused)
	}
	want := []string{subID, destNameValue, "", destNoteValue, destSheetSource}
	if len(google.Appended) != 1 || strings.Join(google.Appended[0], "|") != strings.Join(want, "|") {
		t.Fatalf("appended rows %q, want one row %q", google.Appended, want)
	}
	if google.HeaderGETs != 1 || google.AppendRange != "'"+destSheet+"'!A1" || google.AppendQuery != "valueInputOption=RAW&insertDataOption=INSERT_ROWS" {
		t.Errorf("header reads %d, append range %q query %q", google.HeaderGETs, google.AppendRange, google.AppendQuery)
	}
}
