package capture_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/spam"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// memObjects is an object store in memory; failPut makes the nth Put (1-based) fail with err.
type memObjects struct {
	mu      sync.Mutex
	objects map[string][]byte
	puts    int
	failPut int
	err     error
	used    int64
}

func (m *memObjects) Put(_ context.Context, key string, r io.Reader, size int64, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.puts++
	if m.puts == m.failPut {
		return m.err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if int64(len(b)) != size {
		return errors.New("size mismatch")
	}
	if m.objects == nil {
		m.objects = map[string][]byte{}
	}
	m.objects[key] = b
	return nil
}

func (m *memObjects) Get(_ context.Context, key string) (io.ReadCloser, ports.ObjectInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objects[key]
	if !ok {
		return nil, ports.ObjectInfo{}, domain.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(b)), ports.ObjectInfo{Size: int64(len(b))}, nil
}

func (m *memObjects) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
	return nil
}

func (m *memObjects) DeletePrefix(_ context.Context, prefix string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.objects {
		if strings.HasPrefix(k, prefix) {
			delete(m.objects, k)
		}
	}
	return nil
}

func (m *memObjects) Usage(_ context.Context, prefix string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.used
	for k, b := range m.objects {
		if strings.HasPrefix(k, prefix) {
			n += int64(len(b))
		}
	}
	return n, nil
}

func (m *memObjects) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.objects)
}

// fakeTokens accepts "ok:<nonce>:<seconds ago>" tokens; "expired" and "bad" fail as named.
type fakeTokens struct{}

func (fakeTokens) Verify(formID, token string, now time.Time) (ports.RenderToken, error) {
	switch {
	case token == "":
		return ports.RenderToken{}, ports.ErrTokenMissing
	case token == "expired":
		return ports.RenderToken{}, ports.ErrTokenExpired
	case strings.HasPrefix(token, "ok:"):
		parts := strings.Split(token, ":")
		d, _ := time.ParseDuration(parts[2] + "s")
		return ports.RenderToken{Issued: now.Add(-d), Nonce: parts[1], ExpiresAt: now.Add(time.Hour)}, nil
	}
	return ports.RenderToken{}, ports.ErrTokenInvalid
}

// fakePoW accepts the solution "solved:<nonce>".
type fakePoW struct{}

func (fakePoW) Verify(solution, nonce string, _ time.Time) error {
	switch solution {
	case "":
		return ports.ErrPoWMissing
	case "solved:" + nonce:
		return nil
	}
	return ports.ErrPoWInvalid
}

// fakeCaptcha accepts the response "human".
type fakeCaptcha struct{}

func (fakeCaptcha) Verify(_ context.Context, _ *form.Captcha, response, _ string) error {
	if response != "human" {
		return errors.New("captcha failed")
	}
	return nil
}

// countLimiter allows limit events per key.
type countLimiter struct {
	limit int
	n     map[string]int
}

func (l *countLimiter) Allow(key string, _ time.Time) time.Duration {
	if l.n == nil {
		l.n = map[string]int{}
	}
	if l.n[key] >= l.limit {
		return 42 * time.Second
	}
	l.n[key]++
	return 0
}

type captureFixture struct {
	h       *apptest.Harness
	store   *memObjects
	limiter *countLimiter
	form    *form.Form
	name    string // text field ID
	cv      string // file field ID
}

