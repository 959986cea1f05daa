package apptest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/formward/formward/application"
	webhooksapp "github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// owned is what the workspace-bounded fakes below store.
type owned interface {
	ID() string
	WorkspaceID() string
	CreatedAt() time.Time
}

// table is a workspace-bounded table in memory: Get and Update work on copies made by clone.
type table[T owned] struct {
	mu    sync.Mutex
	Items map[string]T
	clone func(T) T
	// Audit receives the audit events of creations, updates and deletions; nil drops them.
	Audit *Audit
}

// record appends the audit events a change wrote.
func (r *table[T]) record(ctx context.Context, events []audit.Event) error {
	if r.Audit == nil || len(events) == 0 {
		return nil
	}
	return r.Audit.Append(ctx, events...)
}

func newTable[T owned](clone func(T) T) table[T] {
	return table[T]{Items: map[string]T{}, clone: clone}
}

func (r *table[T]) put(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Items[v.ID()] = v
}

func (r *table[T]) get(workspaceID, id string) (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.Items[id]
	if !ok || v.WorkspaceID() != workspaceID {
		var zero T
		return zero, domain.ErrNotFound
	}
	return r.clone(v), nil
}

// where returns the items match accepts, newest first, within the page.
func (r *table[T]) where(page ports.Page, match func(T) bool) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []T
	for _, v := range r.Items {
		if match(v) {
			out = append(out, v)
		}
	}
	return NewestFirst(out, page, func(v T) ports.Position { return ports.Position{CreatedAt: v.CreatedAt(), ID: v.ID()} })
}

func (r *table[T]) update(workspaceID, id string, change func(T) (ports.Effects, error)) (T, error) {
	v, err := r.get(workspaceID, id)
	if err != nil {
		return v, err
	}
	fx, err := change(v)
	if err != nil {
		var zero T
		return zero, err
	}
	r.put(v)
	return v, r.record(context.Background(), fx.Audit)
}

func (r *table[T]) delete(workspaceID, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.Items[id]; !ok || v.WorkspaceID() != workspaceID {
		return domain.ErrNotFound
	}
	delete(r.Items, id)
	return nil
}

func (r *table[T]) count(match func(T) bool) int {
	return len(r.where(ports.Page{Limit: len(r.Items) + 1}, match))
}

func all[T any](T) bool { return true }

// Webhooks is the webhook repository in memory; deleting a webhook deletes its deliveries.
type Webhooks struct {
	table[*webhook.Webhook]
	Deliveries *Deliveries
	// MatchingErr, when set, is Matching's answer, as a database that is down gives.
	MatchingErr error
	matches     int
}

func (r *Webhooks) Create(ctx context.Context, w *webhook.Webhook, events ...audit.Event) error {
	r.put(w)
	return r.record(ctx, events)
}

func (r *Webhooks) Get(_ context.Context, workspaceID, id string) (*webhook.Webhook, error) {
	return r.get(workspaceID, id)
}

func (r *Webhooks) List(_ context.Context, workspaceID string, page ports.Page) ([]*webhook.Webhook, error) {
	return r.where(page, func(w *webhook.Webhook) bool { return w.WorkspaceID() == workspaceID }), nil
}

func (r *Webhooks) Update(_ context.Context, workspaceID, id string, change func(*webhook.Webhook) (ports.Effects, error)) (*webhook.Webhook, error) {
	return r.update(workspaceID, id, change)
}

func (r *Webhooks) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	if err := r.delete(workspaceID, id); err != nil {
		return err
	}
	r.Deliveries.deleteWhere(func(d *webhook.Delivery) bool { return d.WebhookID() == id })
	return r.record(ctx, events)
}

func (r *Webhooks) Count(_ context.Context, workspaceID string) (int, error) {
	return r.count(func(w *webhook.Webhook) bool { return w.WorkspaceID() == workspaceID }), nil
}

