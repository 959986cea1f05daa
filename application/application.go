// Package application holds the use cases: one handler per command or query, each with
// Handle(ctx, cmd), depending only on the domain and the ports.
package application

import (
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Application groups every use case.
type Application struct {
	Commands Commands
	Queries  Queries
	// AccountMail sends the mail that use cases queue in the account mail outbox (password
	// links) after their requests were answered; serve runs it. Nil when no mail can be sent
	// (Deps.Mailer or Deps.AccountMail is nil).
	AccountMail *AccountMailSender
}

// Commands change state.
type Commands struct {
	CreateWorkspace        CreateWorkspaceHandler
	EnsureDefaultWorkspace EnsureDefaultWorkspaceHandler
	CreateAPIKey           CreateAPIKeyHandler
	RevokeAPIKey           RevokeAPIKeyHandler
	CreateForm             CreateFormHandler
	UpdateForm             UpdateFormHandler
	DeleteForm             DeleteFormHandler
	CaptureSubmission      CaptureSubmissionHandler
	SubmitPublicForm       SubmitPublicFormHandler
	UpdateSubmission       UpdateSubmissionHandler
	DeleteSubmission       DeleteSubmissionHandler
	CreateWebhook          CreateWebhookHandler
	UpdateWebhook          UpdateWebhookHandler
	DeleteWebhook          DeleteWebhookHandler
	RetryDelivery          RetryDeliveryHandler
	RetryRun               RetryRunHandler
	SendTestEvent          SendTestEventHandler
	CreateWorkflow         CreateWorkflowHandler
	UpdateWorkflow         UpdateWorkflowHandler
	DeleteWorkflow         DeleteWorkflowHandler
	CreateIntegration      CreateIntegrationHandler
	DeleteIntegration      DeleteIntegrationHandler
	// RecordFormView and RecordFormStart count the public page's views and starts.
	RecordFormView  RecordFormViewHandler
	RecordFormStart RecordFormStartHandler

	// People and sessions.
	IssueSetupToken      IssueSetupTokenHandler
	SetupFirstOwner      SetupFirstOwnerHandler
	CreateUser           CreateUserHandler
	SignIn               SignInHandler
	SignOut              SignOutHandler
	SignOutEverywhere    SignOutEverywhereHandler
	SwitchWorkspace      SwitchWorkspaceHandler
	ChangePassword       ChangePasswordHandler
	UpdateProfile        UpdateProfileHandler
	RequestPasswordReset RequestPasswordResetHandler
	ResetPassword        ResetPasswordHandler
	BeginTwoFactor       BeginTwoFactorHandler
	ConfirmTwoFactor     ConfirmTwoFactorHandler
	DisableTwoFactor     DisableTwoFactorHandler
	StartOIDC            StartOIDCHandler
	FinishOIDC           FinishOIDCHandler

	// Account management (access.ManageAccount).
	UpdateWorkspace    UpdateWorkspaceHandler
	ChangeMemberRole   ChangeMemberRoleHandler
	RemoveMember       RemoveMemberHandler
	InviteMember       InviteMemberHandler
	WithdrawInvitation WithdrawInvitationHandler
	// AcceptInvitation is public: the accept link's token is the proof.
	AcceptInvitation AcceptInvitationHandler
	// RunRetention is one pass of the retention job.
	RunRetention RunRetentionHandler
	// PrivacyErase deletes a respondent's submissions; ReindexPrivacy backfills their index.
	PrivacyErase   PrivacyEraseHandler
	ReindexPrivacy ReindexPrivacyHandler
}

// Queries read state.
type Queries struct {
	Authenticate     AuthenticateHandler
	ListWorkspaces   ListWorkspacesHandler
	ListAPIKeys      ListAPIKeysHandler
	GetForm          GetFormHandler
	GetPublicForm    GetPublicFormHandler
	ListForms        ListFormsHandler
	GetSubmission    GetSubmissionHandler
	ListSubmissions  ListSubmissionsHandler
	GetWebhook       GetWebhookHandler
	ListWebhooks     ListWebhooksHandler
	ListDeliveries   ListDeliveriesHandler
	GetWorkflow      GetWorkflowHandler
	ListWorkflows    ListWorkflowsHandler
	GetIntegration   GetIntegrationHandler
	ListIntegrations ListIntegrationsHandler
	ListRuns         ListRunsHandler
	// ExportSubmissions streams a form's submissions, oldest first (CSV, XLSX, NDJSON).
	ExportSubmissions ExportSubmissionsHandler
	// GetFormStats reports a form's views, starts, submissions and completion.
	GetFormStats GetFormStatsHandler
	// LastSubmissionTimes is when each form of a page last received a submission.
	LastSubmissionTimes LastSubmissionTimesHandler

	// ListNotificationRuns reads a form's notification run log.
	ListNotificationRuns ListNotificationRunsHandler

	// AuthenticateSession resolves a dashboard session cookie.
	AuthenticateSession AuthenticateSessionHandler

	// Account management (access.ManageAccount).
	GetWorkspace    GetWorkspaceHandler
	ListMembers     ListMembersHandler
	ListInvitations ListInvitationsHandler
	ListAuditEvents ListAuditEventsHandler
	// GetInvitation is public: the accept link's token is the proof.
	GetInvitation GetInvitationHandler
	// PrivacyExport finds a respondent's submissions across the workspace's forms.
	PrivacyExport PrivacyExportHandler
}

// Settings are the limits and defaults the use cases apply.
type Settings struct {
	FormLimits  form.Limits
	DefaultPlan workspace.Plan
	// MaxWebhooks bounds the webhooks of one workspace (default DefaultMaxWebhooks).
	MaxWebhooks int
	// WorkflowLimits bound actions per workflow and conditions per trigger (default workflow.DefaultLimits).
	WorkflowLimits workflow.Limits
	// MaxWorkflowsPerForm bounds the workflows of one form (default DefaultMaxWorkflowsPerForm).
	MaxWorkflowsPerForm int
	// FileLimits bound the files of one public post (default 10 per field, 20 per post).
	FileLimits submission.FileLimits
	// PublicURL is the server's own public URL: API file links under it are refused, since
	// only the server's own uploads live there. It is also the base of every link the server
	// prints or sends (setup, password links, invitations).
	PublicURL string
	// AppName names the service in mail and authenticator apps (default "Formward").
	AppName string
	// MailRetry is the wait after each failed send of account mail (the zero value is
	// webhook.DefaultRetrySchedule).
	MailRetry webhook.RetrySchedule
}

// Deps are the ports of every use case, for the composition root: New hands each handler's
// constructor the ports that handler needs, and no handler keeps Deps.
type Deps struct {
	Workspaces   ports.WorkspaceRepository
	Keys         ports.APIKeyRepository
	Forms        ports.FormRepository
	Submissions  ports.SubmissionRepository
	IDs          ports.IDs
	Clock        ports.Clock
	IPHasher     ports.IPHasher
	Webhooks     ports.WebhookRepository
	Deliveries   ports.DeliveryRepository
	URLs         ports.URLChecker
	Workflows    ports.WorkflowRepository
	Integrations ports.IntegrationRepository
	// Runs are the workflow runs, read by the run log.
	Runs ports.RunRepository
	// Actions are the registered action runners, keyed by their Type().
	Actions map[string]ports.ActionRunner
	// Files holds uploaded files; deleting a form or a submission deletes its files there.
	// Nil when no object store is configured.
	Files ports.ObjectStore

	// People and sessions.
	Users       ports.UserRepository
	Memberships ports.MembershipRepository
	Sessions    ports.SessionRepository
	// Tokens are one-time tokens: setup, password links, pending two-factor, used TOTP steps.
	Tokens    ports.UserTokenRepository
	Audit     ports.AuditLog
	Throttle  ports.SignInThrottle
	Passwords ports.PasswordHasher
	TOTP      ports.TOTP
	// OIDC is nil when OpenID Connect sign-in is not configured.
	OIDC ports.OIDCProvider
	// Mailer sends account mail; nil when SMTP is not configured.
	Mailer ports.Mailer
	// AccountMail is the account mail outbox: password links are queued there in the request
	// and sent by Application.AccountMail after the answer.
	AccountMail ports.AccountMailOutbox
	// Cipher seals TOTP secrets (under the pseudo-workspace "accounts").
	Cipher ports.Cipher
	// Invitations are the pending invitations to join a workspace.
	Invitations ports.InvitationRepository
	// Usage counts what a workspace holds; nil shows no counts.
	Usage ports.UsageReader
	// Retention deletes what plans no longer keep (and, with Audit and Sessions, purges old
	// audit events and expired sessions); Privacy finds submissions by the blind index
	// (BlindIndex) of their email answers.
	Retention  ports.RetentionStore
	Privacy    ports.PrivacyIndex
	BlindIndex ports.BlindIndex
	// Idempotency holds the API's Idempotency-Keys, which the retention job purges once their
	// window is over; nil leaves them.
	Idempotency ports.IdempotencyStore
	// Scanner reads a form's submissions oldest first, in batches, for exports.
	Scanner ports.SubmissionScanner
	// Activity counts views, starts and submissions in memory; Stats stores them per day.
	// Activity may be nil (nothing is counted).
	Activity ports.FormActivity
	Stats    ports.FormStatsRepository
}

// New is the composition root of the use cases: it fills the settings' defaults and builds
// every handler through its constructor, with the ports and settings that handler needs.
func New(d Deps, s Settings) *Application {
	if s.FormLimits == (form.Limits{}) {
		s.FormLimits = form.DefaultLimits
	}
	if s.MaxWebhooks <= 0 {
		s.MaxWebhooks = DefaultMaxWebhooks
	}
	if s.WorkflowLimits.MaxActions <= 0 {
		s.WorkflowLimits.MaxActions = workflow.DefaultLimits.MaxActions
	}
	if s.WorkflowLimits.MaxConditions <= 0 {
		s.WorkflowLimits.MaxConditions = workflow.DefaultLimits.MaxConditions
	}
	if s.MaxWorkflowsPerForm <= 0 {
		s.MaxWorkflowsPerForm = DefaultMaxWorkflowsPerForm
	}
	if s.DefaultPlan == "" {
		s.DefaultPlan = workspace.PlanBusiness
	}
	if s.AppName == "" {
		s.AppName = DefaultAppName
	}
	var (
		mailOutbox ports.AccountMailOutbox
		mailSender *AccountMailSender
		mailWake   func()
	)
	if d.Mailer != nil && d.AccountMail != nil {
		mailOutbox = d.AccountMail
		mailSender = NewAccountMailSender(d.AccountMail, d.Users, d.Tokens, d.Mailer, d.Cipher, d.Clock, s.MailRetry, s.PublicURL, s.AppName)
		mailWake = mailSender.Notify
	}
	return &Application{
		AccountMail: mailSender,
		Commands: Commands{
			CreateWorkspace:        NewCreateWorkspaceHandler(d.Workspaces, d.IDs, d.Clock, s.DefaultPlan),
			EnsureDefaultWorkspace: NewEnsureDefaultWorkspaceHandler(d.Workspaces, d.IDs, d.Clock, s.DefaultPlan),
			CreateAPIKey:           NewCreateAPIKeyHandler(d.Workspaces, d.Keys, d.IDs, d.Clock),
			RevokeAPIKey:           NewRevokeAPIKeyHandler(d.Keys, d.IDs, d.Clock),
			CreateForm:             NewCreateFormHandler(d.Forms, d.IDs, d.Clock, s.FormLimits),
			UpdateForm:             NewUpdateFormHandler(d.Forms, d.IDs, d.Clock, s.FormLimits),
			DeleteForm:             NewDeleteFormHandler(d.Forms, d.Files, d.IDs, d.Clock),
			CaptureSubmission:      NewCaptureSubmissionHandler(d.Forms, d.Submissions, d.IDs, d.Clock, d.IPHasher, d.Activity, s.PublicURL),
			SubmitPublicForm: NewSubmitPublicFormHandler(d.Forms, d.Workspaces, d.Submissions, d.Files, d.IDs, d.Clock, d.IPHasher,
				SpamChecks{}, s.FileLimits, d.Activity),
			UpdateSubmission: NewUpdateSubmissionHandler(d.Forms, d.Submissions, d.IDs, d.Clock, s.PublicURL),
			DeleteSubmission: NewDeleteSubmissionHandler(d.Forms, d.Submissions, d.Files, d.IDs, d.Clock),
			CreateWebhook:    NewCreateWebhookHandler(d.Webhooks, d.Forms, d.URLs, d.IDs, d.Clock, s.MaxWebhooks),
			UpdateWebhook:    NewUpdateWebhookHandler(d.Webhooks, d.Forms, d.URLs, d.Clock),
			DeleteWebhook:    NewDeleteWebhookHandler(d.Webhooks),
			RetryDelivery:    NewRetryDeliveryHandler(d.Deliveries, d.Clock),
			RetryRun:         NewRetryRunHandler(d.Workflows, d.Runs, d.Clock),
			SendTestEvent:    NewSendTestEventHandler(d.Webhooks, d.Deliveries, d.IDs, d.Clock),
			CreateWorkflow: NewCreateWorkflowHandler(d.Workflows, d.Forms, d.Integrations, d.URLs, d.Actions, d.IDs, d.Clock,
				s.WorkflowLimits, s.MaxWorkflowsPerForm),
			UpdateWorkflow: NewUpdateWorkflowHandler(d.Workflows, d.Forms, d.Integrations, d.URLs, d.Actions, d.IDs, d.Clock,
				s.WorkflowLimits),
			DeleteWorkflow:    NewDeleteWorkflowHandler(d.Workflows),
			CreateIntegration: NewCreateIntegrationHandler(d.Integrations, d.IDs, d.Clock),
			DeleteIntegration: NewDeleteIntegrationHandler(d.Integrations),
			RecordFormView:    NewRecordFormViewHandler(d.Activity, d.Clock),
			RecordFormStart:   NewRecordFormStartHandler(d.Activity, d.Clock, d.IPHasher),

			IssueSetupToken: NewIssueSetupTokenHandler(d.Users, d.Tokens, d.Clock),
			SetupFirstOwner: NewSetupFirstOwnerHandler(d.Users, d.Memberships, d.Workspaces, d.Sessions, d.Tokens, d.Audit,
				d.Passwords, d.IDs, d.Clock, d.IPHasher, s.DefaultPlan),
			CreateUser: NewCreateUserHandler(d.Users, d.Memberships, d.Workspaces, d.Tokens, d.IDs, d.Clock, s.PublicURL),
			SignIn: NewSignInHandler(d.Users, d.Memberships, d.Sessions, d.Tokens, d.Audit, d.Throttle, d.Passwords, d.TOTP,
				d.Cipher, d.IDs, d.Clock, d.IPHasher),
			SignOut:           NewSignOutHandler(d.Sessions),
			SignOutEverywhere: NewSignOutEverywhereHandler(d.Sessions),
			SwitchWorkspace:   NewSwitchWorkspaceHandler(d.Sessions, d.Memberships, d.Clock),
			ChangePassword: NewChangePasswordHandler(d.Users, d.Memberships, d.Sessions, d.Throttle, d.Passwords, d.IDs,
				d.Clock),
			UpdateProfile:        NewUpdateProfileHandler(d.Users),
			RequestPasswordReset: NewRequestPasswordResetHandler(mailOutbox, d.Throttle, d.Cipher, d.IDs, d.Clock, d.IPHasher, mailWake),
			ResetPassword: NewResetPasswordHandler(d.Users, d.Memberships, d.Sessions, d.Tokens, d.Passwords, d.IDs, d.Clock,
				d.IPHasher),
			BeginTwoFactor:   NewBeginTwoFactorHandler(d.Users, d.Tokens, d.TOTP, d.Cipher, d.Clock, s.AppName),
			ConfirmTwoFactor: NewConfirmTwoFactorHandler(d.Users, d.Memberships, d.Tokens, d.TOTP, d.Cipher, d.IDs, d.Clock),
			DisableTwoFactor: NewDisableTwoFactorHandler(d.Users, d.Memberships, d.Tokens, d.Throttle, d.Passwords, d.TOTP, d.Cipher,
				d.IDs, d.Clock),
			StartOIDC:  NewStartOIDCHandler(d.OIDC),
			FinishOIDC: NewFinishOIDCHandler(d.OIDC, d.Users, d.Memberships, d.Sessions, d.Audit, d.IDs, d.Clock, d.IPHasher),

			UpdateWorkspace:    NewUpdateWorkspaceHandler(d.Workspaces, d.IDs, d.Clock, d.Usage, d.Files),
			ChangeMemberRole:   NewChangeMemberRoleHandler(d.Memberships, d.IDs, d.Clock),
			RemoveMember:       NewRemoveMemberHandler(d.Memberships, d.IDs, d.Clock),
			InviteMember:       NewInviteMemberHandler(d.Invitations, d.Users, d.Memberships, d.Workspaces, d.Mailer, d.IDs, d.Clock, s.PublicURL),
			WithdrawInvitation: NewWithdrawInvitationHandler(d.Invitations, d.IDs, d.Clock),
			AcceptInvitation: NewAcceptInvitationHandler(d.Invitations, d.Users, d.Memberships, d.Sessions, d.Audit, d.Passwords,
				d.IDs, d.Clock, d.IPHasher),
			RunRetention: NewRunRetentionHandler(d.Workspaces, d.Forms, d.Retention, d.Files, d.Audit, d.Sessions, d.Throttle,
				d.Idempotency, d.IDs, d.Clock, DefaultRetentionBatch),
			PrivacyErase:   NewPrivacyEraseHandler(d.Privacy, d.BlindIndex, d.Forms, d.Retention, d.Files, d.IDs, d.Clock),
			ReindexPrivacy: NewReindexPrivacyHandler(d.Privacy),
		},
		Queries: Queries{
			Authenticate:     NewAuthenticateHandler(d.Keys, d.Clock),
			ListWorkspaces:   NewListWorkspacesHandler(d.Workspaces),
			ListAPIKeys:      NewListAPIKeysHandler(d.Keys),
			GetForm:          NewGetFormHandler(d.Forms),
			GetPublicForm:    NewGetPublicFormHandler(d.Forms),
			ListForms:        NewListFormsHandler(d.Forms),
			GetSubmission:    NewGetSubmissionHandler(d.Submissions),
			ListSubmissions:  NewListSubmissionsHandler(d.Forms, d.Submissions, d.Scanner),
			GetWebhook:       NewGetWebhookHandler(d.Webhooks),
			ListWebhooks:     NewListWebhooksHandler(d.Webhooks),
			ListDeliveries:   NewListDeliveriesHandler(d.Webhooks, d.Deliveries),
			GetWorkflow:      NewGetWorkflowHandler(d.Workflows),
			ListWorkflows:    NewListWorkflowsHandler(d.Workflows),
			GetIntegration:   NewGetIntegrationHandler(d.Integrations),
			ListIntegrations: NewListIntegrationsHandler(d.Integrations),
			ListRuns:         NewListRunsHandler(d.Workflows, d.Runs),

			ExportSubmissions: NewExportSubmissionsHandler(d.Forms, d.Scanner, d.Audit, d.IDs, d.Clock),
			GetFormStats:      NewGetFormStatsHandler(d.Forms, d.Stats, d.Activity, d.Clock),

			LastSubmissionTimes: NewLastSubmissionTimesHandler(d.Forms),

			ListNotificationRuns: NewListNotificationRunsHandler(d.Forms, d.Runs),

			AuthenticateSession: NewAuthenticateSessionHandler(d.Sessions, d.Users, d.Memberships, d.Clock, d.IPHasher),

			GetWorkspace:    NewGetWorkspaceHandler(d.Workspaces, d.Usage, d.Files),
			ListMembers:     NewListMembersHandler(d.Memberships),
			ListInvitations: NewListInvitationsHandler(d.Invitations, d.Clock),
			ListAuditEvents: NewListAuditEventsHandler(d.Audit),
			GetInvitation:   NewGetInvitationHandler(d.Invitations, d.Workspaces, d.Users, d.Clock),
			PrivacyExport:   NewPrivacyExportHandler(d.Privacy, d.BlindIndex, d.IDs, d.Clock),
		},
	}
}

// DefaultAppName names the service in mail and authenticator apps.
const DefaultAppName = "Formward"
