package bootstrap

import (
	"fmt"
	"github.com/formward/formward/adapters/tracing"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/automation"
	"github.com/formward/formward/adapters/chat"
	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/sheets"
	"github.com/formward/formward/ports"
)

// provideActionRunners builds one runner per workflow action type, keyed by type. Adding an
// action type is one line in the list below (see docs/adapters.md).
func provideActionRunners(cfg Config, sender ports.Sender, m *metrics.Metrics) (map[string]ports.ActionRunner, error) {
	breaker := actionkit.BreakerOptions{Cooldown: cfg.BreakerCooldown, Created: watchActionBreakers(m)}
	if cfg.BreakerFailures > 0 {
		breaker.Failures = uint32(cfg.BreakerFailures)
	}
	mailer, err := email.New(email.Config{
		URL: cfg.SMTPURL, From: cfg.SMTPFrom, CAFile: cfg.WebhookCAFile, Timeout: cfg.DeliveryTimeout, Breaker: breaker,
	})
	if err != nil {
		return nil, fmt.Errorf("send_email: %w", err)
	}
	slack, err := chat.New(chat.Config{BaseURL: cfg.SlackAPIURL, CAFile: cfg.WebhookCAFile, Timeout: cfg.DeliveryTimeout, Breaker: breaker})
	if err != nil {
		return nil, fmt.Errorf("chat_message: %w", err)
	}
	sheet, err := sheets.New(sheets.Config{
		BaseURL: cfg.GoogleSheetsURL, TokenURL: cfg.GoogleTokenURL, CAFile: cfg.WebhookCAFile,
		Timeout: cfg.DeliveryTimeout, Breaker: breaker,
	})
	if err != nil {
		return nil, fmt.Errorf("spreadsheet_append: %w", err)
	}

	runners := map[string]ports.ActionRunner{}
	for _, r := range []ports.ActionRunner{
		mailer,
		automation.NewWebhook(sender),
		slack,
		sheet,
		automation.NewTrigger(sender),
	} {
		runners[r.Type()] = r
	}
	return tracing.Runners(runners), nil
}