// Matching returns the subscribers in ID order.
func (r *Webhooks) Matching(_ context.Context, e event.Event) ([]*webhook.Webhook, error) {
	r.mu.Lock()
	r.matches++
	err := r.MatchingErr
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := r.where(ports.Page{Limit: len(r.Items) + 1}, func(w *webhook.Webhook) bool { return w.Subscribes(e) })
	slices.SortFunc(out, func(a, b *webhook.Webhook) int { return strings.Compare(a.ID(), b.ID()) })
	return out, nil
}

// MatchingCalls is how often Matching was asked.
func (r *Webhooks) MatchingCalls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.matches
}

// Deliveries is the delivery repository in memory; ClaimDue takes due deliveries in the order
// they were added, within the claim's shares (ClaimFairly).
type Deliveries struct {
	mu    sync.Mutex
	Items map[string]*webhook.Delivery
	order []string
	// AddErr, when set, is AddAll's answer, as a database that is down gives.
	AddErr       error
	adds, claims int
}

// snapshot copies a delivery, as a database read does.
func snapshot(d *webhook.Delivery) *webhook.Delivery {
	c := webhook.UnmarshalDeliveryFromDatabase(d.ID(), d.WorkspaceID(), d.WebhookID(), d.EventID(), d.EventType(), d.FormID(),
		d.Body(), d.Status(), d.Cycle(), d.Attempts(), d.NextAttemptAt(), d.CreatedAt(), d.UpdatedAt())
	if d.FromEvent() {
		c.RestoreFromEvent(d.Body()) // the memory keeps the body the database rebuilds
	}
	return c
}

func (r *Deliveries) AddAll(_ context.Context, ds []*webhook.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adds++
	if r.AddErr != nil {
		return r.AddErr
	}
	for _, d := range ds {
		dup := false
		for _, old := range r.Items {
			dup = dup || old.WebhookID() == d.WebhookID() && old.EventID() == d.EventID()
		}
		if !dup {
			r.Items[d.ID()] = snapshot(d)
			r.order = append(r.order, d.ID())
		}
	}
	return nil
}

func (r *Deliveries) Get(_ context.Context, workspaceID, webhookID, id string) (*webhook.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.Items[id]
	if !ok || d.WorkspaceID() != workspaceID || d.WebhookID() != webhookID {
		return nil, domain.ErrNotFound
	}
	return snapshot(d), nil
}

// Find returns a copy of the delivery with the ID, of whichever webhook, or nil.
func (r *Deliveries) Find(id string) *webhook.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.Items[id]; ok {
		return snapshot(d)
	}
	return nil
}

// Added returns the IDs of the stored deliveries in the order they were added.
func (r *Deliveries) Added() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(r.order), func(id string) bool { _, ok := r.Items[id]; return !ok })
}

// Calls are how often AddAll and ClaimDue (the engine looking for due deliveries) were asked.
func (r *Deliveries) Calls() (adds, claims int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.adds, r.claims
}

func (r *Deliveries) List(_ context.Context, workspaceID, webhookID string, page ports.Page) ([]*webhook.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var of []*webhook.Delivery
	for _, d := range r.Items {
		if d.WorkspaceID() == workspaceID && d.WebhookID() == webhookID {
			of = append(of, snapshot(d))
		}
	}
	return NewestFirst(of, page, func(d *webhook.Delivery) ports.Position { return ports.Position{CreatedAt: d.CreatedAt(), ID: d.ID()} }), nil
}

func (r *Deliveries) ClaimDue(_ context.Context, c ports.Claim) ([]*webhook.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claims++
	var due []*webhook.Delivery
	for _, id := range r.order {
		d, ok := r.Items[id]
		if ok && d.Status() == webhook.StatusPending && d.NextAttemptAt() != nil && !d.NextAttemptAt().After(c.Now) {
			due = append(due, d)
		}
	}
	var out []*webhook.Delivery
	for _, i := range ClaimFairly(c, len(due), func(i int) (string, string) { return due[i].WorkspaceID(), due[i].WebhookID() }) {
		out = append(out, snapshot(due[i]))
		due[i].Postpone(c.Now.Add(c.Lease))
	}
	return out, nil
}

