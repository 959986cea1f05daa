// Package application is the composition root of the use cases, which live in one package per
// bounded context (auth, accounts, capture, forms, webhooks, workflows, workspace, relay): one
// handler per command or query, each with Handle(ctx, cmd), depending only on the domain, the
// ports and application/auth.
package application

import (
	"time"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/relay"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/application/workflows"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/submission"
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
	AccountMail *accounts.AccountMailSender
	// FormLimits are the limits forms are checked against; adapters that pre-check settings
	// (to report every problem of a request at once) check them under the same ones.
	FormLimits form.Limits
}

// Commands change state.
type Commands struct {
	CreateWorkspace        workspaceapp.CreateWorkspaceHandler
	EnsureDefaultWorkspace workspaceapp.EnsureDefaultWorkspaceHandler
	CreateAPIKey           accounts.CreateAPIKeyHandler
	RevokeAPIKey           accounts.RevokeAPIKeyHandler
	CreateForm             forms.CreateFormHandler
	UpdateForm             forms.UpdateFormHandler
	RestoreFormVersion     forms.RestoreFormVersionHandler
	ApplyFormDefinition    forms.ApplyDefinitionHandler
	DeleteForm             forms.DeleteFormHandler
	SetFormLogo            forms.SetFormLogoHandler
	RemoveFormLogo         forms.RemoveFormLogoHandler
	CaptureSubmission      capture.CaptureSubmissionHandler
	SubmitPublicForm       capture.SubmitPublicFormHandler
	UpdateSubmission       capture.UpdateSubmissionHandler
	DeleteSubmission       capture.DeleteSubmissionHandler
	CreateWebhook          webhooks.CreateWebhookHandler
	UpdateWebhook          webhooks.UpdateWebhookHandler
	DeleteWebhook          webhooks.DeleteWebhookHandler
	RetryDelivery          webhooks.RetryDeliveryHandler
	RetryRun               workflows.RetryRunHandler
	SendTestEvent          webhooks.SendTestEventHandler
	// StartReplay re-delivers a time range's retained events to a webhook.
	StartReplay webhooks.StartReplayHandler
	// ReplayEvents and BackfillEvents publish retained events again, and snapshots of stored
	// submissions, to a transport (`formward events`).
	ReplayEvents      relay.ReplayEventsHandler
	BackfillEvents    relay.BackfillEventsHandler
	CreateWorkflow    workflows.CreateWorkflowHandler
	UpdateWorkflow    workflows.UpdateWorkflowHandler
	DeleteWorkflow    workflows.DeleteWorkflowHandler
	CreateIntegration workflows.CreateIntegrationHandler
	DeleteIntegration workflows.DeleteIntegrationHandler
	// RecordFormView and RecordFormStart count the public page's views and starts.
	RecordFormView  capture.RecordFormViewHandler
	RecordFormStart capture.RecordFormStartHandler
	// SaveResponseColumns keeps a person's columns of a form's responses table.
	SaveResponseColumns capture.SaveResponseColumnsHandler
	// SaveDraft, EndDraft and EmailResumeLink keep a respondent's progress on a form with
	// settings.partial (public: the page's visit and its resume token are the caller).
	SaveDraft       capture.SaveDraftHandler
	EndDraft        capture.EndDraftHandler
	EmailResumeLink capture.EmailResumeLinkHandler

	// People and sessions.
	IssueSetupToken      accounts.IssueSetupTokenHandler
	SetupFirstOwner      accounts.SetupFirstOwnerHandler
	CreateUser           accounts.CreateUserHandler
	SignIn               accounts.SignInHandler
	SignOut              accounts.SignOutHandler
	SignOutEverywhere    accounts.SignOutEverywhereHandler
	SwitchWorkspace      accounts.SwitchWorkspaceHandler
	ChangePassword       accounts.ChangePasswordHandler
	UpdateProfile        accounts.UpdateProfileHandler
	RequestPasswordReset accounts.RequestPasswordResetHandler
	ResetPassword        accounts.ResetPasswordHandler
	BeginTwoFactor       accounts.BeginTwoFactorHandler
	ConfirmTwoFactor     accounts.ConfirmTwoFactorHandler
	// KeepFlash and TakeFlash hold what a dashboard page shows once (new keys, links, codes).
	KeepFlash        accounts.KeepFlashHandler
	TakeFlash        accounts.TakeFlashHandler
	DisableTwoFactor accounts.DisableTwoFactorHandler
	StartOIDC        accounts.StartOIDCHandler
	FinishOIDC       accounts.FinishOIDCHandler

	// Account management (access.ManageAccount).
	UpdateWorkspace    workspaceapp.UpdateWorkspaceHandler
	ChangeMemberRole   accounts.ChangeMemberRoleHandler
	RemoveMember       accounts.RemoveMemberHandler
	InviteMember       accounts.InviteMemberHandler
	WithdrawInvitation accounts.WithdrawInvitationHandler
	// AcceptInvitation is public: the accept link's token is the proof.
	AcceptInvitation accounts.AcceptInvitationHandler
	// RunRetention is one pass of the retention job.
	RunRetention workspaceapp.RunRetentionHandler
	// PrivacyErase deletes a respondent's submissions; ReindexPrivacy backfills their index.
	PrivacyErase   workspaceapp.PrivacyEraseHandler
	ReindexPrivacy workspaceapp.ReindexPrivacyHandler
}

