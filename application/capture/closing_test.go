package capture_test

import (
	"errors"
	"testing"

	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
	"github.com/formward/formward/domain/spam"
	"github.com/formward/formward/domain/workspace"
)

// withSettings replaces the fixture form's settings.
func (c *captureFixture) withSettings(t *testing.T, change func(*form.Settings)) {
	t.Helper()
	s := c.form.Settings()
	change(&s)
	v, err := c.h.App.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: c.form.ID(), Patch: form.Patch{Settings: &s}})
	if err != nil {
		t.Fatal(err)
	}
	c.form = v.Form
}

func TestSubmitPublicFormFromOtherSites(t *testing.T) {
	all := form.Spam{Honeypot: true, MinFillSeconds: 3, ProofOfWork: true}
	const site = "https://www.example.com"
	at := func(raw ...string) []origin.Origin {
		out := make([]origin.Origin, len(raw))
		for i, r := range raw {
			o, err := origin.Parse(r)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = o
		}
		return out
	}
	from := func(raw string) origin.Origin { return at(raw)[0] }
	cases := []struct {
		name    string
		allowed []origin.Origin
		cors    []origin.Origin
		cmd     capture.SubmitPublicForm
		reason  spam.Reason // "" stored
	}{
		{"form-backend post skips token, fill time and proof of work", at(site), nil, capture.SubmitPublicForm{Origin: from(site)}, ""},
		{"form-backend post still meets the honeypot", at(site), nil, capture.SubmitPublicForm{Origin: from(site), Honeypot: "x"}, spam.ReasonHoneypot},
		{"a token from an allowed site is checked as usual", at(site), nil, capture.SubmitPublicForm{Origin: from(site), Token: "ok:n1:1"}, spam.ReasonTooFast},
		{"another site is refused", at(site), nil, capture.SubmitPublicForm{Origin: from("https://evil.example")}, capture.ReasonOriginNotAllowed},
		{"an embedding site keeps its token rules", at(site), at("https://app.example.com"), capture.SubmitPublicForm{Origin: from("https://app.example.com")}, spam.ReasonTokenMissing},
		{"without allowed origins nothing changes", nil, nil, capture.SubmitPublicForm{Origin: from(site)}, spam.ReasonTokenMissing},
		{"own page (no origin) needs its token", at(site), nil, capture.SubmitPublicForm{}, spam.ReasonTokenMissing},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(t, all, workspace.PlanBusiness)
			c.withSettings(t, func(s *form.Settings) { s.AllowedOrigins, s.Embed.CORSOrigins = tt.allowed, tt.cors })
			_, err := c.post(tt.cmd)
			if tt.reason == "" {
				if err != nil || len(c.h.Submissions.Items) != 1 {
					t.Fatalf("err %v, %d stored", err, len(c.h.Submissions.Items))
				}
				return
			}
			var rej *spam.Rejection
			if !errors.As(err, &rej) || rej.Reason != tt.reason {
				t.Fatalf("got %v, want %s", err, tt.reason)
			}
			if len(c.h.Submissions.Items) != 0 {
				t.Fatal("a refused post was stored")
			}
		})
	}
}

func TestSubmitPublicFormClosingInTheTransaction(t *testing.T) {
	c := newCapture(t, form.Spam{}, workspace.PlanBusiness)
	msg := "All seats taken."
	one := int64(1)
	c.withSettings(t, func(s *form.Settings) { s.Closing = form.Closing{MaxSubmissions: &one, Message: &msg} })
	if _, err := c.post(capture.SubmitPublicForm{}); err != nil {
		t.Fatal(err)
	}
	// The form's count (read before the transaction) still says 0: the repository's guard
	// refuses the post, with the owner's message, and the uploaded file is deleted again.
	_, err := c.post(capture.SubmitPublicForm{Uploads: map[string][]capture.Upload{c.cv: {pdfUpload("cv.pdf", "%PDF")}}})
	var closed *form.ClosedError
	if !errors.As(err, &closed) || !errors.Is(err, domain.ErrFormClosed) || closed.Reason != form.ClosedByLimit || closed.Message != msg {
		t.Fatalf("got %v", err)
	}
	if c.store.count() != 0 {
		t.Fatal("the refused post's file was kept")
	}

	// Reply fields are checked with the answers, in one 422.
	c = newCapture(t, form.Spam{}, workspace.PlanBusiness)
	bad := "two@example.com three@example.com"
	_, err = c.post(capture.SubmitPublicForm{ReplyTo: &bad, Data: map[string]any{}})
	codes := captureCodes(t, err)
	if codes[c.name] != "required" || codes["_replyto"] != "invalid_value" {
		t.Fatalf("codes %v", codes)
	}
}
