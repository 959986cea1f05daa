// Package automation runs the workflow actions that POST a submission to a customer's HTTPS
// endpoint: send_webhook (the SPEC body, with extra headers) and automation_trigger (the flat
// JSON that Zapier, Make and n8n catch hooks map field by field). Both go through ports.Sender,
// the SSRF-safe signed client with one circuit breaker per endpoint, keyed by the action ID.
package automation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/ports"
)

// Action types.
const (
	TypeWebhook = "send_webhook"
	TypeTrigger = "automation_trigger"
)

// Platforms an automation_trigger may name; the body is the same for all of them.
var Platforms = []string{"zapier", "make", "n8n", "generic"}

// timeLayout is the API's timestamp format: UTC, RFC 3339, milliseconds, Z.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// Webhook runs send_webhook.
type Webhook struct{ sender ports.Sender }

// NewWebhook builds the send_webhook runner.
func NewWebhook(sender ports.Sender) *Webhook { return &Webhook{sender: sender} }

// Type is "send_webhook".
func (*Webhook) Type() string { return TypeWebhook }

// Integration is "": the destination is a plain URL.
func (*Webhook) Integration() string { return "" }

// Validate checks url (https), headers (object of strings, no header Formward sets, no control
// characters) and the optional secret.
func (*Webhook) Validate(cfg map[string]any) []ports.ConfigViolation {
	c := actionkit.Check(cfg)
	c.HTTPSURL("url")
	if headers, ok := c.StringMap("headers", false); ok {
		for _, name := range actionkit.SortedKeys(headers) {
			if err := delivery.CheckHeaders(map[string]string{name: headers[name]}); err != nil {
				c.Add("headers."+name, "invalid_value", err.Error())
			}
		}
	}
	c.Secret("secret")
	return c.Violations()
}

// webhookBody is the body of the send_webhook workflow action (docs/adapters.md).
type webhookBody struct {
	Event        string          `json:"event"`
	SubmissionID string          `json:"submission_id"`
	FormID       string          `json:"form_id"`
	FormName     string          `json:"form_name"`
	SubmittedAt  string          `json:"submitted_at"`
	Data         map[string]any  `json:"data"`
	Metadata     webhookMetadata `json:"metadata"`
}

type webhookMetadata struct {
	IPHash    *string `json:"ip_hash"`
	UserAgent *string `json:"user_agent"`
	Referrer  *string `json:"referrer"`
}

// Run posts the submission to url.
func (w *Webhook) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	if ctx.Err() != nil {
		return actionkit.Canceled(ctx)
	}
	if vs := w.Validate(in.Config); len(vs) > 0 {
		return invalidConfig(vs)
	}
	data := in.Fields
	if data == nil {
		data = map[string]any{}
	}
	body, err := json.Marshal(webhookBody{
		Event: in.Event, SubmissionID: in.SubmissionID, FormID: in.FormID, FormName: in.FormName,
		SubmittedAt: in.SubmittedAt.UTC().Format(timeLayout), Data: data,
		Metadata: webhookMetadata{IPHash: in.IPHash, UserAgent: in.UserAgent, Referrer: in.Referrer},
	})
	if err != nil {
		return ports.ActionOutcome{Err: fmt.Errorf("encode body: %w", err), Permanent: true}
	}
	headers, _ := actionkit.Check(in.Config).StringMap("headers", false)
	secret, _ := in.Config["secret"].(string)
	return send(ctx, w.sender, in, in.Config["url"].(string), body, secret, headers)
}

// Trigger runs automation_trigger.
type Trigger struct{ sender ports.Sender }

// NewTrigger builds the automation_trigger runner.
func NewTrigger(sender ports.Sender) *Trigger { return &Trigger{sender: sender} }

// Type is "automation_trigger".
func (*Trigger) Type() string { return TypeTrigger }

// Integration is "": the catch hook URL is all it needs.
func (*Trigger) Integration() string { return "" }

// Validate checks url (https), platform (zapier, make, n8n, generic) and the optional secret.
func (*Trigger) Validate(cfg map[string]any) []ports.ConfigViolation {
	c := actionkit.Check(cfg)
	c.HTTPSURL("url")
	c.OneOf("platform", Platforms...)
	c.Secret("secret")
	return c.Violations()
}