// Queries read state.
type Queries struct {
	Authenticate     accounts.AuthenticateHandler
	ListWorkspaces   workspaceapp.ListWorkspacesHandler
	ListAPIKeys      accounts.ListAPIKeysHandler
	GetForm          forms.GetFormHandler
	GetVersionSchema forms.GetVersionSchemaHandler
	GetPublicForm    capture.GetPublicFormHandler
	GetFormLogo      forms.GetFormLogoHandler
	ListForms        forms.ListFormsHandler
	GetSubmission    capture.GetSubmissionHandler
	ListSubmissions  capture.ListSubmissionsHandler
	GetWebhook       webhooks.GetWebhookHandler
	ListWebhooks     webhooks.ListWebhooksHandler
	ListDeliveries   webhooks.ListDeliveriesHandler
	GetReplay        webhooks.GetReplayHandler
	ListReplays      webhooks.ListReplaysHandler
	GetWorkflow      workflows.GetWorkflowHandler
	ListWorkflows    workflows.ListWorkflowsHandler
	GetIntegration   workflows.GetIntegrationHandler
	ListIntegrations workflows.ListIntegrationsHandler
	ListRuns         workflows.ListRunsHandler
	// ExportSubmissions streams a form's submissions, oldest first (CSV, XLSX, NDJSON).
	ExportSubmissions capture.ExportSubmissionsHandler
	// GetFormStats reports a form's views, starts, submissions and completion.
	GetFormStats capture.GetFormStatsHandler
	// CountFieldAnswers counts the stored answers of one field of a form.
	CountFieldAnswers capture.CountFieldAnswersHandler
	// LastSubmissionTimes is when each form of a page last received a submission.
	LastSubmissionTimes forms.LastSubmissionTimesHandler
	// ListFormVersions and GetFormVersion read the versions of a form's fields.
	ListFormVersions forms.ListFormVersionsHandler
	GetFormVersion   forms.GetFormVersionHandler

	// GetSubmissionFile finds the file a link that never expires names; DescribeFiles reads
	// the names and sizes of a page's files.
	GetSubmissionFile capture.GetSubmissionFileHandler
	DescribeFiles     capture.DescribeFilesHandler

	// GetResponseColumns is a person's columns of a form's responses table.
	GetResponseColumns capture.GetResponseColumnsHandler

	// ResumeDraft reads a draft back by its resume token (public); ListDrafts lists a form's
	// drafts without their answers.
	ResumeDraft capture.ResumeDraftHandler
	ListDrafts  capture.ListDraftsHandler

	// ListNotificationRuns reads a form's notification run log.
	ListNotificationRuns workflows.ListNotificationRunsHandler

	// AuthenticateSession resolves a dashboard session cookie.
	AuthenticateSession accounts.AuthenticateSessionHandler

	// Account management (access.ManageAccount).
	GetWorkspace    workspaceapp.GetWorkspaceHandler
	ListMembers     accounts.ListMembersHandler
	ListInvitations accounts.ListInvitationsHandler
	ListAuditEvents workspaceapp.ListAuditEventsHandler
	// GetInvitation is public: the accept link's token is the proof.
	GetInvitation accounts.GetInvitationHandler
	// PrivacyExport finds a respondent's submissions across the workspace's forms.
	PrivacyExport workspaceapp.PrivacyExportHandler
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
	// retry.Default).
	MailRetry retry.Schedule
	// OutboxRetention is how long published events are kept: the oldest a replay may start
	// (default 168h).
	OutboxRetention time.Duration
}

