// Package form is the form aggregate: its fields, its status and the rules that guard them.
package form

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
)

// Status is a form's lifecycle state.
type Status string

// The three statuses.
const (
	StatusDraft     Status = "draft"
	StatusPublished Status = "published"
	StatusArchived  Status = "archived"
)

// ParseStatus accepts one of the three status names.
func ParseStatus(s string) (Status, bool) {
	switch st := Status(s); st {
	case StatusDraft, StatusPublished, StatusArchived:
		return st, true
	}
	return "", false
}

// Length caps in characters (Unicode code points).
const (
	maxName        = 200
	maxDescription = 5000
)

// Form is the aggregate root.
type Form struct {
	id          string
	workspaceID string
	ref         *string
	name        string
	description *string
	status      Status
	fields      []Field
	settings    Settings
	// removed are the fields taken off the form, remembered so their stored answers keep a name.
	removed []RemovedField
	// version is 1 at creation and one more at every change to fields.
	version   int
	createdAt time.Time
	updatedAt time.Time
	// languages are the form's language tags, the default first (nil: one language);
	// translations its own text in the others (languages.go).
	languages    []string
	translations map[string]FormTranslation
}

// Draft is what a client asks for when creating a form.
type Draft struct {
	// Ref is the form's stable name for forms as code; nil: none.
	Ref         *string
	Name        string
	Description *string
	Fields      []FieldSpec
	// Settings are the public form settings; nil uses DefaultSettings.
	Settings *Settings
	// Languages are BCP 47 tags, the default first; Translations the form's own text in the others.
	Languages    []string
	Translations map[string]FormTranslation
}

// New checks a draft and builds a new form in status draft.
func New(id, workspaceID string, d Draft, newFieldID func() string, lim Limits, now time.Time) (*Form, error) {
	var vs domain.Violations
	name := checkName(&vs, d.Name)
	checkRef(&vs, d.Ref)
	checkDescription(&vs, d.Description)
	fields, err := buildFields(d.Fields, nil, newFieldID, lim)
	if err != nil {
		vs = append(vs, err.(*domain.ValidationError).Violations...)
	}
	settings := DefaultSettings()
	if d.Settings != nil {
		ds := *d.Settings
		ds.Theme.Logo = nil // a new form has no logo yet: SetLogo adds one
		settings, err = checkSettings(ds, lim)
		if err != nil {
			vs = append(vs, err.(*domain.ValidationError).Violations...)
		}
	}
	vs = append(vs, checkNotificationFields(settings.Notifications, fields)...)
	checkClosingField(&vs, settings.Closing, fields)
	languages := checkLanguages(&vs, d.Languages)
	fields = checkFieldTranslations(&vs, fields, languages)
	translations := checkFormTranslations(&vs, d.Translations, languages)
	checkThankYouRecall(&vs, settings.ThankYouMessage, fields)
	if err := vs.Err(); err != nil {
		return nil, err
	}
	now = now.UTC()
	return &Form{
		id: id, workspaceID: workspaceID, ref: d.Ref, name: name, description: d.Description,
		status: StatusDraft, fields: fields, settings: settings, version: 1, createdAt: now, updatedAt: now,
		languages: languages, translations: translations,
	}, nil
}

// UnmarshalWithSettingsFromDatabase rebuilds a stored form and its settings without re-checking them.
func UnmarshalWithSettingsFromDatabase(id, workspaceID, name string, description *string, status Status, fields []Field, settings Settings, createdAt, updatedAt time.Time) *Form {
	return &Form{id: id, workspaceID: workspaceID, name: name, description: description, status: status,
		fields: storedFields(fields), settings: settings, version: 1, createdAt: createdAt.UTC(), updatedAt: updatedAt.UTC()}
}

// sameFields reports whether two field lists define the same form (an empty list and a nil
// one are the same): anything else is a new version.
func sameFields(a, b []Field) bool {
	if len(a) != len(b) {
		return false
	}
	norm := func(f Field) Field {
		if len(f.Options) == 0 {
			f.Options = nil
		}
		if len(f.Accept) == 0 {
			f.Accept = nil
		}
		if len(f.Translations) == 0 {
			f.Translations = nil
		}
		if len(f.Scores) == 0 {
			f.Scores = nil
		}
		if f.ShowIf != nil && len(f.ShowIf.Conditions) == 0 {
			rule := *f.ShowIf
			rule.Conditions = nil
			f.ShowIf = &rule
		}
		return f
	}
	for i := range a {
		if !reflect.DeepEqual(norm(a[i]), norm(b[i])) {
			return false
		}
	}
	return true
}

