package application_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/formward/formward/application"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	webhooksapp "github.com/formward/formward/application/webhooks"
	workflowsapp "github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/member"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// chosenWorkspace lists the commands that name a workspace because the caller chooses it, never
// because it is who the caller is: switching a session to another of the user's workspaces
// (checked against the memberships), and the operator's CLI creating a user.
var chosenWorkspace = map[string]bool{"SwitchWorkspace": true, "CreateUser": true}

// No command or query carries the workspace it acts in: a use case takes it from the principal it
// checked, so no adapter can hand it another one.
func TestNoCommandNamesItsWorkspace(t *testing.T) {
	app := reflect.ValueOf(*application.New(application.Deps{}, application.Settings{}))
	for _, group := range []string{"Commands", "Queries"} {
		g := app.FieldByName(group)
		for i := 0; i < g.NumField(); i++ {
			name := g.Type().Field(i).Name
			if chosenWorkspace[name] {
				continue
			}
			handle := g.Field(i).MethodByName("Handle").Type()
			if handle.NumIn() < 2 {
				continue // it takes nothing but the context
			}
			in := handle.In(1)
			if path := workspaceField(in, in.Name(), map[reflect.Type]bool{}); path != "" {
				t.Errorf("%s.%s: %s names a workspace; take it from the principal", group, name, path)
			}
		}
	}
}

// workspaceField returns the path of a field of t, or of the structs it holds, that names a
// workspace.
func workspaceField(t reflect.Type, path string, seen map[reflect.Type]bool) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return ""
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if strings.Contains(strings.ToLower(f.Name), "workspaceid") {
			return path + "." + f.Name
		}
		if p := workspaceField(f.Type, path+"."+f.Name, seen); p != "" {
			return p
		}
	}
	return ""
}

