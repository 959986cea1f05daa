package forms_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// TestTemplatesCreateThroughTheUseCase: every starting point passes the create use case (the
// API's validation) and makes the form it promises.
func TestTemplatesCreateThroughTheUseCase(t *testing.T) {
	templates := form.Templates()
	var ids []string
	for _, tp := range templates {
		ids = append(ids, tp.ID)
	}
	if want := []string{"contact", "job_application", "event_registration", "feedback", "order_request"}; !slices.Equal(ids, want) {
		t.Fatalf("templates %v, want %v", ids, want)
	}
	for _, tp := range templates {
		t.Run(tp.ID, func(t *testing.T) {
			h := apptest.New()
			d := tp.Draft("")
			fv, err := h.App.Commands.CreateForm.Handle(ctx, forms.CreateForm{Draft: d})
			if err != nil {
				t.Fatalf("create from %s: %v", tp.ID, err)
			}
			f := fv.Form
			if f.Name() != tp.Name || f.Status() != form.StatusDraft || len(f.Fields()) != len(d.Fields) || tp.Summary == "" {
				t.Fatalf("form %q (%s) with %d fields, want %q with %d", f.Name(), f.Status(), len(f.Fields()), tp.Name, len(d.Fields))
			}
			if s := f.Settings(); s.ThankYouMessage == nil || !s.Spam.Honeypot {
				t.Fatalf("settings %+v: want a thank-you message and the default spam rules", s)
			}
			byKey := map[string]form.Field{}
			for _, fl := range f.Fields() {
				byKey[fl.Key] = fl
			}
			switch tp.ID {
			case "contact":
				if !byKey["email"].Required || byKey["email"].Type != form.TypeEmail || byKey["message"].Type != form.TypeTextarea {
					t.Fatalf("contact fields: %+v", f.Fields())
				}
			case "job_application":
				cv := byKey["cv"]
				if cv.Type != form.TypeFile || !cv.Required || cv.Page != 2 || !slices.Contains(cv.Accept, "application/pdf") || !form.Paged(f.Fields()) {
					t.Fatalf("the CV: %+v", cv)
				}
				if byKey["full_name"].Page != 1 || byKey["position"].Type != form.TypeDropdown {
					t.Fatalf("page 1: %+v", f.Fields())
				}
			case "event_registration":
				dinner, dietary := byKey["attending_dinner"], byKey["dietary_needs"]
				if dietary.ShowIf == nil || dietary.ShowIf.Conditions[0].FieldID != dinner.ID || dietary.ShowIf.Conditions[0].Value != "Yes" {
					t.Fatalf("dietary needs rule: %+v", dietary.ShowIf)
				}
				// The rule works: "No" skips the dietary questions, "Yes" shows them.
				no := submission.Skipped(f, map[string]submission.Input{dinner.ID: "No"})
				yes := submission.Skipped(f, map[string]submission.Input{dinner.ID: "Yes"})
				if !no[dietary.ID] || !no[byKey["dietary_other"].ID] || yes[dietary.ID] {
					t.Fatalf("skipped with No %v, with Yes %v", no, yes)
				}
			case "feedback":
				nps := byKey["recommend"]
				want := make([]string, 11)
				for i := range want {
					want[i] = strconv.Itoa(i)
				}
				if nps.Type != form.TypeRadio || !nps.Required || !slices.Equal(nps.Options, want) || byKey["reason"].Type != form.TypeTextarea {
					t.Fatalf("the NPS question: %+v", nps)
				}
			case "order_request":
				if byKey["quantity"].Type != form.TypeNumber || byKey["product"].Type != form.TypeDropdown || byKey["delivery_date"].Type != form.TypeDate {
					t.Fatalf("order fields: %+v", f.Fields())
				}
			}
			// A complete answer to the template's required questions is a valid submission.
			in := map[string]submission.Input{}
			for _, fl := range f.Fields() {
				if !fl.Required || fl.Type == form.TypeFile {
					continue
				}
				switch {
				case len(fl.Options) > 0:
					in[fl.ID] = fl.Options[0]
				case fl.Type == form.TypeCheckbox:
					in[fl.ID] = "true"
				case fl.Type == form.TypeEmail:
					in[fl.ID] = "ada@example.org"
				case fl.Type == form.TypeNumber:
					in[fl.ID] = "3"
				default:
					in[fl.ID] = "Something"
				}
			}
			for p := 1; p <= 2; p++ {
				if err := submission.CheckPage(f, in, p); err != nil {
					t.Fatalf("page %d of a complete answer: %v", p, err)
				}
			}
		})
	}
}

// TestTemplateDraftsAreCopies: a draft changed by one caller leaves the next one as it was, and
// a name given replaces the template's.
func TestTemplateDraftsAreCopies(t *testing.T) {
	tp, ok := form.TemplateByID("job_application")
	if !ok {
		t.Fatal("no job_application template")
	}
	d := tp.Draft("Hiring: backend engineer")
	if d.Name != "Hiring: backend engineer" {
		t.Fatalf("name %q", d.Name)
	}
	*d.Fields[0].Key = "changed"
	d.Fields[6].Accept[0] = "image/png"
	d.Settings.Spam.Honeypot = false
	again := tp.Draft("")
	if *again.Fields[0].Key != "full_name" || again.Fields[6].Accept[0] != "application/pdf" || !again.Settings.Spam.Honeypot || again.Name != "Job application" {
		t.Fatalf("the template changed with its copy: %+v", again)
	}
	if _, ok := form.TemplateByID("blank"); ok {
		t.Fatal("a blank form is no template")
	}
}