// Run posts the flat JSON to the catch hook.
func (t *Trigger) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	if ctx.Err() != nil {
		return actionkit.Canceled(ctx)
	}
	if vs := t.Validate(in.Config); len(vs) > 0 {
		return invalidConfig(vs)
	}
	body, err := json.Marshal(FlatBody(in))
	if err != nil {
		return ports.ActionOutcome{Err: fmt.Errorf("encode body: %w", err), Permanent: true}
	}
	secret, _ := in.Config["secret"].(string)
	return send(ctx, t.sender, in, in.Config["url"].(string), body, secret, nil)
}

// reserved are the keys of the flat body that fields may not take.
var reserved = map[string]bool{"submission_id": true, "form_id": true, "form_name": true, "submitted_at": true}

// FlatBody is the automation_trigger body: submission_id, form_id, form_name, submitted_at,
// and one key per field, its label in snake_case. A field whose key would be empty, reserved,
// or shared with another field is keyed by its field ID instead (every field of the collision,
// so the keys do not depend on field order). A field of the form with no value is null.
func FlatBody(in ports.ActionInput) map[string]any {
	ids := map[string]bool{}
	for id := range in.Fields {
		ids[id] = true
	}
	for id := range in.Labels {
		ids[id] = true
	}
	keyOf := map[string]string{}
	count := map[string]int{}
	for id := range ids {
		k := SnakeCase(in.Labels[id])
		keyOf[id] = k
		count[k]++
	}
	for id, k := range keyOf {
		if k == "" || reserved[k] || count[k] > 1 {
			keyOf[id] = id
		}
	}
	// A label key equal to another field's ID-as-key would overwrite it: fall back again,
	// until no two fields share a key.
	for changed := true; changed; {
		changed = false
		taken := map[string]int{}
		for _, k := range keyOf {
			taken[k]++
		}
		for id, k := range keyOf {
			if taken[k] > 1 && k != id {
				keyOf[id] = id
				changed = true
			}
		}
	}
	out := map[string]any{
		"submission_id": in.SubmissionID,
		"form_id":       in.FormID,
		"form_name":     in.FormName,
		"submitted_at":  in.SubmittedAt.UTC().Format(timeLayout),
	}
	for id := range ids {
		out[keyOf[id]] = in.Fields[id]
	}
	return out
}

// SnakeCase turns a label into a JSON key: letters and digits lowercased, every other run of
// characters one underscore, none at either end ("Budget (USD)" → "budget_usd").
func SnakeCase(label string) string {
	var b strings.Builder
	pending := false
	for _, r := range label {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		pending = true
	}
	return b.String()
}

func invalidConfig(vs []ports.ConfigViolation) ports.ActionOutcome {
	return ports.ActionOutcome{Err: fmt.Errorf("invalid action config: %s: %s", vs[0].Key, vs[0].Message), Permanent: true}
}

// send makes one attempt through the sender and translates its result.
func send(ctx context.Context, s ports.Sender, in ports.ActionInput, url string, body []byte, secret string, headers map[string]string) ports.ActionOutcome {
	res := s.Send(ctx, ports.OutboundRequest{
		EndpointID: in.ActionID,
		URL:        strings.TrimSpace(url),
		Body:       body,
		Event:      in.Event,
		DeliveryID: deliveryID(in),
		Attempt:    in.Attempt,
		Secret:     secret,
		Headers:    headers,
	})
	out := ports.ActionOutcome{
		StatusCode: res.StatusCode, Duration: res.Duration, Err: res.Err,
		BreakerOpen: res.BreakerOpen, RetryAt: res.RetryAt,
	}
	// A request that could never be sent as configured will not become sendable by retrying.
	if res.Err != nil && errors.Is(res.Err, delivery.ErrInvalidRequest) {
		out.Permanent = true
	}
	return out
}

// deliveryID is stable across the attempts of one action of one run: receivers deduplicate
// retries with it (X-Service-Delivery, webhook-id).
func deliveryID(in ports.ActionInput) string {
	if in.RunID == "" {
		return in.ActionID
	}
	return in.RunID + "." + in.ActionID
}
