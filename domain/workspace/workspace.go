// Package workspace is the tenant boundary: every form, key and submission belongs to one workspace.
package workspace

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
	"github.com/formward/formward/domain/timezone"
)

// Plan decides retention and file storage limits.
type Plan string

// The four plans; each decides retention and file storage per form.
const (
	PlanFree     Plan = "free"
	PlanStarter  Plan = "starter"
	PlanGrowth   Plan = "growth"
	PlanBusiness Plan = "business"
)

// ParsePlan accepts one of the four plan names.
func ParsePlan(s string) (Plan, error) {
	switch p := Plan(s); p {
	case PlanFree, PlanStarter, PlanGrowth, PlanBusiness:
		return p, nil
	}
	return "", domain.Validation("plan", "invalid_value", "plan must be one of free, starter, growth, business")
}

// DefaultName is the name of the workspace the first start creates.
const DefaultName = "Default"

// Status says whether the workspace is in use or cancelled (its data deleted 90 days later).
type Status string

// The two statuses.
const (
	StatusActive    Status = "active"
	StatusCancelled Status = "cancelled"
)

// ParseStatus accepts active or cancelled.
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case StatusActive, StatusCancelled:
		return st, nil
	}
	return "", domain.Validation("status", "invalid_value", "status must be active or cancelled")
}

// GracePeriod is how long data outside a cancelled or downgraded workspace's plan is kept.
const GracePeriod = 90 * 24 * time.Hour

// rank orders the plans by what they keep.
func (p Plan) rank() int {
	switch p {
	case PlanFree:
		return 0
	case PlanStarter:
		return 1
	case PlanGrowth:
		return 2
	}
	return 3
}

// Retention is what a plan keeps of each form: the Keep most recent submissions, or those
// newer than MaxAge; zero values keep everything.
type Retention struct {
	Keep   int
	MaxAge time.Duration
}

// Retention returns the plan's rule: Free the 100 most recent, Starter 12 months, Growth 24
// months, Business everything.
func (p Plan) Retention() Retention {
	switch p {
	case PlanFree:
		return Retention{Keep: 100}
	case PlanStarter:
		return Retention{MaxAge: 365 * 24 * time.Hour}
	case PlanGrowth:
		return Retention{MaxAge: 2 * 365 * 24 * time.Hour}
	}
	return Retention{}
}

// Usage is what a workspace holds, shown against its plan.
type Usage struct {
	Forms        int64
	Submissions  int64
	StorageBytes int64
	Members      int64
}

// Workspace is one tenant, with its billing settings.
type Workspace struct {
	id             string
	name           string
	plan           Plan
	billingEmail   string
	status         Status
	cancelledAt    *time.Time
	dataDeletionAt *time.Time
	// retainedPlan is the plan whose retention still applies until dataDeletionAt after a
	// downgrade; empty when no downgrade is pending.
	retainedPlan Plan
	// timeZone is the IANA name the dashboard shows times in for members who chose none.
	timeZone  string
	createdAt time.Time
	updatedAt time.Time
}

// New checks the name and builds an active workspace.
func New(id, name string, plan Plan, now time.Time) (*Workspace, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 200 || !text.Valid(name) {
		return nil, domain.Validation("name", "invalid_length", "name must be 1 to 200 characters")
	}
	if _, err := ParsePlan(string(plan)); err != nil {
		return nil, err
	}
	now = now.UTC()
	return &Workspace{id: id, name: name, plan: plan, status: StatusActive, timeZone: timezone.UTC, createdAt: now, updatedAt: now}, nil
}

