package automation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actiontest"
	"github.com/formward/formward/adapters/automation"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/ports"
)

// fakeSender records requests and answers with res.
type fakeSender struct {
	mu   sync.Mutex
	reqs []ports.OutboundRequest
	res  ports.OutboundResult
}

func (f *fakeSender) Send(ctx context.Context, r ports.OutboundRequest) ports.OutboundResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, r)
	if ctx.Err() != nil {
		return ports.OutboundResult{Err: ctx.Err()}
	}
	if f.res.Err == nil && f.res.StatusCode == 0 {
		return ports.OutboundResult{StatusCode: 200}
	}
	return f.res
}

func TestContracts(t *testing.T) {
	actiontest.Run(t, automation.NewWebhook(&fakeSender{}), actiontest.Contract{
		Valid: map[string]any{"url": "https://hooks.example.com/in", "headers": map[string]any{"X-Api-Key": "k"}, "secret": "s3cret"},
	})
	actiontest.Run(t, automation.NewTrigger(&fakeSender{}), actiontest.Contract{
		Valid: map[string]any{"url": "https://hooks.zapier.com/hooks/catch/1/abc/", "platform": "zapier", "secret": "s3cret"},
	})
}

func TestWebhookBodyAndRequest(t *testing.T) {
	s := &fakeSender{}
	w := automation.NewWebhook(s)
	in := actiontest.Input(map[string]any{
		"url": "https://hooks.example.com/in", "headers": map[string]any{"X-Api-Key": "k1"}, "secret": "s3cret",
	}, nil)
	in.Attempt = 3
	out := w.Run(context.Background(), in)
	if out.Err != nil || out.StatusCode != 200 {
		t.Fatalf("Run = %+v", out)
	}
	r := s.reqs[0]
	if r.EndpointID != "act_1" || r.URL != "https://hooks.example.com/in" || r.Secret != "s3cret" || r.Attempt != 3 ||
		r.Event != "submission.created" || r.DeliveryID != "run_1.act_1" || r.Headers["X-Api-Key"] != "k1" {
		t.Fatalf("request %+v", r)
	}
	want := `{"event":"submission.created","submission_id":"sub_1","form_id":"frm_1","form_name":"Lead",` +
		`"submitted_at":"2026-03-04T05:06:07.890Z","data":{"fld_budget":"1500","fld_email":"ada@example.com",` +
		`"fld_name":"Ada Lovelace","fld_tags":["urgent","b2b"]},"metadata":{"ip_hash":"9f86d081884c7d65",` +
		`"user_agent":"Mozilla/5.0","referrer":"https://example.com/contact"}}`
	if string(r.Body) != want {
		t.Fatalf("body\n%s\nwant\n%s", r.Body, want)
	}

	// Missing metadata is null, not absent.
	in.IPHash, in.UserAgent, in.Referrer = nil, nil, nil
	w.Run(context.Background(), in)
	var body map[string]any
	_ = json.Unmarshal(s.reqs[1].Body, &body)
	if md := body["metadata"].(map[string]any); len(md) != 3 || md["ip_hash"] != nil {
		t.Fatalf("metadata %v", md)
	}
}

func TestOutcomes(t *testing.T) {
	retry := time.Now().Add(time.Minute)
	for _, tc := range []struct {
		name string
		res  ports.OutboundResult
		want ports.ActionOutcome
	}{
		{"500 retryable", ports.OutboundResult{StatusCode: 500, Err: &delivery.StatusError{StatusCode: 500}},
			ports.ActionOutcome{StatusCode: 500}},
		{"breaker open", ports.OutboundResult{Err: delivery.ErrBreakerOpen, BreakerOpen: true, RetryAt: retry},
			ports.ActionOutcome{BreakerOpen: true, RetryAt: retry}},
		{"invalid request permanent", ports.OutboundResult{Err: fmt.Errorf("%w: bad", delivery.ErrInvalidRequest)},
			ports.ActionOutcome{Permanent: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := automation.NewTrigger(&fakeSender{res: tc.res}).Run(context.Background(),
				actiontest.Input(map[string]any{"url": "https://hooks.example.com/x"}, nil))
			if out.Err == nil || out.StatusCode != tc.want.StatusCode || out.Permanent != tc.want.Permanent ||
				out.BreakerOpen != tc.want.BreakerOpen || !out.RetryAt.Equal(tc.want.RetryAt) {
				t.Fatalf("outcome %+v, want %+v", out, tc.want)
			}
		})
	}
}

