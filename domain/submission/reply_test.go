package submission_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/submission"
)

func TestCheckReply(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name             string
		replyTo, subject *string
		field, code      string
	}{
		{"none", nil, nil, "", ""},
		{"good", s("ada@example.com"), s("New signup"), "", ""},
		{"two addresses", s("ada@example.com, bob@example.com"), nil, "_replyto", "invalid_value"},
		{"display name", s("Ada <ada@example.com>"), nil, "_replyto", "invalid_value"},
		{"subject too long", nil, s(strings.Repeat("a", 201)), "_subject", "too_long"},
		{"subject of 200", nil, s(strings.Repeat("é", 200)), "", ""},
		{"subject control char", nil, s("hi\x07"), "_subject", "invalid_value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := submission.CheckReply(tt.replyTo, tt.subject)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || ve.Violations[0].Field != tt.field || ve.Violations[0].Code != tt.code {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
