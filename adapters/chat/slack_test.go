package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/chat"
	"github.com/formward/formward/ports"
)

const token = "xoxb-test-token"

// fakeSlack answers chat.postMessage the way Slack documents it: HTTP 200 with ok true or
// ok false and an error code; 429 with Retry-After when rate limited.
type fakeSlack struct {
	mu       sync.Mutex
	posts    []map[string]string
	answer   func(w http.ResponseWriter) bool // returns true when it answered
	channels map[string]bool
}

func (f *fakeSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/chat.postMessage" {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	answer := f.answer
	f.mu.Unlock()
	if answer != nil && answer(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if r.Header.Get("Authorization") != "Bearer "+token {
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_arguments"}`))
		return
	}
	var body map[string]string
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["text"] == "" {
		_, _ = w.Write([]byte(`{"ok":false,"error":"no_text"}`))
		return
	}
	if !f.channels[body["channel"]] {
		_, _ = w.Write([]byte(`{"ok":false,"error":"channel_not_found"}`))
		return
	}
	f.mu.Lock()
	f.posts = append(f.posts, body)
	f.mu.Unlock()
	_, _ = w.Write([]byte(`{"ok":true,"channel":"C0123","ts":"1712345678.000100","message":{"text":"x"}}`))
}

func (f *fakeSlack) setAnswer(a func(w http.ResponseWriter) bool) {
	f.mu.Lock()
	f.answer = a
	f.mu.Unlock()
}

func setup(t *testing.T, breaker actionkit.BreakerOptions) (*chat.Slack, *fakeSlack) {
	t.Helper()
	ca := actiontest.NewCA(t)
	f := &fakeSlack{channels: map[string]bool{"C0123": true, "#leads": true}}
	srv := ca.HTTPSServer(t, f)
	s, err := chat.New(chat.Config{BaseURL: srv.URL, CAFile: ca.File, Timeout: 3 * time.Second, Breaker: breaker})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

func creds() map[string]string { return map[string]string{"bot_token": token} }

func TestContract(t *testing.T) {
	s, _ := setup(t, actionkit.BreakerOptions{})
	actiontest.Run(t, s, actiontest.Contract{
		Valid:       map[string]any{"channel": "#leads", "message": "New lead {{fld_name}}"},
		Credentials: creds(),
	})
}

func TestPostsTemplatedMessage(t *testing.T) {
	s, f := setup(t, actionkit.BreakerOptions{})
	if s.Integration() != "slack" {
		t.Fatalf("Integration = %q", s.Integration())
	}
	in := actiontest.Input(map[string]any{"channel": "#leads", "message": "New lead: {{fld_name}} <{{fld_email}}> tags {{fld_tags}}"}, creds())
	out := s.Run(context.Background(), in)
	if out.Err != nil || out.StatusCode != 200 {
		t.Fatalf("Run = %+v", out)
	}
	if len(f.posts) != 1 || f.posts[0]["channel"] != "#leads" ||
		f.posts[0]["text"] != "New lead: Ada Lovelace <ada@example.com> tags urgent, b2b" {
		t.Fatalf("posts = %v", f.posts)
	}
}

func TestSlackErrors(t *testing.T) {
	tests := []struct {
		name      string
		channel   string
		creds     map[string]string
		answer    func(w http.ResponseWriter) bool
		permanent bool
		status    int
		retryIn   time.Duration
	}{
		{name: "channel_not_found", channel: "#nope", creds: creds(), permanent: true, status: 200},
		{name: "invalid_auth", channel: "#leads", creds: map[string]string{"bot_token": "xoxb-wrong"}, permanent: true, status: 200},
		{name: "not connected", channel: "#leads", creds: nil, permanent: true},
		{name: "token_revoked", channel: "#leads", creds: creds(), permanent: true, status: 200, answer: okFalse("token_revoked")},
		{name: "internal_error is retryable", channel: "#leads", creds: creds(), status: 200, answer: okFalse("internal_error")},
		{name: "5xx is retryable", channel: "#leads", creds: creds(), status: 503, answer: func(w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}},
		{name: "429 honours Retry-After", channel: "#leads", creds: creds(), status: 429, retryIn: 30 * time.Second, answer: func(w http.ResponseWriter) bool {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, f := setup(t, actionkit.BreakerOptions{})
			f.setAnswer(tc.answer)
			before := time.Now()
			out := s.Run(context.Background(), actiontest.Input(map[string]any{"channel": tc.channel, "message": "hi"}, tc.creds))
			if out.Err == nil || out.Permanent != tc.permanent || out.StatusCode != tc.status {
				t.Fatalf("Run = %+v (err %v), want permanent=%v status %d", out, out.Err, tc.permanent, tc.status)
			}
			if tc.retryIn > 0 && (out.RetryAt.Before(before.Add(tc.retryIn)) || out.RetryAt.After(time.Now().Add(tc.retryIn))) {
				t.Fatalf("RetryAt = %v, want now + %v", out.RetryAt, tc.retryIn)
			}
			if tc.creds == nil && !errors.Is(out.Err, chat.ErrNotConnected) {
				t.Fatalf("err = %v", out.Err)
			}
		})
	}
}

func okFalse(code string) func(w http.ResponseWriter) bool {
	return func(w http.ResponseWriter) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":false,"error":"` + code + `"}`))
		return true
	}
}

func TestBreakerOpensPerAction(t *testing.T) {
	s, f := setup(t, actionkit.BreakerOptions{Failures: 2, Cooldown: time.Minute})
	f.setAnswer(func(w http.ResponseWriter) bool { w.WriteHeader(http.StatusBadGateway); return true })
	in := actiontest.Input(map[string]any{"channel": "#leads", "message": "hi"}, creds())
	for i := 0; i < 2; i++ {
		if out := s.Run(context.Background(), in); out.BreakerOpen || out.Err == nil {
			t.Fatalf("attempt %d = %+v", i+1, out)
		}
	}
	if out := s.Run(context.Background(), in); !out.BreakerOpen || out.RetryAt.IsZero() {
		t.Fatalf("third attempt = %+v, want breaker open", out)
	}
	// Another action on the same Slack is not affected.
	f.setAnswer(nil)
	other := in
	other.ActionID = "act_2"
	if out := s.Run(context.Background(), other); out.Err != nil {
		t.Fatalf("other action = %+v", out)
	}
	var _ ports.ActionRunner = s
}
