// Package teams adds the teams_message workflow action: a message card posted to a Microsoft
// Teams incoming webhook, the URL a customer copies from the channel's connector settings.
//
// The URL is the customer's, so the post goes through the SSRF-safe sender Formward gives
// every action (extend.ActionDeps.Sender); like Formward's Slack action, the attempts of each
// action go through a circuit breaker of their own.
package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/extend"
	"github.com/formward/formward/ports"
)

// Type is the action type.
const Type = "teams_message"

func init() { extend.RegisterAction(Type, New) }

// Runner runs teams_message.
type Runner struct {
	sender   ports.Sender
	breakers *actionkit.Breakers
	now      func() time.Time
}

// New builds the runner from what Formward gives an action.
func New(d extend.ActionDeps) (ports.ActionRunner, error) {
	if d.Sender == nil {
		return nil, errors.New("teams_message needs the outbound sender")
	}
	return &Runner{sender: d.Sender, breakers: actionkit.NewBreakers(actionkit.FromExtend(d.Breaker)), now: time.Now}, nil
}

// Type is "teams_message".
func (*Runner) Type() string { return Type }

// Integration is "": the webhook URL is the credential, kept in the action's (encrypted) config.
func (*Runner) Integration() string { return "" }

// Validate checks webhook_url (an https URL) and text (a template), both required.
func (*Runner) Validate(cfg map[string]any) []ports.ConfigViolation {
	c := actionkit.Check(cfg)
	c.HTTPSURL("webhook_url")
	c.String("text", true)
	return c.Violations()
}

// messageCard is the legacy actionable message card Teams incoming webhooks take.
type messageCard struct {
	Type    string `json:"@type"`
	Context string `json:"@context"`
	Summary string `json:"summary"`
	Text    string `json:"text"`
}

// Run posts the card.
func (r *Runner) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	if ctx.Err() != nil {
		return actionkit.Canceled(ctx)
	}
	if vs := r.Validate(in.Config); len(vs) > 0 {
		return ports.ActionOutcome{Err: fmt.Errorf("invalid action config: %s: %s", vs[0].Key, vs[0].Message), Permanent: true}
	}
	render := in.Render
	if render == nil {
		render = func(t string, _ bool) string { return t }
	}
	body, err := json.Marshal(messageCard{
		Type: "MessageCard", Context: "https://schema.org/extensions",
		Summary: "New response to " + in.FormName, Text: render(in.Config["text"].(string), false),
	})
	if err != nil {
		return ports.ActionOutcome{Err: err, Permanent: true}
	}
	req := ports.OutboundRequest{
		EndpointID: in.ActionID, URL: strings.TrimSpace(in.Config["webhook_url"].(string)), Body: body,
		Event: in.Event, DeliveryID: in.RunID + "." + in.ActionID, Attempt: in.Attempt, TraceParent: in.TraceParent,
	}
	return r.breakers.Do(ctx, in.ActionID, func() ports.ActionOutcome { return r.post(ctx, req) })
}

// post makes one attempt and reads Teams' answer: 200 (body "1") is success; 429 asks to wait
// Retry-After; 5xx is retried; 400 (a payload Teams refuses, with its reason as text) and the
// other 4xx (a webhook that was removed) are permanent.
func (r *Runner) post(ctx context.Context, req ports.OutboundRequest) ports.ActionOutcome {
	res := r.sender.Send(ctx, req)
	out := ports.ActionOutcome{StatusCode: res.StatusCode, Duration: res.Duration, BreakerOpen: res.BreakerOpen, RetryAt: res.RetryAt}
	switch {
	case res.BreakerOpen:
		out.Err = res.Err
	case res.StatusCode >= 200 && res.StatusCode < 300:
	case res.StatusCode == 0:
		out.Err = fmt.Errorf("teams: %w", res.Err)
		out.Permanent = errors.Is(res.Err, delivery.ErrInvalidRequest)
	case res.StatusCode == http.StatusTooManyRequests:
		out.Err = errors.New("teams rate limited the message (429)")
		if res.RetryAfter > 0 {
			out.RetryAt = r.now().Add(res.RetryAfter)
		}
	case res.StatusCode >= 500 || res.StatusCode == http.StatusRequestTimeout:
		out.Err = fmt.Errorf("teams answered %d", res.StatusCode)
	default:
		out.Err = fmt.Errorf("teams refused the message (%d)%s", res.StatusCode, reason(res.Answer))
		out.Permanent = true
	}
	return out
}

// reason is Teams' explanation for an error message: one line of printable text, short.
func reason(answer []byte) string {
	s := strings.Join(strings.FieldsFunc(string(answer), func(r rune) bool { return !unicode.IsPrint(r) }), " ")
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return ": " + s
}
