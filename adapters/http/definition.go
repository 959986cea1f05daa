package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

// definitionProps are the properties of a form definition (forms as code).
var definitionProps = []string{"ref", "name", "description", "fields", "settings", "languages", "translations"}

// definitionJSON is a form as a portable document: fields by key, without IDs.
type definitionJSON struct {
	Ref         *string           `json:"ref"`
	Name        string            `json:"name"`
	Description *string           `json:"description"`
	Fields      []definitionField `json:"fields"`
	// Settings are the form's settings as a PUT takes them back: without the captcha's secret
	// (a PUT without it keeps the stored one) and without the uploaded logo.
	Settings *definitionSettings `json:"settings"`

	// Languages and Translations are the form's (languages.go).
	Languages    []string                       `json:"languages"`
	Translations map[string]formTranslationView `json:"translations"`
}

// definitionSettings are settingsJSON in the shape FormSettingsInput takes.
type definitionSettings struct {
	RedirectURL     *string             `json:"redirect_url"`
	ThankYouMessage *string             `json:"thank_you_message"`
	Spam            definitionSpam      `json:"spam"`
	Embed           embedJSON           `json:"embed"`
	Closing         closingJSON         `json:"closing"`
	AllowedOrigins  []string            `json:"allowed_origins"`
	Notifications   notificationsJSON   `json:"notifications"`
	Theme           definitionThemeJSON `json:"theme"`
	Partial         partialJSON         `json:"partial"`
}

type definitionSpam struct {
	Honeypot       bool                   `json:"honeypot"`
	MinFillSeconds int                    `json:"min_fill_seconds"`
	ProofOfWork    bool                   `json:"proof_of_work"`
	Captcha        *definitionCaptchaJSON `json:"captcha"`
}

type definitionCaptchaJSON struct {
	Provider string `json:"provider"`
	SiteKey  string `json:"site_key"`
}

type definitionThemeJSON struct {
	Accent     *string `json:"accent"`
	Appearance string  `json:"appearance"`
}

func presentDefinitionSettings(formID string, st form.Settings) *definitionSettings {
	s := presentSettings(formID, st)
	out := &definitionSettings{RedirectURL: s.RedirectURL, ThankYouMessage: s.ThankYouMessage, Embed: s.Embed, Closing: s.Closing,
		AllowedOrigins: s.AllowedOrigins, Notifications: s.Notifications, Theme: definitionThemeJSON{Accent: s.Theme.Accent, Appearance: s.Theme.Appearance},
		Spam: definitionSpam{Honeypot: s.Spam.Honeypot, MinFillSeconds: s.Spam.MinFillSeconds, ProofOfWork: s.Spam.ProofOfWork}, Partial: s.Partial}
	if c := s.Spam.Captcha; c != nil {
		out.Spam.Captcha = &definitionCaptchaJSON{Provider: c.Provider, SiteKey: c.SiteKey}
	}
	return out
}

// definitionField is a field without its ID; show_if conditions name fields by key.
type definitionField struct {
	Key         string      `json:"key"`
	Label       string      `json:"label"`
	Type        string      `json:"type"`
	Required    bool        `json:"required"`
	Options     []string    `json:"options"`
	Placeholder *string     `json:"placeholder"`
	Help        *string     `json:"help"`
	Accept      *[]string   `json:"accept,omitempty"`
	MaxFileSize *int64      `json:"max_file_size,omitempty"`
	Hidden      bool        `json:"hidden"`
	Page        int         `json:"page"`
	ShowIf      *showIfView `json:"show_if"`

	Translations map[string]fieldTranslationView `json:"translations"`
	Scores       []float64                       `json:"scores,omitempty"`
}

func presentDefinition(f *form.Form) definitionJSON {
	keys := map[string]string{}
	for _, fl := range f.Fields() {
		keys[fl.ID] = fl.Key
	}
	out := definitionJSON{Ref: f.Ref(), Name: f.Name(), Description: f.Description(), Fields: []definitionField{},
		Settings: presentDefinitionSettings(f.ID(), f.Settings())}
	out.Languages, out.Translations = presentLanguages(f)
	for _, fl := range f.Fields() {
		p := presentField(fl)
		d := definitionField{Key: p.Key, Label: p.Label, Type: p.Type, Required: p.Required, Options: p.Options, Placeholder: p.Placeholder,
			Help: p.Help, Accept: p.Accept, MaxFileSize: p.MaxFileSize, Hidden: p.Hidden, Page: p.Page, ShowIf: p.ShowIf, Translations: p.Translations, Scores: p.Scores}
		if d.ShowIf != nil {
			for i := range d.ShowIf.Conditions {
				d.ShowIf.Conditions[i].FieldID = keys[d.ShowIf.Conditions[i].FieldID]
			}
		}
		out.Fields = append(out.Fields, d)
	}
	return out
}