// newCapture wires the public capture to fakes, with a published form (text and file fields)
// of the given spam settings in a workspace on plan.
func newCapture(t *testing.T, sp form.Spam, plan workspace.Plan) *captureFixture {
	t.Helper()
	store := &memObjects{}
	lim := &countLimiter{limit: 100}
	h := apptest.NewWith(application.Settings{FileLimits: submission.FileLimits{PerField: 3, PerPost: 4}},
		apptest.WithFiles(store))
	h.Workspaces.Items = append(h.Workspaces.Items, workspace.UnmarshalFromDatabase(workspace.Record{ID: "wsp_a", Name: "A", Plan: plan, CreatedAt: apptest.Now}))
	h.App.Commands.SubmitPublicForm = h.App.Commands.SubmitPublicForm.WithSpamChecks(
		capture.SpamChecks{Tokens: fakeTokens{}, ProofOfWork: fakePoW{}, Captcha: fakeCaptcha{}, Limiter: lim})
	settings := form.Settings{Spam: sp}
	v, err := h.App.Commands.CreateForm.Handle(ctx, forms.CreateForm{Draft: form.Draft{Name: "Jobs", Settings: &settings,
		Fields: []form.FieldSpec{{Label: "Name", Type: "text", Required: true}, {Label: "CV", Type: "file", Accept: []string{"application/pdf"}},
			{Label: "More", Type: "file"}}}})
	if err != nil {
		t.Fatal(err)
	}
	f := h.SetStatus(t, "wsp_a", v.Form.ID(), "published")
	return &captureFixture{h: h, store: store, limiter: lim, form: f, name: f.Fields()[0].ID, cv: f.Fields()[1].ID}
}

func pdfUpload(name, body string) capture.Upload {
	return capture.Upload{
		Info: submission.FileInfo{Name: name, Size: int64(len(body)), Declared: "application/pdf", Sniffed: "application/pdf"},
		Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil },
	}
}

func (c *captureFixture) post(cmd capture.SubmitPublicForm) (*submission.Submission, error) {
	cmd.FormID = c.form.ID()
	if cmd.IP == "" {
		cmd.IP = "203.0.113.7"
	}
	if cmd.Data == nil {
		cmd.Data = map[string]submission.Input{c.name: "Ada"}
	}
	return c.h.App.Commands.SubmitPublicForm.Handle(ctx, cmd)
}

func TestSubmitPublicFormStoresFilesUnderTheSubmission(t *testing.T) {
	c := newCapture(t, form.Spam{MinFillSeconds: 3, ProofOfWork: true}, workspace.PlanFree)
	s, err := c.post(capture.SubmitPublicForm{Token: "ok:n1:10", ProofOfWork: "solved:n1",
		Uploads: map[string][]capture.Upload{c.cv: {pdfUpload("cv.pdf", "%PDF-1"), pdfUpload("../letter.pdf", "%PDF-2")}}})
	if err != nil {
		t.Fatal(err)
	}
	keys := s.Data()[c.cv].Strings()
	prefix := ports.SubmissionFilesPrefix("wsp_a", c.form.ID(), s.ID())
	if len(keys) != 2 || !strings.HasPrefix(keys[0], prefix) || !strings.HasSuffix(keys[1], "/letter.pdf") {
		t.Fatalf("keys %v, want under %s", keys, prefix)
	}
	for _, k := range keys {
		if _, _, err := c.store.Get(ctx, k); err != nil {
			t.Fatalf("%s not stored: %v", k, err)
		}
	}
	if len(c.h.Submissions.Items) != 1 || !c.h.Submissions.Spent["n1"] || s.Metadata().Source != submission.SourceForm {
		t.Fatal("submission not stored with its spent token")
	}
}