// WithVersionFromDatabase gives a stored form its stored version (the repository's rebuild,
// after UnmarshalWithSettingsFromDatabase); a version below 1 is read as 1.
func (f *Form) WithVersionFromDatabase(version int) *Form {
	f.version = max(version, 1)
	return f
}

// Patch holds the properties a PATCH included; nil means "leave as is".
type Patch struct {
	// Ref sets (or, pointing at nil, clears) the form's ref.
	Ref         **string
	Name        *string
	Description **string
	Status      *string
	Fields      *[]FieldSpec
	// Settings replace the public form settings; a captcha with an empty Secret keeps the stored
	// secret, and the stored logo stays whatever Settings.Theme.Logo holds (SetLogo changes it).
	Settings *Settings
	// Languages replace the form's languages; translations into a language it drops go too.
	Languages *[]string
	// Translations replace the form's own translations.
	Translations *map[string]FormTranslation
}

// Apply changes only the included properties and reports whether the form became published.
// Nothing changes when any property is invalid.
func (f *Form) Apply(p Patch, newFieldID func() string, lim Limits, now time.Time) (published bool, err error) {
	var vs domain.Violations
	next := *f
	if p.Name != nil {
		next.name = checkName(&vs, *p.Name)
	}
	if p.Ref != nil {
		checkRef(&vs, *p.Ref)
		next.ref = *p.Ref
	}
	if p.Description != nil {
		checkDescription(&vs, *p.Description)
		next.description = *p.Description
	}
	if p.Status != nil {
		st, ok := ParseStatus(*p.Status)
		if !ok {
			vs.Add("status", "invalid_value", "status must be one of draft, published, archived")
		}
		next.status = st
	}
	if p.Fields != nil {
		fields, err := buildFields(*p.Fields, f.fields, newFieldID, lim)
		if err != nil {
			vs = append(vs, err.(*domain.ValidationError).Violations...)
		}
		next.fields = fields
		if !sameFields(f.fields, fields) {
			next.version = f.version + 1
		}
		if gone := removedBy(f.fields, fields, now.UTC()); len(gone) > 0 {
			next.removed = append(append([]RemovedField(nil), f.removed...), gone...)
		}
	}
	if p.Settings != nil {
		ns := *p.Settings
		if c := ns.Spam.Captcha; c != nil && c.Secret == "" && f.settings.Spam.Captcha != nil && f.settings.Spam.Captcha.Provider == c.Provider {
			kept := *c
			kept.Secret = f.settings.Spam.Captcha.Secret
			ns.Spam.Captcha = &kept
		}
		ns.Theme.Logo = f.settings.Theme.Logo
		ns, err := checkSettings(ns, lim)
		if err != nil {
			vs = append(vs, err.(*domain.ValidationError).Violations...)
		}
		next.settings = ns
	}
	if p.Settings != nil || p.Fields != nil {
		vs = append(vs, checkNotificationFields(next.settings.Notifications, next.fields)...)
		checkThankYouRecall(&vs, next.settings.ThankYouMessage, next.fields)
	}
	checkClosingField(&vs, next.settings.Closing, next.fields)
	applyLanguages(&vs, &next, p)
	if next.version == f.version && !sameFields(f.fields, next.fields) {
		next.version = f.version + 1
	}
	if err := vs.Err(); err != nil {
		return false, err
	}
	published = next.status == StatusPublished && f.status != StatusPublished
	next.updatedAt = now.UTC()
	*f = next
	return published, nil
}

// AcceptsAPISubmissions allows drafts (to test a form) and published forms.
func (f *Form) AcceptsAPISubmissions() error {
	if f.status == StatusArchived {
		return domain.ErrFormClosed
	}
	return nil
}

// AcceptsPublicSubmissions allows published forms only.
func (f *Form) AcceptsPublicSubmissions() error {
	if f.status != StatusPublished {
		return domain.ErrFormClosed
	}
	return nil
}

