package application_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/member"
)

// Every use case checks the caller's permission through Principal.Require: a read-only key
// reads, a read-write key also writes, and only an admin key manages the account.
func TestPrincipalRequire(t *testing.T) {
	for _, tc := range []struct {
		scope   apikey.Scope
		allowed []access.Permission
		refused []access.Permission
	}{
		{apikey.ScopeReadOnly, []access.Permission{access.Read}, []access.Permission{access.Write, access.ManageAccount}},
		{apikey.ScopeReadWrite, []access.Permission{access.Read, access.Write}, []access.Permission{access.ManageAccount}},
		{apikey.ScopeAdmin, []access.Permission{access.Read, access.Write, access.ManageAccount}, nil},
	} {
		p := auth.Principal{KeyID: "key_1", WorkspaceID: "wsp_1", Scope: tc.scope}
		for _, perm := range tc.allowed {
			if err := p.Require(perm); err != nil {
				t.Errorf("%s refused %s: %v", tc.scope, perm, err)
			}
		}
		for _, perm := range tc.refused {
			if err := p.Require(perm); !errors.Is(err, auth.ErrForbidden) {
				t.Errorf("%s given %s: %v, want ErrForbidden", tc.scope, perm, err)
			}
		}
	}
}

// Every use case behind the API and the dashboard checks its own permission before it touches a
// port: the application is built without any port here, so a handler that read or wrote before
// checking would panic. Each handler is refused without a principal and with the strongest
// grant short of its permission, and let through with the weakest grant that holds it.
func TestEveryUseCaseRequiresItsPermission(t *testing.T) {
	needs := permissionNeeded()
	// Use cases with no principal to check: the operator's CLI and startup, the public form,
	// background work, and the steps that establish who somebody is.
	public := map[string]bool{"CreateWorkspace": true, "EnsureDefaultWorkspace": true, "ListWorkspaces": true,
		"SubmitPublicForm": true, "GetPublicForm": true, "GetFormLogo": true, "RecordFormView": true, "RecordFormStart": true, "Authenticate": true, "GetInvitation": true, "AcceptInvitation": true,
		"SetupFirstOwner": true, "IssueSetupToken": true, "CreateUser": true, "SignIn": true, "SignOut": true,
		"SignOutEverywhere": true, "AuthenticateSession": true, "SwitchWorkspace": true, "ChangePassword": true, "UpdateProfile": true,
		"RequestPasswordReset": true, "ResetPassword": true, "BeginTwoFactor": true, "ConfirmTwoFactor": true,
		"DisableTwoFactor": true, "StartOIDC": true, "FinishOIDC": true,
		// A flash belongs to the signed-in session that kept it, whatever its role.
		"KeepFlash": true, "TakeFlash": true,
		// A respondent's drafts: the page's visit saves them, the resume link's token is the proof.
		"SaveDraft": true, "EndDraft": true, "EmailResumeLink": true, "ResumeDraft": true,
		// Jobs of the server itself (serve's schedule, the CLI), never reachable from a request.
		"RunRetention": true, "ReindexPrivacy": true,
		// The operator's `formward events`: every workspace's events, to the operator's brokers.
		"ReplayEvents": true, "BackfillEvents": true}

	key := func(s apikey.Scope) auth.Principal {
		return auth.Principal{WorkspaceID: "wsp_a", KeyID: "key_1", Scope: s, Actor: audit.Actor{Type: audit.ActorAPIKey, ID: "key_1"}}
	}
	role := func(r member.Role) auth.Principal {
		return auth.Principal{WorkspaceID: "wsp_a", Role: r, Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_1"}}
	}
	refused := map[access.Permission][]auth.Principal{
		access.Read:          {{WorkspaceID: "wsp_a", Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_1"}}},
		access.Write:         {key(apikey.ScopeReadOnly), role(member.RoleViewer)},
		access.ManageAccount: {key(apikey.ScopeReadWrite), role(member.RoleEditor)},
	}
	allowed := map[access.Permission][]auth.Principal{
		access.Read:          {key(apikey.ScopeReadOnly), role(member.RoleViewer)},
		access.Write:         {key(apikey.ScopeReadWrite), role(member.RoleEditor)},
		access.ManageAccount: {key(apikey.ScopeAdmin), role(member.RoleAdmin)},
	}

	app := reflect.ValueOf(*application.New(application.Deps{}, application.Settings{}))
	checked := 0
	for _, group := range []string{"Commands", "Queries"} {
		g := app.FieldByName(group)
		for i := 0; i < g.NumField(); i++ {
			name := g.Type().Field(i).Name
			perm, ok := needs[name]
			if !ok {
				if !public[name] {
					t.Errorf("%s.%s: say which permission it needs (or why it needs none) in this test", group, name)
				}
				continue
			}
			handle := g.Field(i).MethodByName("Handle")
			call := func(ctx context.Context) (err error, reached bool) {
				defer func() {
					if recover() != nil {
						reached = true // it went on to its (absent) ports: the check let it through
					}
				}()
				out := handle.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.Zero(handle.Type().In(1))})
				err, _ = out[len(out)-1].Interface().(error)
				return err, false
			}
			if err, reached := call(context.Background()); reached || !errors.Is(err, auth.ErrForbidden) {
				t.Errorf("%s without a principal: %v (reached its ports: %v), want ErrForbidden", name, err, reached)
			}
			for _, p := range refused[perm] {
				if err, reached := call(auth.WithPrincipal(context.Background(), p)); reached || !errors.Is(err, auth.ErrForbidden) {
					t.Errorf("%s as %s%s: %v (reached its ports: %v), want ErrForbidden", name, p.Scope, p.Role, err, reached)
				}
			}
			for _, p := range allowed[perm] {
				if err, _ := call(auth.WithPrincipal(context.Background(), p)); errors.Is(err, auth.ErrForbidden) {
					t.Errorf("%s as %s%s refused: %v", name, p.Scope, p.Role, err)
				}
			}
			checked++
		}
	}
	if checked != len(needs) {
		t.Errorf("checked %d use cases, want %d: a listed one is missing from the application", checked, len(needs))
	}
}

// permissionNeeded names the permission of every use case that acts for a principal.
func permissionNeeded() map[string]access.Permission {
	needs := map[string]access.Permission{}
	for _, n := range []string{"GetForm", "ListFormVersions", "GetFormVersion", "GetVersionSchema", "ListForms", "LastSubmissionTimes", "GetSubmission", "GetSubmissionFile", "DescribeFiles", "ListSubmissions", "GetWebhook", "ListWebhooks",
		"ListDeliveries", "GetReplay", "ListReplays", "GetWorkflow", "ListWorkflows", "GetIntegration", "ListIntegrations", "ListRuns", "ListNotificationRuns",
		"ExportSubmissions", "GetFormStats", "CountFieldAnswers", "GetResponseColumns", "SaveResponseColumns", "ListDrafts"} {
		needs[n] = access.Read
	}
	for _, n := range []string{"CreateForm", "UpdateForm", "RestoreFormVersion", "ApplyFormDefinition", "DeleteForm", "CaptureSubmission", "UpdateSubmission", "DeleteSubmission",
		"CreateWebhook", "UpdateWebhook", "DeleteWebhook", "RetryDelivery", "StartReplay", "RetryRun", "SendTestEvent", "CreateWorkflow", "UpdateWorkflow", "DeleteWorkflow",
		"CreateIntegration", "DeleteIntegration", "SetFormLogo", "RemoveFormLogo"} {
		needs[n] = access.Write
	}
	for _, n := range []string{"CreateAPIKey", "RevokeAPIKey", "ListAPIKeys", "GetWorkspace", "UpdateWorkspace", "ListMembers",
		"ChangeMemberRole", "RemoveMember", "ListInvitations", "InviteMember", "WithdrawInvitation", "ListAuditEvents",
		"PrivacyExport", "PrivacyErase"} {
		needs[n] = access.ManageAccount
	}
	return needs
}