func TestSubmitPublicFormSpamRules(t *testing.T) {
	all := form.Spam{Honeypot: true, MinFillSeconds: 3, ProofOfWork: true, Captcha: &form.Captcha{Provider: form.CaptchaTurnstile, SiteKey: "s", Secret: "x"}}
	good := capture.SubmitPublicForm{Token: "ok:n1:10", ProofOfWork: "solved:n1", Captcha: "human"}
	cases := []struct {
		name   string
		change func(*capture.SubmitPublicForm)
		reason spam.Reason
		silent bool
	}{
		{"honeypot", func(p *capture.SubmitPublicForm) { p.Honeypot = "http://spam.example" }, spam.ReasonHoneypot, true},
		{"no token", func(p *capture.SubmitPublicForm) { p.Token = "" }, spam.ReasonTokenMissing, false},
		{"forged token", func(p *capture.SubmitPublicForm) { p.Token = "bad" }, spam.ReasonTokenInvalid, false},
		{"expired token", func(p *capture.SubmitPublicForm) { p.Token = "expired" }, spam.ReasonTokenExpired, false},
		{"too fast", func(p *capture.SubmitPublicForm) { p.Token = "ok:n1:2" }, spam.ReasonTooFast, false},
		{"no proof of work", func(p *capture.SubmitPublicForm) { p.ProofOfWork = "" }, spam.ReasonPoWMissing, false},
		{"proof of another token", func(p *capture.SubmitPublicForm) { p.ProofOfWork = "solved:n2" }, spam.ReasonPoWInvalid, false},
		{"captcha", func(p *capture.SubmitPublicForm) { p.Captcha = "bot" }, spam.ReasonCaptcha, false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(t, all, workspace.PlanBusiness)
			cmd := good
			cmd.Uploads = map[string][]capture.Upload{c.cv: {pdfUpload("cv.pdf", "%PDF")}}
			tt.change(&cmd)
			_, err := c.post(cmd)
			var rej *spam.Rejection
			if !errors.As(err, &rej) || rej.Reason != tt.reason || rej.Silent != tt.silent {
				t.Fatalf("got %v, want %s", err, tt.reason)
			}
			if len(c.h.Submissions.Items) != 0 || c.store.puts != 0 {
				t.Fatal("a spam post stored something")
			}
		})
	}
	c := newCapture(t, all, workspace.PlanBusiness)
	if _, err := c.post(good); err != nil {
		t.Fatalf("the good post: %v", err)
	}
}

func TestSubmitPublicFormRateLimitCountsIPv6Slash64(t *testing.T) {
	c := newCapture(t, form.Spam{}, workspace.PlanBusiness)
	c.limiter.limit = 3
	for i, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"} {
		if _, err := c.post(capture.SubmitPublicForm{IP: ip}); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	_, err := c.post(capture.SubmitPublicForm{IP: "2001:db8:1:2::99"})
	var rl *spam.RateLimited
	if !errors.As(err, &rl) || rl.RetryAfter != 42*time.Second {
		t.Fatalf("fourth address of the same /64: %v", err)
	}
	if _, err := c.post(capture.SubmitPublicForm{IP: "2001:db8:1:3::1"}); err != nil {
		t.Fatalf("another /64: %v", err)
	}
	// The challenge endpoint counts through the same rule.
	for i := 0; i < 3; i++ {
		if err := c.h.App.Commands.SubmitPublicForm.Limit("frm_other", "2001:db8:9:9::"+string(rune('1'+i)), apptest.Now); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.h.App.Commands.SubmitPublicForm.Limit("frm_other", "2001:db8:9:9::abcd", apptest.Now); !errors.As(err, &rl) {
		t.Fatalf("challenge: %v", err)
	}
}

func captureCodes(t *testing.T, err error) map[string]string {
	t.Helper()
	var verr *domain.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want a validation error, got %v", err)
	}
	out := map[string]string{}
	for _, v := range verr.Violations {
		out[v.Field] = v.Code
	}
	return out
}

func TestSubmitPublicFormValidatesBeforeStoringFiles(t *testing.T) {
	c := newCapture(t, form.Spam{}, workspace.PlanBusiness)
	more := c.form.Fields()[2].ID
	cases := []struct {
		name  string
		cmd   capture.SubmitPublicForm
		field string
		code  string
	}{
		{"required text missing", capture.SubmitPublicForm{Data: map[string]submission.Input{},
			Uploads: map[string][]capture.Upload{c.cv: {pdfUpload("cv.pdf", "%PDF")}}}, c.name, "required"},
		{"file of the wrong type", capture.SubmitPublicForm{Uploads: map[string][]capture.Upload{c.cv: {{
			Info: submission.FileInfo{Name: "x.pdf", Size: 4, Declared: "application/pdf", Sniffed: "text/html; charset=utf-8"},
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("<htm")), nil }}}}}, c.cv, "file_type_not_allowed"},
		{"a link typed into a file field", capture.SubmitPublicForm{Data: map[string]submission.Input{c.name: "Ada", c.cv: "https://evil.example/x.pdf.exe"}}, c.cv, "invalid_value"},
		{"too many files in a field", capture.SubmitPublicForm{Uploads: map[string][]capture.Upload{
			c.cv: {pdfUpload("1.pdf", "%PDF"), pdfUpload("2.pdf", "%PDF"), pdfUpload("3.pdf", "%PDF"), pdfUpload("4.pdf", "%PDF")}}}, c.cv, "too_many_files"},
		{"too many files in the post", capture.SubmitPublicForm{Uploads: map[string][]capture.Upload{
			c.cv: {pdfUpload("1.pdf", "%PDF"), pdfUpload("2.pdf", "%PDF"), pdfUpload("3.pdf", "%PDF")},
			more: {pdfUpload("4.pdf", "%PDF"), pdfUpload("5.pdf", "%PDF")}}}, "files", "too_many_files"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.post(tt.cmd)
			if got := captureCodes(t, err); got[tt.field] != tt.code {
				t.Fatalf("codes %v, want %s: %s", got, tt.field, tt.code)
			}
			if c.store.puts != 0 || len(c.h.Submissions.Items) != 0 {
				t.Fatal("an invalid post stored something")
			}
		})
	}
}

