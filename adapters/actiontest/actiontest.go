// Package actiontest is the contract every ports.ActionRunner must pass, and helpers to build
// the ActionInput the workflow executor would give it.
package actiontest

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/ports"
)

// Contract describes a runner for Run.
type Contract struct {
	// Valid is a config the runner accepts.
	Valid map[string]any
	// Credentials, for a runner with an Integration, are credentials that would let it run.
	Credentials map[string]string
}

// Run checks the behaviour every action type shares:
//   - Type is a non-empty snake_case identifier;
//   - Validate accepts Valid, and rejects an empty config and each required key of Valid
//     removed or given a wrong type, with a violation naming that key;
//   - Validate does not change the config it is given;
//   - Run with a canceled context returns promptly with a retryable failure (shutdown is not
//     the destination's fault);
//   - a runner with an Integration fails permanently when the credentials are gone;
//   - Run with an invalid config fails permanently instead of panicking.
func Run(t *testing.T, r ports.ActionRunner, c Contract) {
	t.Helper()
	t.Run("type", func(t *testing.T) {
		if !regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(r.Type()) {
			t.Fatalf("Type() = %q, want a snake_case identifier", r.Type())
		}
	})
	t.Run("validate accepts the valid config", func(t *testing.T) {
		if vs := r.Validate(clone(c.Valid)); len(vs) != 0 {
			t.Fatalf("Validate(valid) = %+v, want none", vs)
		}
	})
	t.Run("validate rejects an empty config", func(t *testing.T) {
		for _, cfg := range []map[string]any{nil, {}} {
			vs := r.Validate(cfg)
			if len(vs) == 0 {
				t.Fatalf("Validate(%v) gave no violation", cfg)
			}
			for _, v := range vs {
				if v.Key == "" || v.Code == "" || v.Message == "" {
					t.Errorf("violation %+v: key, code and message must all be set", v)
				}
			}
		}
	})
	t.Run("validate names each broken key", func(t *testing.T) {
		for key := range c.Valid {
			without := clone(c.Valid)
			delete(without, key)
			wrong := clone(c.Valid)
			wrong[key] = []any{42}
			if vs := r.Validate(wrong); !names(vs, key) {
				t.Errorf("Validate with %s of the wrong type = %+v, want a violation at %q", key, vs, key)
			}
			if vs := r.Validate(without); len(vs) > 0 && !names(vs, key) {
				t.Errorf("Validate without %s = %+v: violations must name %q", key, vs, key)
			}
		}
	})
	t.Run("validate leaves the config alone", func(t *testing.T) {
		cfg := clone(c.Valid)
		r.Validate(cfg)
		if len(cfg) != len(c.Valid) {
			t.Fatalf("Validate changed the config: %v", cfg)
		}
	})
	t.Run("run honours a canceled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		done := make(chan ports.ActionOutcome, 1)
		go func() { done <- r.Run(ctx, Input(c.Valid, c.Credentials)) }()
		select {
		case out := <-done:
			if out.Err == nil {
				t.Fatal("Run with a canceled context succeeded")
			}
			if out.Permanent {
				t.Fatalf("Run with a canceled context failed permanently: %v", out.Err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run with a canceled context did not return within 5s")
		}
	})
	t.Run("run with an invalid config fails permanently", func(t *testing.T) {
		out := r.Run(context.Background(), Input(map[string]any{}, c.Credentials))
		if out.Err == nil || !out.Permanent {
			t.Fatalf("Run(empty config) = %+v, want a permanent failure", out)
		}
	})
	if r.Integration() != "" {
		t.Run("run without credentials fails permanently", func(t *testing.T) {
			out := r.Run(context.Background(), Input(c.Valid, nil))
			if out.Err == nil || !out.Permanent {
				t.Fatalf("Run without credentials = %+v, want a permanent failure", out)
			}
		})
	}
}

func names(vs []ports.ConfigViolation, key string) bool {
	for _, v := range vs {
		if v.Key == key || strings.HasPrefix(v.Key, key+".") || strings.HasPrefix(v.Key, key+"[") {
			return true
		}
	}
	return false
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// SubmittedAt is the submission time of Input.
var SubmittedAt = time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.UTC)

// Input is an ActionInput for a "Lead" form submission with fields fld_name (Full name),
// fld_email (Email), fld_budget (Budget) and fld_tags (Tags, multi-value).
func Input(config map[string]any, credentials map[string]string) ports.ActionInput {
	ua, ref, ip := "Mozilla/5.0", "https://example.com/contact", "9f86d081884c7d65"
	in := ports.ActionInput{
		WorkspaceID: "wsp_1", WorkflowID: "wfl_1", RunID: "run_1", ActionID: "act_1", Attempt: 1,
		Event: "submission.created", Config: config, FormID: "frm_1", FormName: "Lead",
		SubmissionID: "sub_1", SubmittedAt: SubmittedAt,
		Fields: map[string]any{
			"fld_name": "Ada Lovelace", "fld_email": "ada@example.com", "fld_budget": "1500",
			"fld_tags": []string{"urgent", "b2b"},
		},
		Labels: map[string]string{
			"fld_name": "Full name", "fld_email": "Email", "fld_budget": "Budget", "fld_tags": "Tags",
		},
		IPHash: &ip, UserAgent: &ua, Referrer: &ref,
		Credentials: credentials,
	}
	in.Render = Renderer(in)
	return in
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)

// Renderer is a template renderer following the template rules of docs/adapters.md, standing in for the
// executor's: {{field_id}} and the submission variables, arrays joined with ", ", unknown
// names empty, values HTML-escaped when html is true.
func Renderer(in ports.ActionInput) func(string, bool) string {
	return func(tmpl string, asHTML bool) string {
		return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
			name := placeholder.FindStringSubmatch(m)[1]
			var v string
			switch name {
			case "submission_id":
				v = in.SubmissionID
			case "form_id":
				v = in.FormID
			case "form_name":
				v = in.FormName
			case "submitted_at":
				v = in.SubmittedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
			default:
				switch f := in.Fields[name].(type) {
				case string:
					v = f
				case []string:
					v = strings.Join(f, ", ")
				}
			}
			if asHTML {
				return html.EscapeString(v)
			}
			return v
		})
	}
}
