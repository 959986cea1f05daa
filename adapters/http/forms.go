package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

var (
	formProps          = []string{"name", "description", "fields", "settings", "ref", "status"}
	formReadOnly       = []string{"id", "version", "created_at", "updated_at", "submission_count", "closed_reason"}
	fieldProps         = []string{"id", "label", "type", "required", "options", "placeholder", "help", "accept", "max_file_size", "key", "hidden", "page", "show_if", "translations", "scores"}
	submissionProps    = []string{"data"}
	submissionReadOnly = []string{"id", "form_id", "form_version", "metadata", "submitted_at", "updated_at", "created_at"}
)

// pageOf reads limit and cursor for the list identified by list.
func (a *api) pageOf(c *gin.Context, list string) (ports.Page, error) {
	page := ports.Page{Limit: 20}
	if s, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return page, badRequest("limit must be an integer from 1 to 100")
		}
		page.Limit = n
	}
	if s, ok := c.GetQuery("cursor"); ok {
		pos, err := a.cursors.decode(list, s)
		if err != nil {
			return page, err
		}
		page.After = pos
	}
	return page, nil
}

func (a *api) listForms(c *gin.Context) {
	p := principal(c)
	var status *form.Status
	list := "forms:" + p.WorkspaceID
	if s, ok := c.GetQuery("status"); ok {
		st, valid := form.ParseStatus(s)
		if !valid {
			fail(c, a.Logger, badRequest("status must be one of draft, published, archived"))
			return
		}
		status = &st
		list += ":" + s
	}
	listPage(a, c, list, func(ctx context.Context, page ports.Page) ([]forms.FormView, bool, error) {
		return a.App.Queries.ListForms.Handle(ctx, forms.ListForms{Status: status, Page: page})
	}, func(v forms.FormView) (any, ports.Position) {
		return presentForm(v, false, a.Clock.Now()), ports.Position{CreatedAt: v.Form.CreatedAt(), ID: v.Form.ID()}
	})
}

func (a *api) createForm(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, append(slices.Clone(formProps[:5]), languageProps...), append(formReadOnly, "status"))
	if !ok {
		return
	}
	var d form.Draft
	name, present := o.str("name")
	if !present {
		vs.Add("name", "required", "name is required")
	}
	d.Name = name
	d.Description, _ = o.nullableStr("description")
	d.Ref, _ = o.nullableStr("ref")
	d.Fields = fieldSpecs(o)
	d.Settings = formSettings(o, a.App.FormLimits)
	if langs, tr := readLanguages(o); langs != nil || tr != nil {
		d.Languages = deref(langs)
		d.Translations = deref(tr)
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	v, err := a.App.Commands.CreateForm.Handle(c.Request.Context(), forms.CreateForm{Draft: d})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusCreated, presentForm(v, true, a.Clock.Now()))
}

// fieldSpecs reads the fields array; nil when absent.
func fieldSpecs(o object) []form.FieldSpec {
	items, present := o.objects("fields")
	if !present {
		return nil
	}
	specs := make([]form.FieldSpec, 0, len(items))
	for _, it := range items {
		it.allow(fieldProps, nil)
		var s form.FieldSpec
		s.ID, _ = it.str("id")
		s.Label, _ = it.str("label")
		if !it.has("label") {
			it.vs.Add(it.at("label"), "required", "label is required")
		}
		s.Type, _ = it.str("type")
		if !it.has("type") {
			it.vs.Add(it.at("type"), "required", "type is required")
		}
		s.Required, _ = it.boolean("required")
		if !it.isNull("options") {
			s.Options, _ = it.strings("options")
		}
		s.Placeholder, _ = it.nullableStr("placeholder")
		s.Help, _ = it.nullableStr("help")
		if !it.isNull("accept") {
			s.Accept, _ = it.strings("accept")
		}
		if !it.isNull("max_file_size") {
			if n, present := it.integer("max_file_size"); present {
				size := int64(n)
				s.MaxFileBytes = &size
			}
		}
		if k, present := it.str("key"); present && !it.isNull("key") {
			s.Key = &k
		}
		s.Hidden, _ = it.boolean("hidden")
		if !it.isNull("page") {
			if n, present := it.integer("page"); present {
				s.Page = &n
			}
		}
		if !it.isNull("show_if") {
			s.ShowIf = showIfSpec(it)
		}
		s.Translations = readFieldTranslations(it)
		s.Scores = it.scores("scores")
		specs = append(specs, s)
	}
	return specs
}

// showIfSpec reads a field's display rule; nil when absent.
func showIfSpec(o object) *form.ShowIfSpec {
	r, present := o.object("show_if")
	if !present || r.props == nil {
		return nil
	}
	r.allow([]string{"match", "conditions"}, nil)
	var spec form.ShowIfSpec
	spec.Match, _ = r.str("match")
	conds, _ := r.objects("conditions")
	for _, c := range conds {
		c.allow([]string{"field_id", "operator", "value"}, nil)
		var cs form.ConditionSpec
		cs.FieldID, _ = c.str("field_id")
		cs.Operator, _ = c.str("operator")
		cs.Value, cs.HasValue = c.scalar("value")
		spec.Conditions = append(spec.Conditions, cs)
	}
	return &spec
}

func (a *api) getForm(c *gin.Context) {
	v, err := a.App.Queries.GetForm.Handle(c.Request.Context(), forms.GetForm{ID: c.Param("id")})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentForm(v, true, a.Clock.Now()))
}

func (a *api) updateForm(c *gin.Context) {
	var vs domain.Violations
	o, ok := a.readBody(c, &vs, append(slices.Clone(formProps), languageProps...), formReadOnly)
	if !ok {
		return
	}
	var p form.Patch
	if name, present := o.str("name"); present {
		p.Name = &name
	}
	if desc, present := o.nullableStr("description"); present {
		p.Description = &desc
	}
	if ref, present := o.nullableStr("ref"); present {
		p.Ref = &ref
	}
	if st, present := o.str("status"); present {
		p.Status = &st
	}
	if o.has("fields") {
		specs := fieldSpecs(o)
		if specs == nil {
			specs = []form.FieldSpec{}
		}
		p.Fields = &specs
	}
	p.Settings = formSettings(o, a.App.FormLimits)
	p.Languages, p.Translations = readLanguages(o)
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	v, err := a.App.Commands.UpdateForm.Handle(c.Request.Context(), forms.UpdateForm{ID: c.Param("id"), Patch: p})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentForm(v, true, a.Clock.Now()))
}

func (a *api) deleteForm(c *gin.Context) {
	if err := a.App.Commands.DeleteForm.Handle(c.Request.Context(), forms.DeleteForm{ID: c.Param("id")}); err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.Status(http.StatusNoContent)
}