// Field returns the field with the given ID.
func (f *Form) Field(id string) (Field, bool) {
	for _, fl := range f.fields {
		if fl.ID == id {
			return fl, true
		}
	}
	return Field{}, false
}

// FieldByName returns the field a posted name means: a field ID or a field key.
func (f *Form) FieldByName(name string) (Field, bool) {
	for _, fl := range f.fields {
		if fl.ID == name || fl.Key == name {
			return fl, true
		}
	}
	return Field{}, false
}

// storedFields fills what fields stored before keys and pages lack: default keys, page 1.
func storedFields(fields []Field) []Field {
	fields = fillKeys(fields)
	for i := range fields {
		if fields[i].Page < 1 {
			fields[i].Page = 1
		}
	}
	return fields
}

// ID returns the form ID.
func (f *Form) ID() string { return f.id }

// WorkspaceID returns the owning workspace.
func (f *Form) WorkspaceID() string { return f.workspaceID }

// Name returns the form's name.
func (f *Form) Name() string { return f.name }

// Description returns the optional description.
func (f *Form) Description() *string { return f.description }

// Status returns the lifecycle state.
func (f *Form) Status() Status { return f.status }

// Fields returns a copy of the fields in order.
func (f *Form) Fields() []Field {
	out := make([]Field, len(f.fields))
	for i, fl := range f.fields {
		fl.Options = append([]string(nil), fl.Options...)
		fl.Accept = append([]string(nil), fl.Accept...)
		fl.Translations = maps.Clone(fl.Translations)
		if fl.Scores != nil {
			fl.Scores = append([]float64(nil), fl.Scores...)
		}
		if fl.ShowIf != nil {
			rule := *fl.ShowIf
			rule.Conditions = append([]Condition(nil), rule.Conditions...)
			fl.ShowIf = &rule
		}
		out[i] = fl
	}
	return out
}

// Version returns the form's version: 1 at creation, one more at every change to the fields.
func (f *Form) Version() int { return f.version }

// CreatedAt returns the creation time.
func (f *Form) CreatedAt() time.Time { return f.createdAt }

// UpdatedAt returns the time of the last change.
func (f *Form) UpdatedAt() time.Time { return f.updatedAt }

// checkName trims the name and checks that it is 1 to 200 characters of valid text.
func checkName(vs *domain.Violations, s string) string {
	s = strings.TrimSpace(s)
	if !text.Field(vs, "name", s) {
		return s
	}
	if n := utf8.RuneCountInString(s); n < 1 || n > maxName {
		vs.Add("name", "invalid_length", fmt.Sprintf("name must be 1 to %d characters", maxName))
	}
	return s
}

// checkDescription checks that a description is valid text of at most 5,000 characters.
func checkDescription(vs *domain.Violations, d *string) {
	if d == nil || !text.Field(vs, "description", *d) {
		return
	}
	if utf8.RuneCountInString(*d) > maxDescription {
		vs.Add("description", "too_long", fmt.Sprintf("description must be at most %d characters", maxDescription))
	}
}

// RestoreFields makes fields, the fields of an earlier version, the form's fields again, as a
// new version (field IDs kept). An archived form refuses (domain.ErrConflict); the form's
// settings must still fit the fields (a notification or closing rule naming a field the
// version lacks is a validation error). Restoring the current fields changes nothing.
func (f *Form) RestoreFields(fields []Field, now time.Time) error {
	if f.status == StatusArchived {
		return domain.Conflict("the form is archived: set its status to draft or published before restoring a version")
	}
	if sameFields(f.fields, fields) {
		return nil
	}
	restored := storedFields(append([]Field(nil), fields...))
	restored, _ = dropTranslations(restored, f.languages)
	var vs domain.Violations
	vs = append(vs, checkNotificationFields(f.settings.Notifications, restored)...)
	checkClosingField(&vs, f.settings.Closing, restored)
	if err := vs.Err(); err != nil {
		return err
	}
	now = now.UTC()
	back := make(map[string]bool, len(restored))
	for _, fl := range restored {
		back[fl.ID] = true
	}
	var removed []RemovedField
	for _, r := range f.removed {
		if !back[r.ID] {
			removed = append(removed, r)
		}
	}
	f.removed = append(removed, removedBy(f.fields, restored, now)...)
	f.fields = restored
	f.version++
	f.updatedAt = now
	return nil
}
