package domain_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/formward/formward/domain"
)

func TestViolations(t *testing.T) {
	var vs domain.Violations
	if err := vs.Err(); err != nil {
		t.Fatalf("empty Violations.Err() = %v, want nil", err)
	}
	vs.Add("name", "invalid_length", "name must be 1 to 200 characters")
	vs.Add("fields[2].options", "required", "options are required")
	err := vs.Err()
	var ve *domain.ValidationError
	if !errors.As(fmt.Errorf("wrapped: %w", err), &ve) {
		t.Fatalf("Err() = %T, want *ValidationError", err)
	}
	if len(ve.Violations) != 2 || ve.Violations[1].Field != "fields[2].options" || ve.Violations[1].Code != "required" {
		t.Fatalf("violations = %+v", ve.Violations)
	}
	msg := err.Error()
	if !strings.Contains(msg, "name: name must be") || !strings.Contains(msg, "fields[2].options: options are required") {
		t.Fatalf("Error() = %q", msg)
	}
}

func TestValidation(t *testing.T) {
	err := domain.Validation("scope", "invalid_value", "bad scope")
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || len(ve.Violations) != 1 || ve.Violations[0] != (domain.Violation{Field: "scope", Code: "invalid_value", Message: "bad scope"}) {
		t.Fatalf("Validation = %#v", err)
	}
}

func TestSentinelsDistinct(t *testing.T) {
	all := []error{domain.ErrNotFound, domain.ErrConflict, domain.ErrFormClosed}
	for i, a := range all {
		for j, b := range all {
			if (i == j) != errors.Is(a, b) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, errors.Is(a, b))
			}
		}
	}
}

// A *ConflictError is a conflict (errors.Is holds, wrapped or not) that says what clashed.
func TestConflictError(t *testing.T) {
	err := fmt.Errorf("enable: %w", domain.Conflict("two-step verification is already on"))
	var ce *domain.ConflictError
	if !errors.Is(err, domain.ErrConflict) || !errors.As(err, &ce) || ce.Message != "two-step verification is already on" {
		t.Fatalf("%v: Is conflict %v, As %v", err, errors.Is(err, domain.ErrConflict), ce)
	}
	if errors.Is(err, domain.ErrNotFound) || errors.Is(domain.ErrConflict, err) {
		t.Fatal("a conflict is something else too")
	}
	if got := err.Error(); got != "enable: conflict: two-step verification is already on" {
		t.Fatalf("Error() = %q", got)
	}
}
