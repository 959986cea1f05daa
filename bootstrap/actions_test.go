package bootstrap

import (
	"context"
	"testing"

	"github.com/spf13/pflag"

	"github.com/formward/formward/ports"
)

type nopSender struct{}

func (nopSender) Send(context.Context, ports.OutboundRequest) ports.OutboundResult {
	return ports.OutboundResult{StatusCode: 200}
}

func TestActionRunnersFromConfig(t *testing.T) {
	t.Setenv("FORMWARD_SMTP_URL", "smtps://u:p@mail.example.com")
	t.Setenv("FORMWARD_SMTP_FROM", "forms@example.com")
	t.Setenv("FORMWARD_SLACK_API_URL", "https://slack.proxy.example")
	var c Config
	var errs []error
	b := &binder{fs: pflag.NewFlagSet("t", pflag.ContinueOnError), errs: &errs}
	bindCommon(b, &c)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if c.SMTPURL != "smtps://u:p@mail.example.com" || c.SMTPFrom != "forms@example.com" || c.SlackAPIURL != "https://slack.proxy.example" ||
		c.GoogleSheetsURL != "https://sheets.googleapis.com" || c.GoogleTokenURL != "https://oauth2.googleapis.com/token" {
		t.Fatalf("config %+v", c)
	}
	runners, err := provideActionRunners(c, nopSender{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"send_email", "send_webhook", "chat_message", "spreadsheet_append", "automation_trigger"} {
		if r, ok := runners[typ]; !ok || r.Type() != typ {
			t.Errorf("no runner for %s", typ)
		}
	}
	if len(runners) != 6 { // the five above and the tests' own test_noop (extend_test.go)
		t.Errorf("%d runners", len(runners))
	}

	c.SMTPURL = "ftp://nope"
	if _, err := provideActionRunners(c, nopSender{}, nil, nil); err == nil {
		t.Fatal("a bad SMTP URL was accepted")
	}
}