// Record is a stored workspace, for rehydration.
type Record struct {
	ID             string
	Name           string
	Plan           Plan
	BillingEmail   string
	Status         Status
	CancelledAt    *time.Time
	DataDeletionAt *time.Time
	RetainedPlan   Plan
	TimeZone       string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// UnmarshalFromDatabase rebuilds a stored workspace without re-checking it.
func UnmarshalFromDatabase(r Record) *Workspace {
	if r.Status == "" {
		r.Status = StatusActive
	}
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = r.CreatedAt
	}
	if r.TimeZone == "" {
		r.TimeZone = timezone.UTC
	}
	return &Workspace{id: r.ID, name: r.Name, plan: r.Plan, billingEmail: r.BillingEmail, status: r.Status,
		cancelledAt: r.CancelledAt, dataDeletionAt: r.DataDeletionAt, retainedPlan: r.RetainedPlan,
		timeZone: r.TimeZone, createdAt: r.CreatedAt.UTC(), updatedAt: r.UpdatedAt.UTC()}
}

// Record returns the stored form of the workspace.
func (w *Workspace) Record() Record {
	return Record{ID: w.id, Name: w.name, Plan: w.plan, BillingEmail: w.billingEmail, Status: w.status,
		CancelledAt: w.cancelledAt, DataDeletionAt: w.dataDeletionAt, RetainedPlan: w.retainedPlan,
		TimeZone: w.timeZone, CreatedAt: w.createdAt, UpdatedAt: w.updatedAt}
}

// Settings is a partial change of the billing settings; nil fields stay as they are.
type Settings struct {
	Name         *string
	Plan         *string
	BillingEmail *string
	Status       *string
	// TimeZone is an IANA name (see timezone.Parse).
	TimeZone *string
}

// Change applies the settings and returns what changed (field → new value) for the audit log.
// A downgrade keeps what the old plan kept for 90 days; cancelling deletes everything 90 days
// later; reactivating, or a plan at least as large as the one retained, cancels the pending
// deletion.
func (w *Workspace) Change(s Settings, now time.Time) (map[string]any, error) {
	var vs domain.Violations
	var name string
	var plan Plan
	var status Status
	if s.Name != nil {
		name = strings.TrimSpace(*s.Name)
		if name == "" || utf8.RuneCountInString(name) > 200 || !text.Valid(name) {
			vs.Add("name", "invalid_length", "name must be 1 to 200 characters")
		}
	}
	if s.Plan != nil {
		p, err := ParsePlan(*s.Plan)
		if err != nil {
			vs.Add("plan", "invalid_value", "plan must be one of free, starter, growth, business")
		}
		plan = p
	}
	if s.BillingEmail != nil {
		e := strings.ToLower(strings.TrimSpace(*s.BillingEmail))
		if e != "" && !validEmail(e) {
			vs.Add("billing_email", "invalid_email", "billing_email must be a valid address")
		}
		s.BillingEmail = &e
	}
	if s.Status != nil {
		st, err := ParseStatus(*s.Status)
		if err != nil {
			vs.Add("status", "invalid_value", "status must be active or cancelled")
		}
		status = st
	}
	var zone string
	if s.TimeZone != nil {
		z, _, err := timezone.Parse("time_zone", *s.TimeZone)
		bad, _ := domain.ViolationsOf(err) // Parse fails only with violations
		vs = append(vs, bad...)
		zone = z
	}
	if err := vs.Err(); err != nil {
		return nil, err
	}
	now = now.UTC()
	changed := map[string]any{}
	if s.Name != nil && name != w.name {
		w.name = name
		changed["name"] = name
	}
	if s.BillingEmail != nil && *s.BillingEmail != w.billingEmail {
		w.billingEmail = *s.BillingEmail
		changed["billing_email"] = w.billingEmail
	}
	if s.TimeZone != nil && zone != w.timeZone {
		w.timeZone = zone
		changed["time_zone"] = zone
	}
	if s.Plan != nil && plan != w.plan {
		w.changePlan(plan, now)
		changed["plan"] = string(plan)
	}
	if s.Status != nil && status != w.status {
		w.status = status
		changed["status"] = string(status)
		if status == StatusCancelled {
			// Everything goes 90 days after the cancellation, even when a downgrade's deadline
			// was sooner: that deadline would delete the whole workspace early. A downgrade still
			// pending keeps its retained plan until then.
			w.cancelledAt = &now
			deletion := now.Add(GracePeriod)
			w.dataDeletionAt = &deletion
		} else {
			w.cancelledAt = nil
			if w.retainedPlan == "" {
				w.dataDeletionAt = nil
			}
		}
	}
	if len(changed) > 0 {
		w.updatedAt = now
	}
	return changed, nil
}