func TestSubmitPublicFormDiscardsFilesOnRefusal(t *testing.T) {
	t.Run("an upload fails", func(t *testing.T) {
		c := newCapture(t, form.Spam{}, workspace.PlanBusiness)
		c.store.failPut, c.store.err = 2, domain.ErrUnavailable
		_, err := c.post(capture.SubmitPublicForm{Uploads: map[string][]capture.Upload{c.cv: {pdfUpload("1.pdf", "%PDF"), pdfUpload("2.pdf", "%PDF")}}})
		if !errors.Is(err, domain.ErrUnavailable) {
			t.Fatalf("err %v", err)
		}
		if c.store.count() != 0 || len(c.h.Submissions.Items) != 0 {
			t.Fatalf("left %d objects behind", c.store.count())
		}
	})
	t.Run("the token was already spent", func(t *testing.T) {
		c := newCapture(t, form.Spam{MinFillSeconds: 1}, workspace.PlanBusiness)
		up := map[string][]capture.Upload{c.cv: {pdfUpload("1.pdf", "%PDF")}}
		if _, err := c.post(capture.SubmitPublicForm{Token: "ok:n1:10", Uploads: up}); err != nil {
			t.Fatal(err)
		}
		_, err := c.post(capture.SubmitPublicForm{Token: "ok:n1:10", Uploads: up})
		var rej *spam.Rejection
		if !errors.As(err, &rej) || rej.Reason != spam.ReasonTokenReplay {
			t.Fatalf("replay: %v", err)
		}
		if c.store.count() != 1 || len(c.h.Submissions.Items) != 1 {
			t.Fatalf("the replay left %d objects, %d submissions", c.store.count(), len(c.h.Submissions.Items))
		}
	})
	t.Run("over the plan's storage", func(t *testing.T) {
		c := newCapture(t, form.Spam{}, workspace.PlanFree)
		c.store.used = 100*workspace.MB - 5
		_, err := c.post(capture.SubmitPublicForm{Uploads: map[string][]capture.Upload{c.cv: {pdfUpload("1.pdf", "%PDF"), pdfUpload("2.pdf", "%PDF")}}})
		if got := captureCodes(t, err); got[c.cv] != "storage_quota_exceeded" {
			t.Fatalf("codes %v", got)
		}
		if c.store.puts != 0 || len(c.h.Submissions.Items) != 0 {
			t.Fatal("stored over the quota")
		}
	})
}

