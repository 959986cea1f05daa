package teams

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/extend"
	"github.com/formward/formward/ports"
)

var valid = map[string]any{"webhook_url": "https://contoso.webhook.office.com/webhookb2/abc@def/IncomingWebhook/123/456", "text": "New lead {{fld_name}} ({{fld_tags}})"}

// TestContract runs the contract every Formward action type passes.
func TestContract(t *testing.T) {
	r, err := New(extend.ActionDeps{Sender: actiontest.NewCA(t).Sender(t)})
	if err != nil {
		t.Fatal(err)
	}
	actiontest.Run(t, r, actiontest.Contract{Valid: valid})
}

func TestRegistered(t *testing.T) {
	if _, ok := extend.Actions()[Type]; !ok {
		t.Fatal("teams_message is not registered")
	}
}

func TestValidate(t *testing.T) {
	r := &Runner{}
	for url, code := range map[string]string{
		"http://contoso.webhook.office.com/x": "https_required",
		"https://user:pw@contoso.example/x":   "invalid_url",
		"not a url":                           "invalid_url",
	} {
		vs := r.Validate(map[string]any{"webhook_url": url, "text": "hi"})
		if len(vs) != 1 || vs[0].Key != "webhook_url" || vs[0].Code != code {
			t.Errorf("%s: %+v, want %s", url, vs, code)
		}
	}
}

// receiver is a Teams incoming webhook on 127.0.0.1: it records each post and answers what
// the test sets (Teams answers 200 with the body "1").
type receiver struct {
	status     atomic.Int64
	answer     atomic.Value // string
	retryAfter atomic.Value // string
	hits       atomic.Int64
	posts      chan post
}

type post struct {
	contentType, delivery string
	body                  map[string]any
}

func newReceiver(t *testing.T) (*receiver, string, ports.Sender) {
	t.Helper()
	rc := &receiver{posts: make(chan post, 16)}
	rc.set(http.StatusOK, "1", "")
	ca := actiontest.NewCA(t)
	srv := ca.HTTPSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.hits.Add(1)
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "Invalid JSON payload", http.StatusBadRequest)
			return
		}
		rc.posts <- post{contentType: r.Header.Get("Content-Type"), delivery: r.Header.Get("X-Service-Delivery"), body: body}
		if v := rc.retryAfter.Load().(string); v != "" {
			w.Header().Set("Retry-After", v)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(int(rc.status.Load()))
		_, _ = io.WriteString(w, rc.answer.Load().(string))
	}))
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("receiver at %s, want loopback", srv.URL)
	}
	return rc, srv.URL + "/webhookb2/abc/IncomingWebhook/123/456", ca.Sender(t)
}

func (rc *receiver) set(status int, answer, retryAfter string) {
	rc.status.Store(int64(status))
	rc.answer.Store(answer)
	rc.retryAfter.Store(retryAfter)
}

func runner(t *testing.T, sender ports.Sender, breaker extend.BreakerOptions) *Runner {
	t.Helper()
	r, err := New(extend.ActionDeps{Sender: sender, Breaker: breaker})
	if err != nil {
		t.Fatal(err)
	}
	return r.(*Runner)
}

func input(url string) ports.ActionInput {
	return actiontest.Input(map[string]any{"webhook_url": url, "text": valid["text"]}, nil)
}

