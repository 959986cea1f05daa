// Package chat runs the chat_message workflow action: Slack Web API chat.postMessage with the
// workspace's connected bot token.
package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/ports"
)

// Type is the action type; Integration the integration it needs.
const (
	Type        = "chat_message"
	Integration = "slack"
)

// DefaultBaseURL is Slack's API host.
const DefaultBaseURL = "https://slack.com"

// ErrNotConnected fails an action whose workspace has no Slack integration (any more).
var ErrNotConnected = errors.New("slack integration is not connected")

// permanentErrors are Slack error codes that no retry will fix.
var permanentErrors = map[string]bool{
	"channel_not_found": true, "not_in_channel": true, "invalid_auth": true, "account_inactive": true,
	"token_revoked": true, "is_archived": true, "msg_too_long": true, "no_text": true,
	"not_authed": true, "missing_scope": true, "restricted_action": true, "invalid_arguments": true,
}

// Config locates the Slack API.
type Config struct {
	// BaseURL is https://slack.com, or a proxy or test server (FORMWARD_SLACK_API_URL).
	BaseURL string
	// CAFile is a PEM file of extra CA certificates (FORMWARD_WEBHOOK_CA_FILE).
	CAFile  string
	Timeout time.Duration
	Breaker actionkit.BreakerOptions
}

// Slack runs chat_message.
type Slack struct {
	base     string
	http     *http.Client
	breakers *actionkit.Breakers
	now      func() time.Time
}

// New builds the runner.
func New(cfg Config) (*Slack, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	c, err := actionkit.NewHTTPClient(cfg.CAFile, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return &Slack{base: strings.TrimRight(cfg.BaseURL, "/"), http: c, breakers: actionkit.NewBreakers(cfg.Breaker), now: time.Now}, nil
}

// Type is "chat_message".
func (*Slack) Type() string { return Type }

// Integration is "slack".
func (*Slack) Integration() string { return Integration }

// Validate checks channel (an ID such as C0123 or a name such as #leads) and message.
func (*Slack) Validate(cfg map[string]any) []ports.ConfigViolation {
	c := actionkit.Check(cfg)
	if ch, ok := c.String("channel", true); ok && strings.ContainsAny(ch, " \t\r\n,") {
		c.Add("channel", "invalid_value", "channel must be a channel ID or name, without spaces")
	}
	c.String("message", true)
	return c.Violations()
}

// slackAnswer is the part of every Web API answer that says whether it worked.
type slackAnswer struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// Run posts the message.
func (s *Slack) Run(ctx context.Context, in ports.ActionInput) ports.ActionOutcome {
	token, out, ok := actionkit.Prepare(ctx, in, s.Validate, "bot_token", ErrNotConnected)
	if !ok {
		return out
	}
	render := in.Render
	if render == nil {
		render = func(t string, _ bool) string { return t }
	}
	channel := strings.TrimSpace(in.Config["channel"].(string))
	body, err := json.Marshal(map[string]string{"channel": channel, "text": render(in.Config["message"].(string), false)})
	if err != nil {
		return ports.ActionOutcome{Err: err, Permanent: true}
	}
	return s.breakers.Do(ctx, in.ActionID, func() ports.ActionOutcome { return s.post(ctx, token, body) })
}

func (s *Slack) post(ctx context.Context, token string, body []byte) ports.ActionOutcome {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/chat.postMessage", bytes.NewReader(body))
	if err != nil {
		return ports.ActionOutcome{Err: fmt.Errorf("slack request: %w", err), Permanent: true}
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.http.Do(req)
	if err != nil {
		return ports.ActionOutcome{Duration: time.Since(start), Err: fmt.Errorf("slack: %w", actionkit.ClientError(ctx, err))}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	out := ports.ActionOutcome{StatusCode: resp.StatusCode, Duration: time.Since(start)}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		out.Err = errors.New("slack rate limited the message (429)")
		out.RetryAt = s.now().Add(retryAfter(resp.Header.Get("Retry-After")))
		return out
	case resp.StatusCode >= 500:
		out.Err = fmt.Errorf("slack answered %d", resp.StatusCode)
		return out
	case resp.StatusCode != http.StatusOK:
		out.Err = fmt.Errorf("slack answered %d", resp.StatusCode)
		out.Permanent = resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout
		return out
	}
	var a slackAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		out.Err = errors.New("slack answered 200 without a JSON body")
		return out
	}
	if !a.OK {
		code := a.Error
		if code == "" {
			code = "unknown_error"
		}
		out.Err = fmt.Errorf("slack refused the message: %s", code)
		out.Permanent = permanentErrors[code]
		if code == "ratelimited" {
			out.RetryAt = s.now().Add(retryAfter(resp.Header.Get("Retry-After")))
		}
	}
	return out
}

// retryAfter reads Slack's Retry-After (seconds); one second when it is missing or odd.
func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return time.Second
}