func (a *api) getFormDefinition(c *gin.Context) {
	v, err := a.App.Queries.GetForm.Handle(c.Request.Context(), forms.GetForm{ID: c.Param("id")})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentDefinition(v.Form))
}

// planJSON is what applying a definition does (dry run) or did.
type planJSON struct {
	Action            string   `json:"action"`
	DryRun            bool     `json:"dry_run"`
	Ref               string   `json:"ref"`
	FormID            *string  `json:"form_id"`
	Name              bool     `json:"name_changed"`
	Description       bool     `json:"description_changed"`
	Settings          bool     `json:"settings_changed"`
	Added             []string `json:"added"`
	Removed           []string `json:"removed"`
	Relabelled        []string `json:"relabelled"`
	Changed           []string `json:"changed"`
	Unchanged         []string `json:"unchanged"`
	StoredSubmissions int64    `json:"stored_submissions"`
	// FieldChanges says what changes on each changed or relabelled field, by key.
	FieldChanges map[string]fieldChangeJSON `json:"field_changes"`
	// RemovedAnswers counts the stored answers of each removed field, by key.
	RemovedAnswers map[string]int64 `json:"removed_answers"`
	Reordered      bool             `json:"reordered"`
	Definition     *definitionJSON  `json:"definition,omitempty"`
}

// fieldChangeJSON is what changes on one field: the aspects (label, type, options, logic...)
// and the options it gains and loses.
type fieldChangeJSON struct {
	Aspects        []string `json:"aspects"`
	OptionsAdded   []string `json:"options_added"`
	OptionsRemoved []string `json:"options_removed"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *api) putFormByRef(c *gin.Context) {
	var vs domain.Violations
	ref := c.Param("ref")
	o, ok := a.readBody(c, &vs, definitionProps, nil)
	if !ok {
		return
	}
	if r, present := o.str("ref"); present && r != ref {
		vs.Add("ref", "invalid_value", "ref must be the ref of the URL ("+ref+") or left out")
	}
	var d forms.Definition
	name, present := o.str("name")
	if !present {
		vs.Add("name", "required", "name is required")
	}
	d.Name = name
	d.Description, _ = o.nullableStr("description")
	d.Fields = fieldSpecs(o)
	d.Settings = formSettings(o, a.App.FormLimits)
	d.Languages, d.Translations = readLanguages(o)
	for i, s := range d.Fields {
		if s.ID != "" {
			vs.Add(o.at("fields")+"["+itoa(i)+"].id", "not_allowed", "a definition names fields by key, without IDs")
		}
		if s.Key == nil {
			vs.Add(o.at("fields")+"["+itoa(i)+"].key", "required", "key is required in a definition")
		}
	}
	dry, err := boolQuery(c, "dry_run")
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	allow, err := boolQuery(c, "allow_type_change")
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	if err := vs.Err(); err != nil {
		fail(c, a.Logger, err)
		return
	}
	plan, err := a.App.Commands.ApplyFormDefinition.Handle(c.Request.Context(), forms.ApplyDefinition{Ref: ref, Definition: d, DryRun: dry, AllowTypeChange: allow})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	out := planJSON{Action: plan.Action, DryRun: dry, Ref: ref, Name: plan.Name, Description: plan.Description, Settings: plan.Settings,
		Added: nonNil(plan.Added), Removed: nonNil(plan.Removed), Relabelled: nonNil(plan.Relabelled), Changed: nonNil(plan.Changed),
		Unchanged: nonNil(plan.Unchanged), StoredSubmissions: plan.StoredSubmissions, Reordered: plan.Reordered,
		FieldChanges: map[string]fieldChangeJSON{}, RemovedAnswers: map[string]int64{}}
	for key, aspects := range plan.Aspects {
		out.FieldChanges[key] = fieldChangeJSON{Aspects: aspects, OptionsAdded: nonNil(plan.OptionsAdded[key]), OptionsRemoved: nonNil(plan.OptionsRemoved[key])}
	}
	for _, key := range plan.Removed {
		out.RemovedAnswers[key] = plan.RemovedAnswers[key]
	}
	if plan.Form != nil {
		id := plan.Form.ID()
		out.FormID = &id
		if !dry {
			def := presentDefinition(plan.Form)
			out.Definition = &def
		}
	}
	status := http.StatusOK
	if plan.Action == forms.PlanCreate && !dry {
		status = http.StatusCreated
	}
	c.JSON(status, out)
}

func boolQuery(c *gin.Context, name string) (bool, error) {
	s, ok := c.GetQuery(name)
	switch {
	case !ok || s == "false":
		return false, nil
	case s == "true":
		return true, nil
	}
	return false, badRequest(name + " must be true or false")
}