func TestTriggerFlatBody(t *testing.T) {
	s := &fakeSender{}
	in := actiontest.Input(map[string]any{"url": "https://hook.eu1.make.com/abc", "platform": "make"}, nil)
	in.Labels["fld_dup1"], in.Labels["fld_dup2"] = "Phone", "phone!"
	in.Labels["fld_form"] = "Form ID"
	in.Labels["fld_empty"] = "???"
	in.Fields["fld_dup1"], in.Fields["fld_dup2"], in.Fields["fld_form"], in.Fields["fld_empty"] = "1", "2", "x", "y"
	in.Labels["fld_unanswered"] = "Company"
	out := automation.NewTrigger(s).Run(context.Background(), in)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	var got map[string]any
	if err := json.Unmarshal(s.reqs[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"submission_id": "sub_1", "form_id": "frm_1", "form_name": "Lead", "submitted_at": "2026-03-04T05:06:07.890Z",
		"full_name": "Ada Lovelace", "email": "ada@example.com", "budget": "1500", "tags": []any{"urgent", "b2b"},
		"fld_dup1": "1", "fld_dup2": "2", "fld_form": "x", "fld_empty": "y", "company": nil,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("flat body\n%v\nwant\n%v", got, want)
	}
	if s.reqs[0].Secret != "" || s.reqs[0].Headers != nil {
		t.Fatalf("request %+v", s.reqs[0])
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"Full name": "full_name", "Budget (USD)": "budget_usd", "  E-mail  address ": "e_mail_address",
		"Ünïcode Straße": "ünïcode_straße", "already_snake": "already_snake", "": "",
	} {
		if got := automation.SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	w := automation.NewWebhook(&fakeSender{})
	codes := func(vs []ports.ConfigViolation) map[string]string {
		m := map[string]string{}
		for _, v := range vs {
			m[v.Key] = v.Code
		}
		return m
	}
	got := codes(w.Validate(map[string]any{
		"url":     "http://example.com",
		"headers": map[string]any{"X-Foo": "a\r\nInjected: 1", "Content-Type": "text/plain", "X-Num": 3, "X-Ok": "fine"},
	}))
	// X-Num's type error stops the per-header checks; test them separately.
	if got["url"] != "https_required" || got["headers.X-Num"] != "invalid_type" {
		t.Fatalf("violations %v", got)
	}
	got = codes(w.Validate(map[string]any{
		"url": "https://example.com", "headers": map[string]any{"X-Foo": "a\r\nInjected: 1", "Content-Type": "text/plain", "X-Ok": "fine"},
		"secret": "",
	}))
	want := map[string]string{"headers.X-Foo": "invalid_value", "headers.Content-Type": "invalid_value", "secret": "invalid_length"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	tr := automation.NewTrigger(&fakeSender{})
	got = codes(tr.Validate(map[string]any{"url": "https://u:p@example.com", "platform": "ifttt"}))
	if got["url"] != "invalid_url" || got["platform"] != "invalid_value" {
		t.Fatalf("violations %v", got)
	}
}

// TestThroughDeliveryClient sends both actions over real HTTPS through the SSRF-safe signed
// client, trusting a test CA.
func TestThroughDeliveryClient(t *testing.T) {
	ca := actiontest.NewCA(t)
	type hit struct {
		header http.Header
		body   []byte
	}
	hits := make(chan hit, 4)
	srv := ca.HTTPSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hits <- hit{r.Header.Clone(), b}
		w.WriteHeader(http.StatusAccepted)
	}))
	c, err := delivery.NewClient(delivery.Options{AllowPrivate: true, ExtraCAFile: ca.File, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sender := delivery.Sender{Client: c}

	in := actiontest.Input(map[string]any{"url": srv.URL + "/hook", "headers": map[string]any{"X-Api-Key": "k1"}, "secret": "s3cret"}, nil)
	out := automation.NewWebhook(sender).Run(context.Background(), in)
	if out.Err != nil || out.StatusCode != http.StatusAccepted {
		t.Fatalf("send_webhook = %+v", out)
	}
	h := <-hits
	if h.header.Get("X-Api-Key") != "k1" || h.header.Get("X-Service-Signature") != delivery.Sign("s3cret", h.body) ||
		h.header.Get("X-Service-Event") != "submission.created" || h.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", h.header)
	}

	in = actiontest.Input(map[string]any{"url": srv.URL + "/zap", "platform": "zapier"}, nil)
	out = automation.NewTrigger(sender).Run(context.Background(), in)
	if out.Err != nil {
		t.Fatalf("automation_trigger = %+v", out)
	}
	h = <-hits
	if h.header.Get("X-Service-Signature") != "" {
		t.Fatal("unsigned trigger carries a signature")
	}
	var flat map[string]any
	if err := json.Unmarshal(h.body, &flat); err != nil || flat["full_name"] != "Ada Lovelace" {
		t.Fatalf("body %s", h.body)
	}
}