func (w *Workspace) changePlan(to Plan, now time.Time) {
	kept := w.plan
	if w.retainedPlan != "" {
		kept = w.retainedPlan
	}
	w.plan = to
	if to.rank() >= kept.rank() {
		// Back to a plan that keeps at least as much: nothing is pending any more.
		w.retainedPlan = ""
		if w.status == StatusActive {
			w.dataDeletionAt = nil
		}
		return
	}
	if w.retainedPlan == "" {
		w.retainedPlan = kept
		w.setDeletion(now.Add(GracePeriod))
	}
}

func (w *Workspace) setDeletion(at time.Time) {
	if w.dataDeletionAt == nil || at.Before(*w.dataDeletionAt) {
		w.dataDeletionAt = &at
	}
}

// EffectiveRetention is the rule the retention job applies now: during the 90 days after a
// downgrade, the retained plan's; after them, the current plan's.
func (w *Workspace) EffectiveRetention(now time.Time) Retention {
	if w.retainedPlan != "" && w.dataDeletionAt != nil && now.Before(*w.dataDeletionAt) {
		return w.retainedPlan.Retention()
	}
	return w.plan.Retention()
}

// DueForDeletion reports whether a cancelled workspace's 90 days are over: all its data goes.
func (w *Workspace) DueForDeletion(now time.Time) bool {
	return w.status == StatusCancelled && w.dataDeletionAt != nil && !now.Before(*w.dataDeletionAt)
}

// SettleDowngrade forgets a downgrade whose 90 days are over, once its data is gone.
func (w *Workspace) SettleDowngrade(now time.Time) bool {
	if w.retainedPlan == "" || w.dataDeletionAt == nil || now.Before(*w.dataDeletionAt) {
		return false
	}
	w.retainedPlan = ""
	if w.status == StatusActive {
		w.dataDeletionAt = nil
	}
	return true
}

func validEmail(e string) bool {
	at := strings.LastIndex(e, "@")
	return at > 0 && at < len(e)-3 && strings.Contains(e[at:], ".") && len(e) <= 254 && text.Valid(e) && !strings.ContainsAny(e, " <>,;")
}

// ID returns the workspace ID.
func (w *Workspace) ID() string { return w.id }

// Name returns the display name.
func (w *Workspace) Name() string { return w.name }

// Plan returns the workspace's plan.
func (w *Workspace) Plan() Plan { return w.plan }

// BillingEmail returns the billing address, or "".
func (w *Workspace) BillingEmail() string { return w.billingEmail }

// Status returns active or cancelled.
func (w *Workspace) Status() Status { return w.status }

// CancelledAt returns when the workspace was cancelled, or nil.
func (w *Workspace) CancelledAt() *time.Time { return w.cancelledAt }

// DataDeletionAt returns when data outside the plan (or all data, once cancelled) is deleted, or nil.
func (w *Workspace) DataDeletionAt() *time.Time { return w.dataDeletionAt }

// RetainedPlan returns the plan still applied to retention after a downgrade, or "".
func (w *Workspace) RetainedPlan() Plan { return w.retainedPlan }

// TimeZone returns the IANA name of the zone the dashboard shows times in by default ("UTC"
// unless changed).
func (w *Workspace) TimeZone() string { return w.timeZone }

// CreatedAt returns the creation time.
func (w *Workspace) CreatedAt() time.Time { return w.createdAt }

// UpdatedAt returns the time of the last change.
func (w *Workspace) UpdatedAt() time.Time { return w.updatedAt }
