package submission

import (
	"fmt"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

// Draft is a public form post checked against its form, once: the form accepts it, every
// answer follows its field, and every file follows its field's rules and the post's file
// limits. Files are stored after that (their object keys attached with Attach), then Submit
// makes the submission without checking anything again.
type Draft struct {
	form    *form.Form
	data    map[string]Value
	meta    Metadata
	files   []PendingFile
	pending map[string]bool
}

// PendingFile is one file of a draft still to store: its field, what the client sent and the
// content type to store it with.
type PendingFile struct {
	FieldID     string
	Info        FileInfo
	ContentType string
}

// Prepare checks a public post. input holds the answers, each field named by its ID or its
// key; a file field's answer is the []FileInfo of its uploads (anything else in a file field
// is invalid_value: public file fields take uploads only). Every broken rule is reported in
// one *domain.ValidationError.
func Prepare(f *form.Form, input map[string]Input, meta Metadata, limits FileLimits) (*Draft, error) {
	meta.Source = SourceForm
	if err := f.AcceptsPublicSubmissions(); err != nil {
		return nil, err
	}
	return prepare(f, input, meta, limits)
}

// Check applies Prepare's checks of the answers and files to a post whatever the form's status
// and closing rules, and keeps nothing: the builder's preview answers with it.
func Check(f *form.Form, input map[string]Input, limits FileLimits) error {
	_, err := prepare(f, input, Metadata{Source: SourceForm}, limits)
	return err
}

func prepare(f *form.Form, input map[string]Input, meta Metadata, limits FileLimits) (*Draft, error) {
	fields := f.Fields()
	input, vs := byFieldID(fields, input)
	counts := map[string]int{}
	var files []PendingFile
	skipped := skippedFields(fields, input, true)
	for _, fl := range fields {
		infos, ok := input[fl.ID].([]FileInfo)
		if !ok || fl.Type != form.TypeFile || skipped[fl.ID] {
			continue // a field skipped by its display rule stores nothing
		}
		counts[fl.ID] = len(infos)
		for _, fi := range infos {
			ct, v := CheckFile(fl, fi)
			if v != nil {
				vs = append(vs, *v)
				continue
			}
			files = append(files, PendingFile{FieldID: fl.ID, Info: fi, ContentType: ct})
		}
	}
	vs = append(limits.Check(fields, counts), vs...)
	data, err := validate(fields, input, true, vs)
	if err != nil {
		return nil, err
	}
	pending := map[string]bool{}
	for _, p := range files {
		pending[p.FieldID] = true
	}
	meta.Score = Score(fields, data)
	return &Draft{form: f, data: data, meta: meta, files: files, pending: pending}, nil
}

// Form returns the form the draft answers.
func (d *Draft) Form() *form.Form { return d.form }

// Files returns the files still to store, in the order of the form's fields.
func (d *Draft) Files() []PendingFile { return append([]PendingFile(nil), d.files...) }

// Attach records the object keys of a field's stored files, in the order of Files.
func (d *Draft) Attach(fieldID string, keys []string) error {
	n := 0
	for _, p := range d.files {
		if p.FieldID == fieldID {
			n++
		}
	}
	if !d.pending[fieldID] || n != len(keys) {
		return fmt.Errorf("attach %d files to field %s, which has %d pending", len(keys), fieldID, n)
	}
	d.data[fieldID] = List(keys)
	delete(d.pending, fieldID)
	return nil
}

// Submit makes the submission, received at now, once every file is attached.
func (d *Draft) Submit(id string, now time.Time) (*Submission, error) {
	if len(d.pending) > 0 {
		return nil, fmt.Errorf("submit a draft with %d fields of files not stored", len(d.pending))
	}
	now = now.UTC()
	data := make(map[string]Value, len(d.data))
	for k, v := range d.data {
		data[k] = v
	}
	return &Submission{id: id, workspaceID: d.form.WorkspaceID(), formID: d.form.ID(), formVersion: d.form.Version(), data: data, metadata: d.meta, submittedAt: now, updatedAt: now,
		emails: EmailAnswers(d.form.Fields(), data), emailsKnown: true}, nil
}

func hasPendingFiles(input map[string]Input) bool {
	for _, v := range input {
		if _, ok := v.([]FileInfo); ok {
			return true
		}
	}
	return false
}

// skippedFields are the fields whose display rule does not hold of the input (nil when the
// form has no rules). Rules test canonical answers; an answer that does not parse counts as
// missing (its own error is reported when its field is shown).
func skippedFields(fields []form.Field, input map[string]Input, public bool) map[string]bool {
	if !form.HasLogic(fields) {
		return nil
	}
	byID := make(map[string]form.Field, len(fields))
	for _, f := range fields {
		byID[f.ID] = f
	}
	return form.Skipped(fields, func(id string) (form.Answer, bool) {
		f, ok := byID[id]
		if !ok {
			return form.Answer{}, false
		}
		v, ok, ferr := parse(f, input[id], public)
		if !ok || ferr != nil {
			return form.Answer{}, false
		}
		return form.Answer{Items: v.Strings(), List: v.IsList()}, true
	})
}

// CheckPage checks the answers to the fields of one page of a public form, as the
// respondent moves to the next page: fields skipped by their display rules are not checked,
// and file fields (which only the last page holds) are left to the final post. Nothing is
// kept: the final post is checked whole by Prepare.
func CheckPage(f *form.Form, input map[string]Input, page int) error {
	fields := f.Fields()
	skipped := skippedFields(fields, input, true)
	var vs domain.Violations
	for _, fl := range fields {
		if fl.Page != page || skipped[fl.ID] || fl.Type == form.TypeFile {
			continue
		}
		_, ok, ferr := parse(fl, input[fl.ID], true)
		switch {
		case ferr != nil:
			vs.Add(fl.ID, ferr.code, fl.Label+": "+ferr.message)
		case !ok && fl.Required:
			vs.Add(fl.ID, errRequired.code, fl.Label+": "+errRequired.message)
		}
	}
	return vs.Err()
}

// Skipped returns the IDs of the fields a public post's answers skip by display rule.
func Skipped(f *form.Form, input map[string]Input) map[string]bool {
	return skippedFields(f.Fields(), input, true)
}
