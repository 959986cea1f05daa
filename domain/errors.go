// Package domain holds the errors shared by every aggregate; each aggregate lives in its own sub-package.
package domain

import (
	"errors"
	"strings"
)

// ErrNotFound means the resource does not exist in the caller's workspace.
var ErrNotFound = errors.New("not found")

// ErrConflict means the request clashes with the current state. Conflicts a person can cause
// are *ConflictError, which say what clashed; errors.Is(err, ErrConflict) holds for them too.
var ErrConflict = errors.New("conflict")

// ConflictError is a request that clashes with the current state (two-step verification
// already on, an email address already taken, a reused idempotency key). Message says what
// clashed, in words fit to show the person who asked; errors.Is(err, ErrConflict) holds.
type ConflictError struct {
	Message string
}

func (e *ConflictError) Error() string { return "conflict: " + e.Message }

// Is makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Conflict returns a *ConflictError saying msg.
func Conflict(msg string) error { return &ConflictError{Message: msg} }

// ErrFormClosed means the form does not accept submissions in its current status.
var ErrFormClosed = errors.New("form closed")

// ErrUnavailable means storage (disk, database, object store) cannot take writes right now:
// the caller should retry shortly. Over HTTP it is 503 `unavailable` with Retry-After.
var ErrUnavailable = errors.New("storage unavailable")

// Violation is one broken rule: a JSON path (or a field ID for submitted values), a code and a message.
type Violation struct {
	Field   string
	Code    string
	Message string
}

// ValidationError carries every rule a request broke, not only the first.
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		parts = append(parts, v.Field+": "+v.Message)
	}
	return "validation failed: " + strings.Join(parts, "; ")
}

// Violations collects violations and turns them into a *ValidationError when there are any.
type Violations []Violation

// Add records one violation.
func (vs *Violations) Add(field, code, message string) {
	*vs = append(*vs, Violation{Field: field, Code: code, Message: message})
}

// Err returns nil when nothing was recorded, else a *ValidationError.
func (vs Violations) Err() error {
	if len(vs) == 0 {
		return nil
	}
	return &ValidationError{Violations: vs}
}

// Validation builds a ValidationError of one violation.
func Validation(field, code, message string) error {
	return &ValidationError{Violations: []Violation{{Field: field, Code: code, Message: message}}}
}

// ViolationsOf returns the violations of a *ValidationError, nil for nil, or the error itself
// when it is of another kind; a use case uses it to report them together with its own.
func ViolationsOf(err error) (Violations, error) {
	if err == nil {
		return nil, nil
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Violations, nil
	}
	return nil, err
}
