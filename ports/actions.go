package ports

import (
	"context"
	"time"
)

// ActionInput is everything one attempt of a workflow action needs. The executor fills it;
// an ActionRunner adapter only talks to its destination.
type ActionInput struct {
	WorkspaceID  string
	WorkflowID   string
	RunID        string
	ActionID     string
	Attempt      int
	Event        string // submission.created or submission.updated
	Config       map[string]any
	FormID       string
	FormName     string
	SubmissionID string
	SubmittedAt  time.Time
	// Fields maps field ID to its value (a string, or []string for multi-value fields).
	Fields map[string]any
	// Labels maps field ID to its label, for adapters that key values by label.
	Labels map[string]string
	// Metadata of the submission: ip_hash, user_agent, referrer (each may be nil).
	IPHash, UserAgent, Referrer *string
	// Render substitutes {{field_id}}, {{submission_id}}, {{form_id}}, {{form_name}} and
	// {{submitted_at}} in a template; html escapes the substituted values for an HTML body.
	Render func(template string, html bool) string
	// Credentials of the workspace's integration the action needs (nil when none is needed or
	// the integration is gone: the adapter then fails permanently).
	Credentials map[string]string
	// Notification is "owner" or "respondent" when the run is one of the form's notifications
	// rather than a workflow's; "" for a workflow action.
	Notification string
	// Answers are the submission's answers in form order, files as signed links (filled for
	// notification runs: the owner email lists them).
	Answers []Answer
	// ReplyTo is the respondent's address for the owner notification, or "".
	ReplyTo string
	// Subject, when not empty, replaces the owner notification's default subject.
	Subject string
	// TraceParent is the W3C trace context stored with the run ("" when not traced), so the
	// attempt's span joins the trace of the submission that started the run.
	TraceParent string
}

// Answer is one field's answer, by label.
type Answer struct {
	FieldID string
	Label   string
	// Values are the answer's values (one for single-value fields, none when unanswered).
	Values []string
	// File is true when the values are links to files.
	File bool
}

// ActionOutcome is what one attempt did.
type ActionOutcome struct {
	StatusCode int // the destination's HTTP status (0 for SMTP or when no answer came)
	Duration   time.Duration
	Err        error // nil on success
	// Permanent failures are not retried (e.g. a `to` that is not one valid address).
	Permanent bool
	// BreakerOpen means no attempt was made; try again at RetryAt without using an attempt.
	BreakerOpen bool
	// RetryAt, when set on a failure, asks for the next attempt no earlier than this (e.g. Slack's Retry-After).
	RetryAt time.Time
}

// ActionRunner executes one action type. Adding an action type means one adapter implementing
// this, registered with adapters/extend (RegisterAction), and one contract test (actiontest.Run).
type ActionRunner interface {
	// Type is the action type identifier, e.g. "send_email".
	Type() string
	// Validate checks an action config when a workflow is created or updated; the returned
	// violations use paths relative to the config (e.g. "to").
	Validate(config map[string]any) []ConfigViolation
	// Integration names the integration type the action needs ("slack", "google_sheets"), or "".
	Integration() string
	Run(ctx context.Context, in ActionInput) ActionOutcome
}

// ConfigViolation is one broken rule of an action config.
type ConfigViolation struct {
	Key     string
	Code    string
	Message string
}
