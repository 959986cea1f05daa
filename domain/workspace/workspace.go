// Package workspace is the tenant boundary: every form, key and submission belongs to one workspace.
package workspace

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
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

// Workspace is one tenant.
type Workspace struct {
	id        string
	name      string
	plan      Plan
	createdAt time.Time
}

// New checks the name and builds a workspace.
func New(id, name string, plan Plan, now time.Time) (*Workspace, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		return nil, domain.Validation("name", "invalid_length", "name must be 1 to 200 characters")
	}
	if _, err := ParsePlan(string(plan)); err != nil {
		return nil, err
	}
	return &Workspace{id: id, name: name, plan: plan, createdAt: now.UTC()}, nil
}

// UnmarshalFromDatabase rebuilds a stored workspace without re-checking it.
func UnmarshalFromDatabase(id, name string, plan Plan, createdAt time.Time) *Workspace {
	return &Workspace{id: id, name: name, plan: plan, createdAt: createdAt.UTC()}
}

// ID returns the workspace ID.
func (w *Workspace) ID() string { return w.id }

// Name returns the display name.
func (w *Workspace) Name() string { return w.name }

// Plan returns the workspace's plan.
func (w *Workspace) Plan() Plan { return w.plan }

// CreatedAt returns the creation time.
func (w *Workspace) CreatedAt() time.Time { return w.createdAt }