func (r *Deliveries) Save(_ context.Context, d *webhook.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.Items[d.ID()]; !ok {
		return domain.ErrNotFound
	}
	r.Items[d.ID()] = snapshot(d)
	return nil
}

func (r *Deliveries) Update(ctx context.Context, workspaceID, webhookID, id string, change func(*webhook.Delivery) (ports.Effects, error)) (*webhook.Delivery, error) {
	d, err := r.Get(ctx, workspaceID, webhookID, id)
	if err != nil {
		return nil, err
	}
	if _, err := change(d); err != nil {
		return nil, err
	}
	return d, r.Save(ctx, d)
}

func (r *Deliveries) deleteWhere(match func(*webhook.Delivery) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	maps.DeleteFunc(r.Items, func(_ string, d *webhook.Delivery) bool { return match(d) })
}

// Workflows is the workflow repository in memory.
type Workflows struct{ table[*workflow.Workflow] }

func (r *Workflows) Create(ctx context.Context, w *workflow.Workflow, events ...audit.Event) error {
	r.put(w)
	return r.record(ctx, events)
}

func (r *Workflows) Get(_ context.Context, workspaceID, id string) (*workflow.Workflow, error) {
	return r.get(workspaceID, id)
}

func (r *Workflows) List(_ context.Context, workspaceID string, formID *string, page ports.Page) ([]*workflow.Workflow, error) {
	return r.where(page, func(w *workflow.Workflow) bool {
		return w.WorkspaceID() == workspaceID && (formID == nil || *formID == w.FormID())
	}), nil
}

func (r *Workflows) Update(_ context.Context, workspaceID, id string, change func(*workflow.Workflow) (ports.Effects, error)) (*workflow.Workflow, error) {
	return r.update(workspaceID, id, change)
}

func (r *Workflows) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	if err := r.delete(workspaceID, id); err != nil {
		return err
	}
	return r.record(ctx, events)
}

func (r *Workflows) CountForForm(_ context.Context, workspaceID, formID string) (int, error) {
	return r.count(func(w *workflow.Workflow) bool { return w.WorkspaceID() == workspaceID && w.FormID() == formID }), nil
}

func (r *Workflows) Matching(_ context.Context, e event.Event) ([]*workflow.Workflow, error) {
	out := r.where(ports.Page{Limit: len(r.Items) + 1}, func(w *workflow.Workflow) bool {
		return w.Enabled() && w.WorkspaceID() == e.WorkspaceID && w.FormID() == e.FormID && w.Trigger().Type == e.Type
	})
	slices.Reverse(out) // oldest first
	return out, nil
}

// Integrations is the integration repository in memory.
type Integrations struct {
	table[*integration.Integration]
	// OfTypeErr, when set, is OfType's answer, as a database that is down gives.
	OfTypeErr error
}

func (r *Integrations) Create(ctx context.Context, i *integration.Integration, events ...audit.Event) error {
	r.put(i)
	return r.record(ctx, events)
}

func (r *Integrations) Get(_ context.Context, workspaceID, id string) (*integration.Integration, error) {
	return r.get(workspaceID, id)
}

func (r *Integrations) List(_ context.Context, workspaceID string, page ports.Page) ([]*integration.Integration, error) {
	return r.where(page, func(i *integration.Integration) bool { return i.WorkspaceID() == workspaceID }), nil
}

func (r *Integrations) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	if err := r.delete(workspaceID, id); err != nil {
		return err
	}
	return r.record(ctx, events)
}

func (r *Integrations) OfType(_ context.Context, workspaceID, typ string) (*integration.Integration, error) {
	if r.OfTypeErr != nil {
		return nil, r.OfTypeErr
	}
	newest := r.where(ports.Page{Limit: 1}, func(i *integration.Integration) bool { return i.Type() == typ && i.WorkspaceID() == workspaceID })
	if len(newest) == 0 {
		return nil, domain.ErrNotFound
	}
	return newest[0], nil
}

