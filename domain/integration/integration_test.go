package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/domain"
)

func TestNew(t *testing.T) {
	now := time.Now()
	sa := `{"client_email":"svc@p.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n"}`
	if i, err := New("int_1", "wsp_1", Draft{Type: "slack", Credentials: map[string]string{"bot_token": "xoxb-1"}}, now); err != nil || i.Credentials()["bot_token"] != "xoxb-1" || i.Type() != "slack" {
		t.Fatalf("slack: %v", err)
	}
	if _, err := New("int_1", "wsp_1", Draft{Type: "google_sheets", Credentials: map[string]string{"service_account_json": sa}}, now); err != nil {
		t.Fatalf("sheets: %v", err)
	}
	cases := []struct {
		name  string
		d     Draft
		field string
		code  string
	}{
		{"type missing", Draft{}, "type", "required"},
		{"type unknown", Draft{Type: "teams"}, "type", "invalid_value"},
		{"token missing", Draft{Type: "slack"}, "credentials.bot_token", "required"},
		{"extra credential", Draft{Type: "slack", Credentials: map[string]string{"bot_token": "x", "user": "y"}}, "credentials.user", "unknown_property"},
		{"sa not json", Draft{Type: "google_sheets", Credentials: map[string]string{"service_account_json": "nope"}}, "credentials.service_account_json", "invalid_value"},
		{"sa no key", Draft{Type: "google_sheets", Credentials: map[string]string{"service_account_json": `{"client_email":"a@b"}`}}, "credentials.service_account_json", "invalid_value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New("int_1", "wsp_1", c.d, now)
			var ve *domain.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want validation error, got %v", err)
			}
			for _, v := range ve.Violations {
				if v.Field == c.field && v.Code == c.code {
					return
				}
			}
			t.Fatalf("want %s %s in %v", c.field, c.code, ve.Violations)
		})
	}
}
