// Package application holds the use cases: one handler per command or query, each with
// Handle(ctx, cmd), depending only on the domain and the ports.
package application

import (
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Application groups every use case.
type Application struct {
	Commands Commands
	Queries  Queries
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
	CreateWorkflow         CreateWorkflowHandler
	UpdateWorkflow         UpdateWorkflowHandler
	DeleteWorkflow         DeleteWorkflowHandler
	CreateIntegration      CreateIntegrationHandler
	DeleteIntegration      DeleteIntegrationHandler
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

	// ListNotificationRuns reads a form's notification run log.
	ListNotificationRuns ListNotificationRunsHandler
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
	// only the server's own uploads live there.
	PublicURL string
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
	return &Application{
		Commands: Commands{
			CreateWorkspace:        NewCreateWorkspaceHandler(d.Workspaces, d.IDs, d.Clock, s.DefaultPlan),
			EnsureDefaultWorkspace: NewEnsureDefaultWorkspaceHandler(d.Workspaces, d.IDs, d.Clock, s.DefaultPlan),
			CreateAPIKey:           NewCreateAPIKeyHandler(d.Workspaces, d.Keys, d.IDs, d.Clock),
			RevokeAPIKey:           NewRevokeAPIKeyHandler(d.Keys, d.Clock),
			CreateForm:             NewCreateFormHandler(d.Forms, d.IDs, d.Clock, s.FormLimits),
			UpdateForm:             NewUpdateFormHandler(d.Forms, d.IDs, d.Clock, s.FormLimits),
			DeleteForm:             NewDeleteFormHandler(d.Forms, d.Files),
			CaptureSubmission:      NewCaptureSubmissionHandler(d.Forms, d.Submissions, d.IDs, d.Clock, d.IPHasher, s.PublicURL),
			SubmitPublicForm: NewSubmitPublicFormHandler(d.Forms, d.Workspaces, d.Submissions, d.Files, d.IDs, d.Clock, d.IPHasher,
				SpamChecks{}, s.FileLimits),
			UpdateSubmission: NewUpdateSubmissionHandler(d.Forms, d.Submissions, d.IDs, d.Clock, s.PublicURL),
			DeleteSubmission: NewDeleteSubmissionHandler(d.Forms, d.Submissions, d.Files),
			CreateWebhook:    NewCreateWebhookHandler(d.Webhooks, d.Forms, d.URLs, d.IDs, d.Clock, s.MaxWebhooks),
			UpdateWebhook:    NewUpdateWebhookHandler(d.Webhooks, d.Forms, d.URLs, d.Clock),
			DeleteWebhook:    NewDeleteWebhookHandler(d.Webhooks),
			RetryDelivery:    NewRetryDeliveryHandler(d.Deliveries, d.Clock),
			CreateWorkflow: NewCreateWorkflowHandler(d.Workflows, d.Forms, d.Integrations, d.URLs, d.Actions, d.IDs, d.Clock,
				s.WorkflowLimits, s.MaxWorkflowsPerForm),
			UpdateWorkflow: NewUpdateWorkflowHandler(d.Workflows, d.Forms, d.Integrations, d.URLs, d.Actions, d.IDs, d.Clock,
				s.WorkflowLimits),
			DeleteWorkflow:    NewDeleteWorkflowHandler(d.Workflows),
			CreateIntegration: NewCreateIntegrationHandler(d.Integrations, d.IDs, d.Clock),
			DeleteIntegration: NewDeleteIntegrationHandler(d.Integrations),
		},
		Queries: Queries{
			Authenticate:     NewAuthenticateHandler(d.Keys, d.Clock),
			ListWorkspaces:   NewListWorkspacesHandler(d.Workspaces),
			ListAPIKeys:      NewListAPIKeysHandler(d.Keys),
			GetForm:          NewGetFormHandler(d.Forms),
			GetPublicForm:    NewGetPublicFormHandler(d.Forms),
			ListForms:        NewListFormsHandler(d.Forms),
			GetSubmission:    NewGetSubmissionHandler(d.Submissions),
			ListSubmissions:  NewListSubmissionsHandler(d.Forms, d.Submissions),
			GetWebhook:       NewGetWebhookHandler(d.Webhooks),
			ListWebhooks:     NewListWebhooksHandler(d.Webhooks),
			ListDeliveries:   NewListDeliveriesHandler(d.Webhooks, d.Deliveries),
			GetWorkflow:      NewGetWorkflowHandler(d.Workflows),
			ListWorkflows:    NewListWorkflowsHandler(d.Workflows),
			GetIntegration:   NewGetIntegrationHandler(d.Integrations),
			ListIntegrations: NewListIntegrationsHandler(d.Integrations),
			ListRuns:         NewListRunsHandler(d.Workflows, d.Runs),

			ListNotificationRuns: NewListNotificationRunsHandler(d.Forms, d.Runs),
		},
	}
}

// ID prefixes of every resource.
const (
	PrefixWorkspace   = "wsp"
	PrefixAPIKey      = "key"
	PrefixForm        = "frm"
	PrefixField       = "fld"
	PrefixSubmission  = "sub"
	PrefixEvent       = "evt"
	PrefixWebhook     = "whk"
	PrefixDelivery    = "dlv"
	PrefixWorkflow    = "wfl"
	PrefixAction      = "act"
	PrefixIntegration = "int"
)
