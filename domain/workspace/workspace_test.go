package workspace_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
)

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func TestParsePlan(t *testing.T) {
	tests := []struct {
		in   string
		want workspace.Plan
		ok   bool
	}{
		{"free", workspace.PlanFree, true},
		{"starter", workspace.PlanStarter, true},
		{"growth", workspace.PlanGrowth, true},
		{"business", workspace.PlanBusiness, true},
		{"", "", false},
		{"Free", "", false},
		{"enterprise", "", false},
		{"pro", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := workspace.ParsePlan(tt.in)
			if tt.ok {
				if err != nil || got != tt.want {
					t.Fatalf("ParsePlan(%q) = %q, %v", tt.in, got, err)
				}
				return
			}
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || ve.Violations[0].Field != "plan" || got != "" {
				t.Fatalf("ParsePlan(%q) = %q, %v", tt.in, got, err)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		plan     workspace.Plan
		wantName string
		badField string
	}{
		{"valid", "Acme", workspace.PlanBusiness, "Acme", ""},
		{"trimmed", "  Acme Inc ", workspace.PlanFree, "Acme Inc", ""},
		{"default name", workspace.DefaultName, workspace.PlanStarter, "Default", ""},
		{"200 code points", strings.Repeat("漢", 200), workspace.PlanGrowth, strings.Repeat("漢", 200), ""},
		{"201 code points", strings.Repeat("漢", 201), workspace.PlanGrowth, "", "name"},
		{"empty", "", workspace.PlanFree, "", "name"},
		{"whitespace", " \t ", workspace.PlanFree, "", "name"},
		{"bad plan", "Acme", workspace.Plan("gold"), "", "plan"},
		{"empty plan", "Acme", workspace.Plan(""), "", "plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := workspace.New("wsp_1", tt.in, tt.plan, t0.In(time.FixedZone("X", 3600)))
			if tt.badField != "" {
				var ve *domain.ValidationError
				if !errors.As(err, &ve) || ve.Violations[0].Field != tt.badField || w != nil {
					t.Fatalf("New = %v, %v; want a violation on %s", w, err, tt.badField)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if w.ID() != "wsp_1" || w.Name() != tt.wantName || w.Plan() != tt.plan {
				t.Fatalf("workspace = %q %q %q", w.ID(), w.Name(), w.Plan())
			}
			if w.CreatedAt().Location() != time.UTC || !w.CreatedAt().Equal(t0) {
				t.Fatalf("createdAt = %v", w.CreatedAt())
			}
		})
	}
}

func TestUnmarshalFromDatabase(t *testing.T) {
	w := workspace.UnmarshalFromDatabase(workspace.Record{ID: "wsp_1", Name: "Acme", Plan: workspace.PlanFree, CreatedAt: t0.In(time.FixedZone("X", 3600))})
	if w.ID() != "wsp_1" || w.Name() != "Acme" || w.Plan() != workspace.PlanFree || w.CreatedAt().Location() != time.UTC {
		t.Fatalf("workspace = %+v", w)
	}
}