func TestSubmitPublicFormNeedsAPublishedForm(t *testing.T) {
	c := newCapture(t, form.Spam{}, workspace.PlanBusiness)
	if _, err := c.h.App.Commands.SubmitPublicForm.Handle(ctx, capture.SubmitPublicForm{FormID: "frm_unknown"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	c.h.SetStatus(t, "wsp_a", c.form.ID(), "archived")
	if _, err := c.post(capture.SubmitPublicForm{}); !errors.Is(err, domain.ErrFormClosed) {
		t.Fatalf("archived: %v", err)
	}
	d := c.h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "Name", Type: "text"})
	if _, err := c.h.App.Commands.SubmitPublicForm.Handle(ctx, capture.SubmitPublicForm{FormID: d.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("draft: %v", err)
	}
}

func TestAPIRefusesLinksToTheServersOwnFiles(t *testing.T) {
	h := apptest.NewWith(application.Settings{PublicURL: "https://forms.example.com"})
	f := h.CreateForm(t, "wsp_b", form.FieldSpec{Label: "CV", Type: "file"}, form.FieldSpec{Label: "Age", Type: "number"})
	cv := f.Fields()[0].ID
	for _, link := range []string{"https://forms.example.com/files/workspaces/wsp_a/forms/frm_1/x/cv.pdf", "https://FORMS.example.com:443/files/x"} {
		_, err := h.App.Commands.CaptureSubmission.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), capture.CaptureSubmission{FormID: f.ID(), Source: submission.SourceAPI,
			Data: map[string]submission.Input{cv: []any{link}, f.Fields()[1].ID: "x"}})
		if got := captureCodes(t, err); got[cv] != "invalid_value" || got[f.Fields()[1].ID] == "" {
			t.Fatalf("%s: codes %v", link, got)
		}
	}
	s, err := h.App.Commands.CaptureSubmission.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), capture.CaptureSubmission{FormID: f.ID(), Source: submission.SourceAPI,
		Data: map[string]submission.Input{cv: "https://cdn.example.org/cv.pdf"}})
	if err != nil {
		t.Fatalf("an external link: %v", err)
	}
	if got := s.Data()[cv].Strings(); got[0] != "https://cdn.example.org/cv.pdf" {
		t.Fatalf("kept %v", got)
	}
	_, err = h.App.Commands.UpdateSubmission.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), capture.UpdateSubmission{FormID: f.ID(), ID: s.ID(),
		Changes: map[string]submission.Input{cv: "https://forms.example.com/files/x"}})
	if got := captureCodes(t, err); got[cv] != "invalid_value" {
		t.Fatalf("update: %v", got)
	}
}

// A capture wired without its spam checks refuses what a form asks to check (closed, not open).
func TestSubmitPublicFormWithoutChecksFailsClosed(t *testing.T) {
	c := newCapture(t, form.Spam{ProofOfWork: true}, workspace.PlanBusiness)
	c.h.App.Commands.SubmitPublicForm = c.h.App.Commands.SubmitPublicForm.WithSpamChecks(capture.SpamChecks{})
	_, err := c.post(capture.SubmitPublicForm{Token: "ok:n1:10", ProofOfWork: "solved:n1"})
	var rej *spam.Rejection
	if !errors.As(err, &rej) || len(c.h.Submissions.Items) != 0 {
		t.Fatalf("stored without checks: %v", err)
	}
}

// HandleFor takes the form its caller read: the same checks as Handle, no second read; a form
// that is not the command's is refused as unknown.
func TestSubmitPublicFormHandleForTheFormRead(t *testing.T) {
	c := newCapture(t, form.Spam{}, workspace.PlanFree)
	cmd := capture.SubmitPublicForm{FormID: c.form.ID(), IP: "203.0.113.7", Data: map[string]submission.Input{c.name: "Ada"}}
	if _, err := c.h.App.Commands.SubmitPublicForm.HandleFor(ctx, c.form, cmd); err != nil {
		t.Fatal(err)
	}
	other := cmd
	other.FormID = "frm_other"
	if _, err := c.h.App.Commands.SubmitPublicForm.HandleFor(ctx, c.form, other); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a form that is not the command's: %v, want not found", err)
	}
	draft := c.h.SetStatus(t, "wsp_a", c.form.ID(), "draft")
	if _, err := c.h.App.Commands.SubmitPublicForm.HandleFor(ctx, draft, cmd); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a draft: %v, want not found", err)
	}
	if len(c.h.Submissions.Items) != 1 {
		t.Fatalf("%d submissions stored, want 1", len(c.h.Submissions.Items))
	}
}
