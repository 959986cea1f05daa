package webhook_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
)

var now = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func codes(err error) map[string]string {
	var ve *domain.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	out := map[string]string{}
	for _, v := range ve.Violations {
		out[v.Field] = v.Code
	}
	return out
}

func TestNewValidates(t *testing.T) {
	ok := []string{"submission.created"}
	cases := []struct {
		name  string
		draft webhook.Draft
		want  map[string]string // field → code; nil means valid
	}{
		{"valid", webhook.Draft{URL: "https://example.com/hook", Events: ok}, nil},
		{"valid with form and secret", webhook.Draft{URL: " https://example.com/hook ", Events: ok, FormID: ptr("frm_1"), Secret: ptr("s3cret")}, nil},
		{"missing url", webhook.Draft{Events: ok}, map[string]string{"url": "required"}},
		{"http", webhook.Draft{URL: "http://example.com/hook", Events: ok}, map[string]string{"url": "https_required"}},
		{"relative", webhook.Draft{URL: "/hook", Events: ok}, map[string]string{"url": "invalid_url"}},
		{"opaque", webhook.Draft{URL: "https:example.com", Events: ok}, map[string]string{"url": "invalid_url"}},
		{"userinfo", webhook.Draft{URL: "https://u:p@example.com/", Events: ok}, map[string]string{"url": "invalid_url"}},
		{"too long", webhook.Draft{URL: "https://example.com/" + strings.Repeat("a", webhook.MaxURL), Events: ok}, map[string]string{"url": "too_long"}},
		{"no events", webhook.Draft{URL: "https://example.com/"}, map[string]string{"events": "required"}},
		{"unknown event", webhook.Draft{URL: "https://example.com/", Events: []string{"form.published", "form.deleted"}}, map[string]string{"events[1]": "invalid_value"}},
		{"empty secret", webhook.Draft{URL: "https://example.com/", Events: ok, Secret: ptr("")}, map[string]string{"secret": "invalid_length"}},
		{"long secret", webhook.Draft{URL: "https://example.com/", Events: ok, Secret: ptr(strings.Repeat("s", 257))}, map[string]string{"secret": "invalid_length"}},
		{"everything wrong", webhook.Draft{URL: "ftp://x", Events: []string{"nope"}, Secret: ptr("")},
			map[string]string{"url": "https_required", "events[0]": "invalid_value", "secret": "invalid_length"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := webhook.New("whk_1", "wsp_1", c.draft, now)
			if c.want == nil {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if w.ID() != "whk_1" || w.WorkspaceID() != "wsp_1" || !w.CreatedAt().Equal(now) || !w.UpdatedAt().Equal(now) {
					t.Fatalf("webhook = %+v", w)
				}
				if w.URL() != strings.TrimSpace(c.draft.URL) {
					t.Fatalf("url = %q", w.URL())
				}
				if w.SecretSet() != (c.draft.Secret != nil) {
					t.Fatalf("secret_set = %v", w.SecretSet())
				}
				return
			}
			got := codes(err)
			if len(got) != len(c.want) {
				t.Fatalf("violations = %v, want %v (err %v)", got, c.want, err)
			}
			for f, code := range c.want {
				if got[f] != code {
					t.Fatalf("violations = %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestNewDedupesEvents(t *testing.T) {
	w, err := webhook.New("whk_1", "wsp_1", webhook.Draft{URL: "https://example.com/", Events: []string{"form.published", "submission.created", "form.published"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	got := w.Events()
	if len(got) != 2 || got[0] != event.FormPublished || got[1] != event.SubmissionCreated {
		t.Fatalf("events = %v", got)
	}
}

func TestApply(t *testing.T) {
	later := now.Add(time.Hour)
	fresh := func(t *testing.T) *webhook.Webhook {
		w, err := webhook.New("whk_1", "wsp_1", webhook.Draft{URL: "https://example.com/a", Events: []string{"submission.created"},
			FormID: ptr("frm_1"), Secret: ptr("old")}, now)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	var nilStr *string
	cases := []struct {
		name  string
		patch webhook.Patch
		check func(t *testing.T, w *webhook.Webhook)
		codes map[string]string
	}{
		{"empty patch keeps everything", webhook.Patch{}, func(t *testing.T, w *webhook.Webhook) {
			if w.URL() != "https://example.com/a" || *w.FormID() != "frm_1" || w.Secret() != "old" {
				t.Fatalf("changed: %+v", w)
			}
		}, nil},
		{"url and events", webhook.Patch{URL: ptr("https://example.com/b"), Events: &[]string{"form.published"}}, func(t *testing.T, w *webhook.Webhook) {
			if w.URL() != "https://example.com/b" || len(w.Events()) != 1 || w.Events()[0] != event.FormPublished {
				t.Fatalf("got %q %v", w.URL(), w.Events())
			}
		}, nil},
		{"null form_id means every form", webhook.Patch{FormID: &nilStr}, func(t *testing.T, w *webhook.Webhook) {
			if w.FormID() != nil {
				t.Fatalf("form_id = %v", *w.FormID())
			}
		}, nil},
		{"other form_id", webhook.Patch{FormID: ptr(ptr("frm_2"))}, func(t *testing.T, w *webhook.Webhook) {
			if *w.FormID() != "frm_2" {
				t.Fatalf("form_id = %v", *w.FormID())
			}
		}, nil},
		{"null secret removes it", webhook.Patch{Secret: &nilStr}, func(t *testing.T, w *webhook.Webhook) {
			if w.SecretSet() || w.Secret() != "" {
				t.Fatal("secret still set")
			}
		}, nil},
		{"new secret", webhook.Patch{Secret: ptr(ptr("new"))}, func(t *testing.T, w *webhook.Webhook) {
			if w.Secret() != "new" {
				t.Fatalf("secret = %q", w.Secret())
			}
		}, nil},
		{"invalid changes nothing", webhook.Patch{URL: ptr("http://x"), Events: &[]string{}, FormID: &nilStr, Secret: ptr(ptr(""))}, nil,
			map[string]string{"url": "https_required", "events": "required", "secret": "invalid_length"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := fresh(t)
			err := w.Apply(c.patch, later)
			if c.codes != nil {
				got := codes(err)
				if len(got) != len(c.codes) {
					t.Fatalf("violations %v, want %v", got, c.codes)
				}
				for f, code := range c.codes {
					if got[f] != code {
						t.Fatalf("violations %v, want %v", got, c.codes)
					}
				}
				if w.URL() != "https://example.com/a" || w.FormID() == nil || w.Secret() != "old" || !w.UpdatedAt().Equal(now) {
					t.Fatal("a failed Apply changed the webhook")
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if !w.UpdatedAt().Equal(later) {
				t.Fatalf("updated_at = %v", w.UpdatedAt())
			}
			c.check(t, w)
		})
	}
}

func TestMatches(t *testing.T) {
	all, _ := webhook.New("whk_1", "wsp_1", webhook.Draft{URL: "https://example.com/", Events: []string{"submission.created", "form.published"}}, now)
	one, _ := webhook.New("whk_2", "wsp_1", webhook.Draft{URL: "https://example.com/", Events: []string{"submission.created"}, FormID: ptr("frm_1")}, now)
	ev := func(ws, form string, typ event.Type) event.Event {
		return event.Event{ID: "evt_1", Type: typ, WorkspaceID: ws, FormID: form}
	}
	cases := []struct {
		name string
		w    *webhook.Webhook
		e    event.Event
		want bool
	}{
		{"all forms, subscribed type", all, ev("wsp_1", "frm_9", event.SubmissionCreated), true},
		{"all forms, other subscribed type", all, ev("wsp_1", "frm_9", event.FormPublished), true},
		{"all forms, unsubscribed type", all, ev("wsp_1", "frm_9", event.SubmissionUpdated), false},
		{"other workspace", all, ev("wsp_2", "frm_9", event.SubmissionCreated), false},
		{"bound form", one, ev("wsp_1", "frm_1", event.SubmissionCreated), true},
		{"other form", one, ev("wsp_1", "frm_2", event.SubmissionCreated), false},
		{"bound form, unsubscribed type", one, ev("wsp_1", "frm_1", event.FormPublished), false},
	}
	for _, c := range cases {
		if got := c.w.Matches(c.e); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", c.name, got, c.want)
		}
	}
}

// A disabled webhook takes no event; switched back on, it takes the events that happen from
// then on, never those that happened while it was off.
func TestEnabledSwitch(t *testing.T) {
	w, err := webhook.New("whk_1", "wsp_1", webhook.Draft{URL: "https://example.com/", Events: []string{"submission.created"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) event.Event {
		return event.Event{ID: "evt_1", Type: event.SubmissionCreated, WorkspaceID: "wsp_1", FormID: "frm_1", OccurredAt: now.Add(d)}
	}
	if !w.Enabled() || !w.EnabledSince().IsZero() || !w.Matches(at(-time.Hour)) {
		t.Fatalf("a new webhook: enabled %v since %v", w.Enabled(), w.EnabledSince())
	}
	off, err := webhook.New("whk_2", "wsp_1", webhook.Draft{URL: "https://example.com/", Events: []string{"submission.created"}, Enabled: ptr(false)}, now)
	if err != nil || off.Enabled() || off.Matches(at(time.Minute)) || off.Subscribes(at(time.Minute)) {
		t.Fatalf("created disabled: %v %v", off, err)
	}

	if err := w.Apply(webhook.Patch{Enabled: ptr(false)}, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if w.Enabled() || w.Matches(at(2*time.Minute)) || !w.UpdatedAt().Equal(now.Add(time.Minute)) {
		t.Fatalf("disabled: enabled %v, updated %v", w.Enabled(), w.UpdatedAt())
	}
	if err := w.Apply(webhook.Patch{Enabled: ptr(true)}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !w.Enabled() || !w.EnabledSince().Equal(now.Add(time.Hour)) {
		t.Fatalf("enabled again: %v since %v", w.Enabled(), w.EnabledSince())
	}
	if w.Matches(at(30*time.Minute)) || !w.Subscribes(at(30*time.Minute)) {
		t.Fatal("an event of the time it was disabled is delivered after it was enabled again")
	}
	if !w.Matches(at(time.Hour)) || !w.Matches(at(2*time.Hour)) {
		t.Fatal("an event after it was enabled again is not delivered")
	}
	// Enabling an enabled webhook keeps the time it was switched on.
	if err := w.Apply(webhook.Patch{Enabled: ptr(true)}, now.Add(3*time.Hour)); err != nil || !w.EnabledSince().Equal(now.Add(time.Hour)) {
		t.Fatalf("enabled twice: since %v %v", w.EnabledSince(), err)
	}
	// A patch that fails changes nothing, the switch included.
	if err := w.Apply(webhook.Patch{Enabled: ptr(false), URL: ptr("http://example.com/")}, now.Add(4*time.Hour)); err == nil || !w.Enabled() {
		t.Fatalf("invalid patch: %v, enabled %v", err, w.Enabled())
	}
}