// No use case acts on a workspace other than its principal's: with the owner of workspace A, every
// workspace-scoped command and query is called with the IDs of workspace B's form, submission,
// webhook, workflow and integration. Each one aimed at B's objects is refused with not found, and
// afterwards nothing of B has changed.
func TestNoUseCaseReachesAnotherWorkspace(t *testing.T) {
	h := apptest.NewWith(application.Settings{}, apptest.WithWorkflows, apptest.WithWebhooks,
		func(_ *apptest.Harness, d *application.Deps) {
			d.Actions = map[string]ports.ActionRunner{"send_email": apptest.StubRunner{ActionType: "send_email"}}
		})
	app := h.App
	inB := auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: "wsp_b", Role: member.RoleOwner,
		Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_b"}})
	inA := auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: "wsp_a", Role: member.RoleOwner,
		Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_a"}})

	f := h.CreateForm(t, "wsp_b", apptest.NameAndAge()...)
	s, err := app.Commands.CaptureSubmission.Handle(inB, capture.CaptureSubmission{FormID: f.ID(), Source: submission.SourceAPI,
		Data: map[string]submission.Input{f.Fields()[0].ID: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := h.CreateWebhook("wsp_b", webhook.Draft{URL: "https://hooks.example.com/in", Events: []string{"submission.created"},
		FormID: apptest.Ptr(f.ID()), Secret: apptest.Ptr("s")})
	if err != nil {
		t.Fatal(err)
	}
	wf, err := app.Commands.CreateWorkflow.Handle(inB, workflowsapp.CreateWorkflow{Draft: apptest.WorkflowDraft(f.ID())})
	if err != nil {
		t.Fatal(err)
	}
	in, err := app.Commands.CreateIntegration.Handle(inB, workflowsapp.CreateIntegration{
		Draft: integration.Draft{Type: "slack", Credentials: map[string]string{"bot_token": "xoxb"}}})
	if err != nil {
		t.Fatal(err)
	}
	// What each use case calls "ID", by the noun in its name.
	ids := []struct{ noun, id string }{{"Submission", s.ID()}, {"Webhook", w.ID()}, {"Delivery", "dlv_b"},
		{"TestEvent", w.ID()}, {"Run", "run_b"}, {"Workflow", wf.ID()}, {"Integration", in.ID()}, {"Form", f.ID()}}
	refs := map[string]string{"FormID": f.ID(), "WebhookID": w.ID(), "WorkflowID": wf.ID(), "SubmissionID": s.ID(),
		"IntegrationID": in.ID()}

	bIDs := map[string]bool{f.ID(): true, s.ID(): true, w.ID(): true, wf.ID(): true, in.ID(): true}
	before := bState(t, app, inB, f.ID(), s.ID(), w.ID(), wf.ID(), in.ID())
	checked := 0
	for _, group := range []string{"Commands", "Queries"} {
		g := reflect.ValueOf(*app).FieldByName(group)
		for i := 0; i < g.NumField(); i++ {
			name := g.Type().Field(i).Name
			if _, scoped := workspaceScoped()[name]; !scoped {
				continue
			}
			handle := g.Field(i).MethodByName("Handle")
			if handle.Type().NumIn() < 2 {
				checked++
				continue // it takes nothing but the context: nothing to aim at B
			}
			cmd := reflect.New(handle.Type().In(1)).Elem()
			aimed := false
			if fld := cmd.FieldByName("ID"); fld.IsValid() && fld.Kind() == reflect.String {
				for _, n := range ids {
					if strings.Contains(name, n.noun) {
						fld.SetString(n.id)
						aimed = true
						break
					}
				}
			}
			if fillRefs(cmd, refs) {
				aimed = true
			}
			out, err, panicked := callHandle(handle, inA, cmd)
			switch {
			case !aimed:
			case panicked:
				t.Errorf("%s aimed at workspace B went on to ports it was not given (it did not stop at B's objects)", name)
			case err == nil:
				// A list filtered by B's object finds nothing of A's, and an idempotent delete
				// has nothing to delete: neither may show or touch B's objects.
				if id := heldID(out, bIDs); id != "" {
					t.Errorf("%s aimed at workspace B answered with B's %s", name, id)
				}
			case !errors.Is(err, domain.ErrNotFound) && !isValidation(err):
				t.Errorf("%s aimed at workspace B: %v, want not found", name, err)
			}
			checked++
		}
	}
	if checked != len(workspaceScoped()) {
		t.Errorf("called %d use cases, want %d", checked, len(workspaceScoped()))
	}
	if after := bState(t, app, inB, f.ID(), s.ID(), w.ID(), wf.ID(), in.ID()); after != before {
		t.Errorf("workspace B changed:\nbefore %s\nafter  %s", before, after)
	}
}

// workspaceScoped are the use cases that act in their principal's workspace: those that need a
// permission.
func workspaceScoped() map[string]access.Permission { return permissionNeeded() }

// fillRefs sets every field of v, or of the structs it holds, that refers to a form, submission,
// webhook, workflow or integration to workspace B's; it reports whether it set one.
func fillRefs(v reflect.Value, refs map[string]string) bool {
	set := false
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < v.NumField(); i++ {
		f, ft := v.Field(i), v.Type().Field(i)
		if !ft.IsExported() {
			continue
		}
		id, ok := refs[ft.Name]
		switch {
		case ok && f.Kind() == reflect.String:
			f.SetString(id)
			set = true
		case ok && f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String:
			f.Set(reflect.ValueOf(&id))
			set = true
		case ok && f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			f.Set(reflect.ValueOf([]string{id}))
			set = true
		case f.Kind() == reflect.Struct:
			set = fillRefs(f, refs) || set
		}
	}
	return set
}

// callHandle calls a handler; panicked is true when it went on to a port it was not given.
func callHandle(handle reflect.Value, ctx context.Context, cmd reflect.Value) (out []reflect.Value, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	out = handle.Call([]reflect.Value{reflect.ValueOf(ctx), cmd})
	err, _ = out[len(out)-1].Interface().(error)
	return out, err, false
}

// heldID returns the first of ids that a handler's answer holds: a value with an ID method, or
// a slice or struct of them.
func heldID(out []reflect.Value, ids map[string]bool) string {
	var walk func(v reflect.Value, depth int) string
	walk = func(v reflect.Value, depth int) string {
		if !v.IsValid() || depth > 3 {
			return ""
		}
		if m := v.MethodByName("ID"); m.IsValid() && m.Type().NumIn() == 0 && m.Type().NumOut() == 1 &&
			m.Type().Out(0).Kind() == reflect.String && !(v.Kind() == reflect.Pointer && v.IsNil()) {
			if id := m.Call(nil)[0].String(); ids[id] {
				return id
			}
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				return walk(v.Elem(), depth+1)
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				if id := walk(v.Index(i), depth+1); id != "" {
					return id
				}
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				if k.Kind() == reflect.String && ids[k.String()] {
					return k.String()
				}
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					if id := walk(v.Field(i), depth+1); id != "" {
						return id
					}
				}
			}
		}
		return ""
	}
	for _, v := range out {
		if id := walk(v, 0); id != "" {
			return id
		}
	}
	return ""
}

func isValidation(err error) bool {
	var ve *domain.ValidationError
	return errors.As(err, &ve)
}

// bState reads workspace B's objects as B's owner, in a form that shows any change.
func bState(t *testing.T, app *application.Application, inB context.Context, formID, subID, hookID, flowID, intID string) string {
	t.Helper()
	fv, err := app.Queries.GetForm.Handle(inB, forms.GetForm{ID: formID})
	if err != nil {
		t.Fatalf("B's form: %v", err)
	}
	s, err := app.Queries.GetSubmission.Handle(inB, capture.GetSubmission{FormID: formID, ID: subID})
	if err != nil {
		t.Fatalf("B's submission: %v", err)
	}
	w, err := app.Queries.GetWebhook.Handle(inB, webhooksapp.GetWebhook{ID: hookID})
	if err != nil {
		t.Fatalf("B's webhook: %v", err)
	}
	wf, err := app.Queries.GetWorkflow.Handle(inB, workflowsapp.GetWorkflow{ID: flowID})
	if err != nil {
		t.Fatalf("B's workflow: %v", err)
	}
	in, err := app.Queries.GetIntegration.Handle(inB, workflowsapp.GetIntegration{ID: intID})
	if err != nil {
		t.Fatalf("B's integration: %v", err)
	}
	return fmt.Sprintf("%+v %+v %+v %+v %+v %+v", *fv.Form, fv.Form.Fields(), *s, s.Data(), *w, *wf) + fmt.Sprintf(" %+v", *in)
}