func TestPostsMessageCard(t *testing.T) {
	rc, url, sender := newReceiver(t)
	out := runner(t, sender, extend.BreakerOptions{}).Run(context.Background(), input(url))
	if out.Err != nil || out.StatusCode != http.StatusOK || out.Permanent {
		t.Fatalf("outcome %+v", out)
	}
	p := <-rc.posts
	want := map[string]any{
		"@type": "MessageCard", "@context": "https://schema.org/extensions",
		"summary": "New response to Lead", "text": "New lead Ada Lovelace (urgent, b2b)",
	}
	if len(p.body) != len(want) {
		t.Errorf("posted %v, want %v", p.body, want)
	}
	for k, v := range want {
		if p.body[k] != v {
			t.Errorf("%s = %v, want %v", k, p.body[k], v)
		}
	}
	if p.contentType != "application/json" || p.delivery != "run_1.act_1" {
		t.Errorf("content type %q, delivery %q", p.contentType, p.delivery)
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	rc, url, sender := newReceiver(t)
	rc.set(http.StatusTooManyRequests, "Microsoft Teams endpoint returned HTTP error 429", "30")
	r := runner(t, sender, extend.BreakerOptions{})
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	r.now = func() time.Time { return now }
	out := r.Run(context.Background(), input(url))
	if out.Err == nil || out.Permanent || out.StatusCode != http.StatusTooManyRequests || !out.RetryAt.Equal(now.Add(30*time.Second)) {
		t.Fatalf("outcome %+v, want a retry at %v", out, now.Add(30*time.Second))
	}
	rc.set(http.StatusTooManyRequests, "", "")
	if out := r.Run(context.Background(), input(url)); out.Err == nil || out.Permanent || !out.RetryAt.IsZero() {
		t.Fatalf("429 without Retry-After: %+v, want the usual schedule", out)
	}
}

func TestBadPayloadIsPermanent(t *testing.T) {
	rc, url, sender := newReceiver(t)
	rc.set(http.StatusBadRequest, "Summary or Text is required.", "")
	out := runner(t, sender, extend.BreakerOptions{}).Run(context.Background(), input(url))
	if out.Err == nil || !out.Permanent || out.StatusCode != http.StatusBadRequest {
		t.Fatalf("outcome %+v, want a permanent failure", out)
	}
	if !strings.Contains(out.Err.Error(), "Summary or Text is required.") {
		t.Errorf("error %q does not say why", out.Err)
	}
}

func TestServerErrorRetriesUntilTheBreakerOpens(t *testing.T) {
	rc, url, sender := newReceiver(t)
	rc.set(http.StatusBadGateway, "", "")
	var sets atomic.Int64
	r := runner(t, sender, extend.BreakerOptions{Failures: 2, Cooldown: time.Hour, Created: func(b any) {
		if _, ok := b.(*actionkit.Breakers); ok {
			sets.Add(1)
		}
	}})
	if sets.Load() != 1 {
		t.Fatalf("the breaker hook saw %d sets, want 1", sets.Load())
	}
	for i := 0; i < 2; i++ {
		if out := r.Run(context.Background(), input(url)); out.Err == nil || out.Permanent || out.StatusCode != http.StatusBadGateway {
			t.Fatalf("attempt %d: %+v, want a retryable failure", i+1, out)
		}
	}
	out := r.Run(context.Background(), input(url))
	if !out.BreakerOpen || !errors.Is(out.Err, actionkit.ErrBreakerOpen) || out.RetryAt.IsZero() {
		t.Fatalf("after two failures: %+v, want the breaker open", out)
	}
	if n := rc.hits.Load(); n != 2 {
		t.Fatalf("the receiver saw %d posts, want 2 (none while the breaker is open)", n)
	}
}

// A webhook URL to a private address is refused by the sender in production: the action
// never reaches it.
func TestPrivateAddressRefused(t *testing.T) {
	_, url, _ := newReceiver(t)
	r := runner(t, productionSender(t), extend.BreakerOptions{})
	out := r.Run(context.Background(), input(url))
	if !errors.Is(out.Err, delivery.ErrForbiddenAddress) || out.StatusCode != 0 {
		t.Fatalf("outcome %+v, want the loopback address refused", out)
	}
}

// productionSender is the sender as Formward builds it by default: public addresses only.
func productionSender(t *testing.T) ports.Sender {
	t.Helper()
	c, err := delivery.NewClient(delivery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return delivery.Sender{Client: c}
}