// Deps are the ports of every use case, for the composition root: New hands each handler's
// constructor the ports that handler needs, and no handler keeps Deps.
type Deps struct {
	Workspaces  ports.WorkspaceRepository
	Keys        ports.APIKeyRepository
	Forms       ports.FormRepository
	Submissions ports.SubmissionRepository
	IDs         ports.IDs
	Clock       ports.Clock
	IPHasher    ports.IPHasher
	Webhooks    ports.WebhookRepository
	Deliveries  ports.DeliveryRepository
	// Replays are the webhook replay jobs.
	Replays ports.ReplayRepository
	// EventLog reads the retained outbox events; Backfills keep the progress of backfills.
	EventLog     ports.EventLog
	Backfills    ports.BackfillStore
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
	Tokens ports.UserTokenRepository
	// Flashes hold, sealed, what a dashboard page shows once; the retention job purges the
	// expired ones.
	Flashes   ports.FlashRepository
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
	// Columns keep each person's columns of each form's responses table.
	Columns ports.ResponseColumnsRepository
	// Drafts keep respondents' saved progress (settings.partial).
	Drafts ports.DraftRepository
}

// New is the composition root of the use cases: it fills the settings' defaults and builds
// every handler through its constructor, with the ports and settings that handler needs.
func New(d Deps, s Settings) *Application {
	if s.FormLimits.MaxFields == 0 && s.FormLimits.MaxOptions == 0 {
		s.FormLimits.MaxFields, s.FormLimits.MaxOptions = form.DefaultLimits.MaxFields, form.DefaultLimits.MaxOptions
	}
	if s.OutboxRetention <= 0 {
		s.OutboxRetention = 168 * time.Hour
	}
	if s.MaxWebhooks <= 0 {
		s.MaxWebhooks = webhooks.DefaultMaxWebhooks
	}
	if s.WorkflowLimits.MaxActions <= 0 {
		s.WorkflowLimits.MaxActions = workflow.DefaultLimits.MaxActions
	}
	if s.WorkflowLimits.MaxConditions <= 0 {
		s.WorkflowLimits.MaxConditions = workflow.DefaultLimits.MaxConditions
	}
	if s.MaxWorkflowsPerForm <= 0 {
		s.MaxWorkflowsPerForm = workflows.DefaultMaxWorkflowsPerForm
	}
	if s.DefaultPlan == "" {
		s.DefaultPlan = workspace.PlanBusiness
	}
	if s.AppName == "" {
		s.AppName = DefaultAppName
	}
	var (
		mailOutbox ports.AccountMailOutbox
		mailSender *accounts.AccountMailSender
		mailWake   func()
		mailQueue  ports.MailQueue
	)
	if d.Mailer != nil && d.AccountMail != nil {
		mailOutbox = d.AccountMail
		mailSender = accounts.NewAccountMailSender(d.AccountMail, d.Users, d.Tokens, d.Mailer, d.Cipher, d.Clock, s.MailRetry, s.PublicURL, s.AppName)
		mailWake = mailSender.Notify
		mailQueue = accounts.NewMailQueue(d.AccountMail, d.Cipher, d.IDs, d.Clock, mailWake)
	}
	return &Application{
		AccountMail: mailSender,
		FormLimits:  s.FormLimits,
		Commands: Commands{
			CreateWorkspace:        workspaceapp.NewCreateWorkspaceHandler(d.Workspaces, d.IDs, d.Clock, s.DefaultPlan),
			EnsureDefaultWorkspace: workspaceapp.NewEnsureDefaultWorkspaceHandler(d.Workspaces, d.IDs, d.Clock, s.DefaultPlan),
			CreateAPIKey:           accounts.NewCreateAPIKeyHandler(d.Workspaces, d.Keys, d.IDs, d.Clock),
			RevokeAPIKey:           accounts.NewRevokeAPIKeyHandler(d.Keys, d.IDs, d.Clock),
			CreateForm:             forms.NewCreateFormHandler(d.Forms, d.IDs, d.Clock, s.FormLimits),
			UpdateForm:             forms.NewUpdateFormHandler(d.Forms, d.IDs, d.Clock, s.FormLimits),
			RestoreFormVersion:     forms.NewRestoreFormVersionHandler(d.Forms, d.IDs, d.Clock),
			ApplyFormDefinition:    forms.NewApplyDefinitionHandler(d.Forms, d.Scanner, d.IDs, d.Clock, s.FormLimits),
			DeleteForm:             forms.NewDeleteFormHandler(d.Forms, d.Files, d.IDs, d.Clock),
			SetFormLogo:            forms.NewSetFormLogoHandler(d.Forms, d.Files, d.IDs, d.Clock),
			RemoveFormLogo:         forms.NewRemoveFormLogoHandler(d.Forms, d.Files, d.IDs, d.Clock),
			CaptureSubmission:      capture.NewCaptureSubmissionHandler(d.Forms, d.Submissions, d.IDs, d.Clock, d.IPHasher, d.Activity, s.PublicURL),
			SubmitPublicForm: capture.NewSubmitPublicFormHandler(d.Forms, d.Workspaces, d.Submissions, d.Files, d.IDs, d.Clock, d.IPHasher,
				capture.SpamChecks{}, s.FileLimits, d.Activity),
			UpdateSubmission: capture.NewUpdateSubmissionHandler(d.Forms, d.Submissions, d.IDs, d.Clock, s.PublicURL),
			DeleteSubmission: capture.NewDeleteSubmissionHandler(d.Forms, d.Submissions, d.Files, d.IDs, d.Clock),
			CreateWebhook:    webhooks.NewCreateWebhookHandler(d.Webhooks, d.Forms, d.URLs, d.IDs, d.Clock, s.MaxWebhooks),
			UpdateWebhook:    webhooks.NewUpdateWebhookHandler(d.Webhooks, d.Forms, d.URLs, d.IDs, d.Clock),
			DeleteWebhook:    webhooks.NewDeleteWebhookHandler(d.Webhooks, d.IDs, d.Clock),
			RetryDelivery:    webhooks.NewRetryDeliveryHandler(d.Deliveries, d.Clock),
			RetryRun:         workflows.NewRetryRunHandler(d.Workflows, d.Runs, d.Clock),
			SendTestEvent:    webhooks.NewSendTestEventHandler(d.Webhooks, d.Deliveries, d.IDs, d.Clock),
			StartReplay:      webhooks.NewStartReplayHandler(d.Webhooks, d.Replays, d.IDs, d.Clock, s.OutboxRetention),
			ReplayEvents:     relay.NewReplayEventsHandler(d.EventLog, d.Clock, s.OutboxRetention),
			BackfillEvents:   relay.NewBackfillEventsHandler(d.Workspaces, d.Forms, d.Scanner, d.Backfills, d.IDs, d.Clock),
			CreateWorkflow: workflows.NewCreateWorkflowHandler(d.Workflows, d.Forms, d.Integrations, d.URLs, d.Actions, d.IDs, d.Clock,
				s.WorkflowLimits, s.MaxWorkflowsPerForm),
			UpdateWorkflow: workflows.NewUpdateWorkflowHandler(d.Workflows, d.Forms, d.Integrations, d.URLs, d.Actions, d.IDs, d.Clock,
				s.WorkflowLimits),
			DeleteWorkflow:    workflows.NewDeleteWorkflowHandler(d.Workflows, d.IDs, d.Clock),
			CreateIntegration: workflows.NewCreateIntegrationHandler(d.Integrations, d.IDs, d.Clock),
			DeleteIntegration: workflows.NewDeleteIntegrationHandler(d.Integrations, d.IDs, d.Clock),
			RecordFormView:    capture.NewRecordFormViewHandler(d.Activity, d.Clock),
			RecordFormStart:   capture.NewRecordFormStartHandler(d.Activity, d.Clock, d.IPHasher),

			SaveResponseColumns: capture.NewSaveResponseColumnsHandler(d.Forms, d.Columns, d.Clock),
			SaveDraft:           capture.NewSaveDraftHandler(d.Forms, d.Drafts, d.IDs, d.Clock),
			EndDraft:            capture.NewEndDraftHandler(d.Drafts, d.Clock),
			EmailResumeLink:     capture.NewEmailResumeLinkHandler(d.Forms, d.Drafts, mailQueue, d.Clock, s.PublicURL, s.AppName),

			IssueSetupToken: accounts.NewIssueSetupTokenHandler(d.Users, d.Tokens, d.Clock),
			SetupFirstOwner: accounts.NewSetupFirstOwnerHandler(d.Users, d.Memberships, d.Workspaces, d.Sessions, d.Tokens, d.Audit,
				d.Passwords, d.IDs, d.Clock, d.IPHasher, s.DefaultPlan),
			CreateUser: accounts.NewCreateUserHandler(d.Users, d.Memberships, d.Workspaces, d.Tokens, d.IDs, d.Clock, s.PublicURL),
			SignIn: accounts.NewSignInHandler(d.Users, d.Memberships, d.Sessions, d.Tokens, d.Audit, d.Throttle, d.Passwords, d.TOTP,
				d.Cipher, d.IDs, d.Clock, d.IPHasher),
			SignOut:           accounts.NewSignOutHandler(d.Sessions),
			SignOutEverywhere: accounts.NewSignOutEverywhereHandler(d.Sessions),
			SwitchWorkspace:   accounts.NewSwitchWorkspaceHandler(d.Sessions, d.Memberships, d.Clock),
			ChangePassword: accounts.NewChangePasswordHandler(d.Users, d.Memberships, d.Sessions, d.Throttle, d.Passwords, d.IDs,
				d.Clock),
			UpdateProfile:        accounts.NewUpdateProfileHandler(d.Users),
			RequestPasswordReset: accounts.NewRequestPasswordResetHandler(mailOutbox, d.Throttle, d.Cipher, d.IDs, d.Clock, d.IPHasher, mailWake),
			ResetPassword: accounts.NewResetPasswordHandler(d.Users, d.Memberships, d.Sessions, d.Tokens, d.Passwords, d.IDs, d.Clock,
				d.IPHasher),
			BeginTwoFactor:   accounts.NewBeginTwoFactorHandler(d.Users, d.Tokens, d.TOTP, d.Cipher, d.Clock, s.AppName),
			ConfirmTwoFactor: accounts.NewConfirmTwoFactorHandler(d.Users, d.Memberships, d.Tokens, d.TOTP, d.Cipher, d.IDs, d.Clock),
			KeepFlash:        accounts.NewKeepFlashHandler(d.Flashes, d.Cipher, d.IDs, d.Clock),
			TakeFlash:        accounts.NewTakeFlashHandler(d.Flashes, d.Cipher, d.Clock),
			DisableTwoFactor: accounts.NewDisableTwoFactorHandler(d.Users, d.Memberships, d.Tokens, d.Throttle, d.Passwords, d.TOTP, d.Cipher,
				d.IDs, d.Clock),
			StartOIDC:  accounts.NewStartOIDCHandler(d.OIDC),
			FinishOIDC: accounts.NewFinishOIDCHandler(d.OIDC, d.Users, d.Memberships, d.Sessions, d.Audit, d.IDs, d.Clock, d.IPHasher),

			UpdateWorkspace:    workspaceapp.NewUpdateWorkspaceHandler(d.Workspaces, d.IDs, d.Clock, d.Usage, d.Files),
			ChangeMemberRole:   accounts.NewChangeMemberRoleHandler(d.Memberships, d.IDs, d.Clock),
			RemoveMember:       accounts.NewRemoveMemberHandler(d.Memberships, d.IDs, d.Clock),
			InviteMember:       accounts.NewInviteMemberHandler(d.Invitations, d.Users, d.Memberships, d.Workspaces, d.Mailer, d.IDs, d.Clock, s.PublicURL),
			WithdrawInvitation: accounts.NewWithdrawInvitationHandler(d.Invitations, d.IDs, d.Clock),
			AcceptInvitation: accounts.NewAcceptInvitationHandler(d.Invitations, d.Users, d.Memberships, d.Sessions, d.Audit, d.Passwords,
				d.IDs, d.Clock, d.IPHasher),
			RunRetention: workspaceapp.NewRunRetentionHandler(d.Workspaces, d.Forms, d.Retention, d.Files, d.Audit, d.Sessions, d.Throttle,
				d.Idempotency, d.Flashes, d.IDs, d.Clock, workspaceapp.DefaultRetentionBatch).WithDrafts(d.Drafts),
			PrivacyErase: workspaceapp.NewPrivacyEraseHandler(d.Privacy, d.BlindIndex, d.Forms, d.Retention, d.Files, d.IDs, d.Clock).
				WithDrafts(d.Drafts),
			ReindexPrivacy: workspaceapp.NewReindexPrivacyHandler(d.Privacy),
		},
		Queries: Queries{
			Authenticate:     accounts.NewAuthenticateHandler(d.Keys, d.Clock),
			ListWorkspaces:   workspaceapp.NewListWorkspacesHandler(d.Workspaces),
			ListAPIKeys:      accounts.NewListAPIKeysHandler(d.Keys),
			GetForm:          forms.NewGetFormHandler(d.Forms),
			GetVersionSchema: forms.NewGetVersionSchemaHandler(d.Forms),
			GetPublicForm:    capture.NewGetPublicFormHandler(d.Forms),
			GetFormLogo:      forms.NewGetFormLogoHandler(d.Forms, d.Files),
			ListForms:        forms.NewListFormsHandler(d.Forms),
			GetSubmission:    capture.NewGetSubmissionHandler(d.Submissions),
			ListSubmissions:  capture.NewListSubmissionsHandler(d.Forms, d.Submissions, d.Scanner),
			GetWebhook:       webhooks.NewGetWebhookHandler(d.Webhooks),
			ListWebhooks:     webhooks.NewListWebhooksHandler(d.Webhooks),
			ListDeliveries:   webhooks.NewListDeliveriesHandler(d.Webhooks, d.Deliveries),
			GetReplay:        webhooks.NewGetReplayHandler(d.Webhooks, d.Replays),
			ListReplays:      webhooks.NewListReplaysHandler(d.Webhooks, d.Replays),
			GetWorkflow:      workflows.NewGetWorkflowHandler(d.Workflows),
			ListWorkflows:    workflows.NewListWorkflowsHandler(d.Workflows),
			GetIntegration:   workflows.NewGetIntegrationHandler(d.Integrations),
			ListIntegrations: workflows.NewListIntegrationsHandler(d.Integrations),
			ListRuns:         workflows.NewListRunsHandler(d.Workflows, d.Runs),

			ExportSubmissions: capture.NewExportSubmissionsHandler(d.Forms, d.Scanner, d.Audit, d.IDs, d.Clock),
			GetFormStats:      capture.NewGetFormStatsHandler(d.Forms, d.Stats, d.Activity, d.Clock).WithDrafts(d.Drafts),
			CountFieldAnswers: capture.NewCountFieldAnswersHandler(d.Forms, d.Scanner),

			LastSubmissionTimes: forms.NewLastSubmissionTimesHandler(d.Forms),
			ListFormVersions:    forms.NewListFormVersionsHandler(d.Forms),
			GetFormVersion:      forms.NewGetFormVersionHandler(d.Forms),

			GetSubmissionFile: capture.NewGetSubmissionFileHandler(d.Submissions),
			DescribeFiles:     capture.NewDescribeFilesHandler(d.Files),

			GetResponseColumns: capture.NewGetResponseColumnsHandler(d.Forms, d.Columns),
			ResumeDraft:        capture.NewResumeDraftHandler(d.Drafts, d.Clock),
			ListDrafts:         capture.NewListDraftsHandler(d.Forms, d.Drafts),

			ListNotificationRuns: workflows.NewListNotificationRunsHandler(d.Forms, d.Runs),

			AuthenticateSession: accounts.NewAuthenticateSessionHandler(d.Sessions, d.Users, d.Memberships, d.Clock, d.IPHasher),

			GetWorkspace:    workspaceapp.NewGetWorkspaceHandler(d.Workspaces, d.Usage, d.Files),
			ListMembers:     accounts.NewListMembersHandler(d.Memberships),
			ListInvitations: accounts.NewListInvitationsHandler(d.Invitations, d.Clock),
			ListAuditEvents: workspaceapp.NewListAuditEventsHandler(d.Audit),
			GetInvitation:   accounts.NewGetInvitationHandler(d.Invitations, d.Workspaces, d.Users, d.Clock),
			PrivacyExport:   workspaceapp.NewPrivacyExportHandler(d.Privacy, d.BlindIndex, d.IDs, d.Clock),
		},
	}
}

// DefaultAppName names the service in mail and authenticator apps.
const DefaultAppName = "Formward"