// URLs refuses URLs whose host starts with "10." or "internal", as the real checker refuses
// private addresses, and records what it was asked.
type URLs struct {
	mu    sync.Mutex
	Calls []string
}

func (u *URLs) CheckURL(_ context.Context, raw string) error {
	u.mu.Lock()
	u.Calls = append(u.Calls, raw)
	u.mu.Unlock()
	host := strings.TrimPrefix(raw, "https://")
	if strings.HasPrefix(host, "10.") || strings.HasPrefix(host, "internal") {
		return errors.New("url resolves to a private address (10.0.0.1)")
	}
	return nil
}

// StubRunner is an action runner that validates like the real ones (send_email needs "to";
// the secret marker is read-only) and does nothing.
type StubRunner struct{ ActionType, IntegrationType string }

func (s StubRunner) Type() string        { return s.ActionType }
func (s StubRunner) Integration() string { return s.IntegrationType }
func (s StubRunner) Run(context.Context, ports.ActionInput) ports.ActionOutcome {
	return ports.ActionOutcome{}
}

func (s StubRunner) Validate(cfg map[string]any) []ports.ConfigViolation {
	if _, ok := cfg["to"]; s.ActionType == "send_email" && !ok {
		return []ports.ConfigViolation{{Key: "to", Code: "required", Message: "to is required"}}
	}
	if _, ok := cfg[workflow.SecretSetKey]; ok {
		return []ports.ConfigViolation{{Key: workflow.SecretSetKey, Code: "unknown_property", Message: "read-only"}}
	}
	return nil
}

// StubRunners are stub runners of send_email, send_webhook and chat_message (on slack).
func StubRunners() map[string]ports.ActionRunner {
	runners := map[string]ports.ActionRunner{}
	for _, r := range []StubRunner{{ActionType: "send_email"}, {ActionType: "send_webhook"}, {ActionType: "chat_message", IntegrationType: "slack"}} {
		runners[r.ActionType] = r
	}
	return runners
}

// WithFiles gives the application the object store.
func WithFiles(store ports.ObjectStore) func(*Harness, *application.Deps) {
	return func(_ *Harness, d *application.Deps) { d.Files = store }
}

// WithWebhooks gives the application the webhook and delivery fakes and the URL checker.
func WithWebhooks(h *Harness, d *application.Deps) {
	d.Webhooks, d.Deliveries, d.URLs = h.Webhooks, h.Deliveries, h.URLs
}

// WithWorkflows gives the application the workflow and integration fakes, the URL checker and
// the stub runners.
func WithWorkflows(h *Harness, d *application.Deps) {
	d.Workflows, d.Integrations, d.URLs, d.Actions = h.Workflows, h.Integrations, h.URLs, StubRunners()
}

// CreateWebhook creates a webhook in the workspace, as its admin key.
func (h *Harness) CreateWebhook(ws string, d webhook.Draft) (*webhook.Webhook, error) {
	return h.App.Commands.CreateWebhook.Handle(As(ws, apikey.ScopeAdmin), webhooksapp.CreateWebhook{Draft: d})
}

// WorkflowDraft is a workflow of the form on submission.created with the actions (one
// send_email when none).
func WorkflowDraft(formID string, actions ...workflow.ActionSpec) workflow.Draft {
	if actions == nil {
		actions = []workflow.ActionSpec{{Type: "send_email", Config: map[string]any{"to": "a@b.co"}}}
	}
	return workflow.Draft{Name: "W", FormID: formID, Trigger: workflow.TriggerSpec{Type: "submission.created"}, Actions: actions}
}

// ViolationCodes maps each violated field of a validation error to "code: message"; nil when
// err is no validation error.
func ViolationCodes(err error) map[string]string {
	var ve *domain.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	out := map[string]string{}
	for _, v := range ve.Violations {
		out[v.Field] = v.Code + ": " + v.Message
	}
	return out
}

// WallClock is the real time, for engines that wait on it.
type WallClock struct{}

func (WallClock) Now() time.Time { return time.Now() }
