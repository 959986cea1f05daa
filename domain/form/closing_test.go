package form_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
)

func closingForm(t *testing.T, c form.Closing) (*form.Form, error) {
	t.Helper()
	s := form.DefaultSettings()
	s.Closing = c
	ids := []string{"fld_name", "fld_mail"}
	return form.New("frm_1", "ws_1", form.Draft{Name: "Signup", Settings: &s, Fields: []form.FieldSpec{
		{Label: "Name", Type: "text"},
		{Label: "Email", Type: "email"},
	}}, func() string { id := ids[0]; ids = ids[1:]; return id }, form.DefaultLimits, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func TestClosingReason(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		c     form.Closing
		now   time.Time
		count int64
		want  form.ClosedReason
	}{
		{"no rules", form.Closing{}, at, 1 << 40, ""},
		{"before closes_at", form.Closing{ClosesAt: &at}, at.Add(-time.Millisecond), 0, ""},
		{"at closes_at", form.Closing{ClosesAt: &at}, at, 0, form.ClosedByTime},
		{"after closes_at", form.Closing{ClosesAt: &at}, at.Add(time.Hour), 0, form.ClosedByTime},
		{"under the limit", form.Closing{MaxSubmissions: ptr[int64](10)}, at, 9, ""},
		{"at the limit", form.Closing{MaxSubmissions: ptr[int64](10)}, at, 10, form.ClosedByLimit},
		{"over the limit (API submissions)", form.Closing{MaxSubmissions: ptr[int64](10)}, at, 12, form.ClosedByLimit},
		{"time wins", form.Closing{ClosesAt: &at, MaxSubmissions: ptr[int64](1)}, at, 5, form.ClosedByTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Reason(tt.now, tt.count); got != tt.want {
				t.Fatalf("Reason = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAcceptsRespondents(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	f, err := closingForm(t, form.Closing{ClosesAt: &at, MaxSubmissions: ptr[int64](3), Message: ptr("Registration is over.")})
	if err != nil {
		t.Fatal(err)
	}
	// A draft is not open whatever its rules.
	if err := f.AcceptsRespondents(at.Add(-time.Hour), 0); !errors.Is(err, domain.ErrFormClosed) {
		t.Fatalf("draft: %v", err)
	}
	if _, err := f.Apply(form.Patch{Status: ptr("published")}, nil, form.DefaultLimits, at); err != nil {
		t.Fatal(err)
	}
	if err := f.AcceptsRespondents(at.Add(-time.Hour), 2); err != nil {
		t.Fatalf("open form refused: %v", err)
	}
	err = f.AcceptsRespondents(at.Add(-time.Hour), 3)
	var closed *form.ClosedError
	if !errors.As(err, &closed) || !errors.Is(err, domain.ErrFormClosed) || closed.Reason != form.ClosedByLimit || closed.Message != "Registration is over." {
		t.Fatalf("full form: %#v", err)
	}
	if err := f.AcceptsRespondents(at, 0); !errors.As(err, &closed) || closed.Reason != form.ClosedByTime {
		t.Fatalf("past closes_at: %v", err)
	}
	if f.SubmissionLimit() != 3 {
		t.Fatalf("limit = %d", f.SubmissionLimit())
	}
}

func TestClosingValidation(t *testing.T) {
	tests := []struct {
		name  string
		c     form.Closing
		field string
		code  string
	}{
		{"limit zero", form.Closing{MaxSubmissions: ptr[int64](0)}, "settings.closing.max_submissions", "out_of_range"},
		{"limit negative", form.Closing{MaxSubmissions: ptr[int64](-1)}, "settings.closing.max_submissions", "out_of_range"},
		{"limit huge", form.Closing{MaxSubmissions: ptr[int64](form.MaxSubmissionsLimit + 1)}, "settings.closing.max_submissions", "out_of_range"},
		{"message too long", form.Closing{Message: ptr(strings.Repeat("é", 5001))}, "settings.closing.message", "too_long"},
		{"message control char", form.Closing{Message: ptr("closed\x00")}, "settings.closing.message", "invalid_value"},
		{"email field unknown", form.Closing{OnePerEmailField: ptr("fld_nope")}, "settings.closing.one_per_email_field", "invalid_value"},
		{"email field not email", form.Closing{OnePerEmailField: ptr("fld_name")}, "settings.closing.one_per_email_field", "invalid_value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := closingForm(t, tt.c)
			var ve *domain.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v", err)
			}
			for _, v := range ve.Violations {
				if v.Field == tt.field && v.Code == tt.code {
					return
				}
			}
			t.Fatalf("violations %+v lack %s %s", ve.Violations, tt.field, tt.code)
		})
	}

	at := time.Date(2026, 6, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600))
	f, err := closingForm(t, form.Closing{ClosesAt: &at, MaxSubmissions: ptr[int64](1), OnePerEmailField: ptr("fld_mail"), Message: ptr("Bye")})
	if err != nil {
		t.Fatal(err)
	}
	got := f.Settings().Closing
	if got.ClosesAt.Location() != time.UTC || !got.ClosesAt.Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("closes_at = %v", got.ClosesAt)
	}
	if fl, ok := f.OnePerEmailField(); !ok || fl.ID != "fld_mail" {
		t.Fatalf("one per email field = %v %v", fl, ok)
	}
	// The returned rules are a copy.
	*got.MaxSubmissions = 99
	if f.SubmissionLimit() != 1 {
		t.Fatal("settings copy shares the limit")
	}

	// Removing the email field the rule names is refused.
	_, err = f.Apply(form.Patch{Fields: &[]form.FieldSpec{{ID: "fld_name", Label: "Name", Type: "text"}}}, func() string { return "fld_new" }, form.DefaultLimits, at)
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Violations[0].Field != "settings.closing.one_per_email_field" {
		t.Fatalf("removing the email field: %v", err)
	}
}

func TestEmailIdentity(t *testing.T) {
	if form.EmailIdentity("  Ada@Example.COM ") != "ada@example.com" {
		t.Fatal(form.EmailIdentity("  Ada@Example.COM "))
	}
}

func TestAllowedOriginsAndNext(t *testing.T) {
	s := form.DefaultSettings()
	s.AllowedOrigins = origins(t, "https://Example.com:443", "http://127.0.0.2:8080", "http://[::1]:8080")
	s.Embed.CORSOrigins = origins(t, "https://app.example.com")
	f, err := form.New("frm_1", "ws_1", form.Draft{Name: "x", Settings: &s}, nil, form.DefaultLimits, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got := f.Settings()
	if got.AllowedOrigins[0].String() != "https://example.com" || !got.AllowsPostsFrom(origins(t, "http://127.0.0.2:8080")[0]) ||
		!got.AllowsPostsFrom(origins(t, "http://[0:0::1]:8080")[0]) || got.AllowsPostsFrom(origins(t, "https://app.example.com")[0]) ||
		got.AllowsPostsFrom(origin.Origin{}) {
		t.Fatalf("allowed origins = %v", got.AllowedOrigins)
	}
	if len(got.PostOrigins()) != 4 {
		t.Fatalf("post origins = %v", got.PostOrigins())
	}
	for raw, want := range map[string]string{
		"https://example.com/thanks?x=1":     "https://example.com/thanks?x=1",
		"https://EXAMPLE.com:443/thanks":     "https://example.com/thanks",
		"http://127.0.0.2:8080/done.html":    "http://127.0.0.2:8080/done.html",
		"http://[::1]:8080/done":             "http://[::1]:8080/done",
		"http://[::1]:8081/done":             "",
		"https://evil.example/thanks":        "",
		"https://example.com.evil.example/":  "",
		"javascript:alert(1)":                "",
		"//example.com/thanks":               "",
		"/thanks":                            "",
		"https://user@example.com/thanks":    "",
		"https://example.com/a\"><script>":   "",
		"https://example.com/thanks\r\nX: y": "",
		"":                                   "",
	} {
		next, ok := got.NextURL(raw)
		if next != want || ok != (want != "") {
			t.Errorf("NextURL(%q) = %q %v, want %q", raw, next, ok, want)
		}
	}

	// A list that is not all origins (only the adapters can put a zero Origin there) is refused.
	s.AllowedOrigins = []origin.Origin{{}}
	_, err = form.New("frm_1", "ws_1", form.Draft{Name: "x", Settings: &s}, nil, form.DefaultLimits, time.Now())
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Violations[0].Field != "settings.allowed_origins[0]" || ve.Violations[0].Code != "invalid_origin" {
		t.Fatalf("zero origin: %v", err)
	}
}

// origins parses origins for a test.
func origins(t *testing.T, raw ...string) []origin.Origin {
	t.Helper()
	out := make([]origin.Origin, len(raw))
	for i, r := range raw {
		o, err := origin.Parse(r)
		if err != nil {
			t.Fatalf("origin %q: %v", r, err)
		}
		out[i] = o
	}
	return out
}
