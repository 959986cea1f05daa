// Package audit records who did what in a workspace. Events are written in the transaction of
// the change they record and never updated.
package audit

import (
	"strings"
	"time"

	"github.com/formward/formward/domain"
)

// Action names what happened.
type Action string

// The recorded actions.
const (
	APIKeyCreated           Action = "api_key.created"
	APIKeyRevoked           Action = "api_key.revoked"
	MemberInvited           Action = "member.invited"
	InvitationWithdrawn     Action = "member.invitation_withdrawn"
	MemberJoined            Action = "member.joined"
	MemberRoleChanged       Action = "member.role_changed"
	MemberRemoved           Action = "member.removed"
	WorkspaceUpdated        Action = "workspace.updated"
	UserSignedIn            Action = "user.signed_in"
	UserSignInFailed        Action = "user.sign_in_failed"
	UserPasswordChanged     Action = "user.password_changed"
	UserTwoFactorOn         Action = "user.two_factor_enabled"
	UserTwoFactorOff        Action = "user.two_factor_disabled"
	FormCreated             Action = "form.created"
	FormUpdated             Action = "form.updated"
	FormPublished           Action = "form.published"
	FormArchived            Action = "form.archived"
	FormDeleted             Action = "form.deleted"
	WebhookCreated          Action = "webhook.created"
	WebhookUpdated          Action = "webhook.updated"
	WebhookDeleted          Action = "webhook.deleted"
	WorkflowCreated         Action = "workflow.created"
	WorkflowUpdated         Action = "workflow.updated"
	WorkflowDeleted         Action = "workflow.deleted"
	IntegrationConnected    Action = "integration.connected"
	IntegrationDisconnected Action = "integration.disconnected"
	SubmissionDeleted       Action = "submission.deleted"
	SubmissionsExported     Action = "submissions.exported"
	RetentionDeleted        Action = "retention.deleted"
	PrivacyExported         Action = "privacy.exported"
	PrivacyErased           Action = "privacy.erased"
)

// WebhookReplayStarted records a replay of a time range's events to a webhook.
const WebhookReplayStarted Action = "webhook.replay_started"

// FormVersionCreated records a new version of a form's fields (a change or a restore).
const FormVersionCreated Action = "form.version_created"

// Actions are every recorded action, in the order the audit log's filter lists them.
var Actions = []Action{
	FormCreated, FormUpdated, FormPublished, FormArchived, FormDeleted, FormVersionCreated,
	WebhookCreated, WebhookUpdated, WebhookDeleted, WebhookReplayStarted,
	WorkflowCreated, WorkflowUpdated, WorkflowDeleted,
	IntegrationConnected, IntegrationDisconnected,
	SubmissionDeleted, SubmissionsExported, RetentionDeleted, PrivacyExported, PrivacyErased,
	MemberInvited, InvitationWithdrawn, MemberJoined, MemberRoleChanged, MemberRemoved,
	APIKeyCreated, APIKeyRevoked, WorkspaceUpdated,
	UserSignedIn, UserSignInFailed, UserPasswordChanged, UserTwoFactorOn, UserTwoFactorOff,
}

// Retention is how long audit events are kept.
const Retention = 400 * 24 * time.Hour

// Actor types.
const (
	ActorUser   = "user"
	ActorAPIKey = "api_key"
	ActorSystem = "system"
)

// Actor is who acted: a user, an API key or the system (scheduled jobs, the CLI).
type Actor struct {
	Type string
	ID   string
	Name string
}

// System is the actor of scheduled jobs and server-side commands.
var System = Actor{Type: ActorSystem, ID: "system", Name: "Formward"}

// Target is what the action was about.
type Target struct {
	Type string
	ID   string
}

// Event is one audit log entry.
type Event struct {
	ID          string
	WorkspaceID string
	Action      Action
	Actor       Actor
	Target      *Target
	IPHash      string
	Details     map[string]any
	CreatedAt   time.Time
}

// New builds an event; details must hold no secret and no respondent data.
func New(id, workspaceID string, action Action, actor Actor, target *Target, ipHash string, details map[string]any, now time.Time) (Event, error) {
	if workspaceID == "" || id == "" {
		return Event{}, domain.Validation("workspace_id", "required", "an audit event belongs to one workspace")
	}
	if !strings.Contains(string(action), ".") {
		return Event{}, domain.Validation("action", "invalid_value", "action must look like resource.verb")
	}
	if actor.Type != ActorUser && actor.Type != ActorAPIKey && actor.Type != ActorSystem {
		return Event{}, domain.Validation("actor.type", "invalid_value", "actor type must be user, api_key or system")
	}
	if details == nil {
		details = map[string]any{}
	}
	return Event{ID: id, WorkspaceID: workspaceID, Action: action, Actor: actor, Target: target, IPHash: ipHash,
		Details: details, CreatedAt: now.UTC()}, nil
}
