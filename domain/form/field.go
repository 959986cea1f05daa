package form

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
)

// FieldType is one of the nine input kinds.
type FieldType string

// The nine field types.
const (
	TypeText     FieldType = "text"
	TypeEmail    FieldType = "email"
	TypeNumber   FieldType = "number"
	TypeDropdown FieldType = "dropdown"
	TypeCheckbox FieldType = "checkbox"
	TypeRadio    FieldType = "radio"
	TypeTextarea FieldType = "textarea"
	TypeFile     FieldType = "file"
	TypeDate     FieldType = "date"
)

// ParseFieldType accepts one of the nine type names.
func ParseFieldType(s string) (FieldType, bool) {
	switch t := FieldType(s); t {
	case TypeText, TypeEmail, TypeNumber, TypeDropdown, TypeCheckbox, TypeRadio, TypeTextarea, TypeFile, TypeDate:
		return t, true
	}
	return "", false
}

// Field is one question of a form. It is a value object: forms build and check it.
type Field struct {
	ID          string
	Label       string
	Type        FieldType
	Required    bool
	Options     []string
	Placeholder *string
	// Help is plain text shown under the label; nil when the field has none.
	Help *string
	// Accept lists the content types a file field takes ("application/pdf", "image/*"); empty: any.
	Accept []string
	// MaxFileBytes bounds each uploaded file of a file field; 0: the server's default.
	MaxFileBytes int64
	// Key is the field's stable machine name, unique in the form (templates, prefill, exports).
	Key string
	// Hidden fields are not shown to respondents; the page URL's ?<key>= fills them.
	Hidden bool
	// Page is the 1-based page the field is on.
	Page int
	// ShowIf, when set, shows the field only when its rule holds of earlier answers.
	ShowIf *ShowIf
	// Translations are the field's text in the form's other languages (languages.go).
	Translations map[string]FieldTranslation
	// Scores are the choice field's scores, one per option; nil: none (see scores.go).
	Scores []float64
}

// Multiple reports whether the field holds a list of values (checkbox with options, file).
func (f Field) Multiple() bool {
	return (f.Type == TypeCheckbox && len(f.Options) > 0) || f.Type == TypeFile
}

// HasOption reports whether v is one of the field's options.
func (f Field) HasOption(v string) bool {
	for _, o := range f.Options {
		if o == v {
			return true
		}
	}
	return false
}

// FieldSpec is a field as a client describes it; ID is empty for a new field.
type FieldSpec struct {
	ID          string
	Label       string
	Type        string
	Required    bool
	Options     []string
	Placeholder *string
	Help        *string
	Accept      []string
	// MaxFileBytes is nil when the client did not set it.
	MaxFileBytes *int64
	// Key is nil when the client did not set it: an existing field keeps its key, a new one
	// gets its label's default.
	Key    *string
	Hidden bool
	// Page is nil for the first page.
	Page   *int
	ShowIf *ShowIfSpec
	// Translations by language tag; the form checks them against its languages.
	Translations map[string]FieldTranslation
	// Scores is nil when the client did not set them: an existing choice field keeps its
	// scores; an empty list removes them.
	Scores *[]float64
}

// Limits bound the size of a form.
type Limits struct {
	MaxFields  int
	MaxOptions int
	// CaptchaProviders are the captcha providers settings may name: which ones exist is a fact
	// of the build (extensions add providers), not a rule of the domain, so it comes in with
	// the other limits set at startup and the domain stays free of any registry. Nil: the
	// providers Formward ships.
	CaptchaProviders []CaptchaProvider
}

// DefaultLimits are the documented limits (docs/api.md, "Counts").
var DefaultLimits = Limits{MaxFields: 200, MaxOptions: 500}

// Length caps of a field's texts, in characters (Unicode code points).
const (
	maxLabel       = 500
	maxOption      = 500
	maxPlaceholder = 500
	maxHelp        = 1000
)

// buildFields checks every spec and returns the fields, reusing IDs from existing when allowed.
func buildFields(specs []FieldSpec, existing []Field, newID func() string, lim Limits) ([]Field, error) {
	var vs domain.Violations
	if len(specs) > lim.MaxFields {
		vs.Add("fields", "too_many", fmt.Sprintf("a form holds at most %d fields", lim.MaxFields))
		return nil, vs.Err()
	}
	known := make(map[string]bool, len(existing))
	prevScores := make(map[string][]float64)
	for _, f := range existing {
		known[f.ID] = true
		if len(f.Scores) > 0 {
			prevScores[f.ID] = f.Scores
		}
	}
	seen := make(map[string]bool, len(specs))
	out := make([]Field, 0, len(specs))
	for i, s := range specs {
		path := fmt.Sprintf("fields[%d]", i)
		f := Field{ID: s.ID, Required: s.Required, Placeholder: s.Placeholder, Help: s.Help, Hidden: s.Hidden, Translations: s.Translations}
		if s.ID != "" {
			if !known[s.ID] {
				vs.Add(path+".id", "unknown_field", "field "+s.ID+" does not belong to this form")
			} else if seen[s.ID] {
				vs.Add(path+".id", "duplicate", "field "+s.ID+" appears twice")
			}
			seen[s.ID] = true
		} else {
			f.ID = newID()
		}
		f.Label = strings.TrimSpace(s.Label)
		switch {
		case f.Label == "":
			vs.Add(path+".label", "required", "label is required")
		case !text.Field(&vs, path+".label", f.Label):
		case utf8.RuneCountInString(f.Label) > maxLabel:
			vs.Add(path+".label", "too_long", fmt.Sprintf("label must be at most %d characters", maxLabel))
		}
		if p := s.Placeholder; p != nil && text.Field(&vs, path+".placeholder", *p) && utf8.RuneCountInString(*p) > maxPlaceholder {
			vs.Add(path+".placeholder", "too_long", fmt.Sprintf("placeholder must be at most %d characters", maxPlaceholder))
		}
		if h := s.Help; h != nil && text.Field(&vs, path+".help", *h) && utf8.RuneCountInString(*h) > maxHelp {
			vs.Add(path+".help", "too_long", fmt.Sprintf("help must be at most %d characters", maxHelp))
		}
		t, ok := ParseFieldType(s.Type)
		if !ok {
			if s.Type == "" {
				vs.Add(path+".type", "required", "type is required")
			} else {
				vs.Add(path+".type", "invalid_value", "type must be one of text, email, number, dropdown, checkbox, radio, textarea, file, date")
			}
		}
		f.Type = t
		checkOptions(&vs, path+".options", t, s.Options, lim)
		f.Accept, f.MaxFileBytes = checkFileRules(&vs, path, t, s.Accept, s.MaxFileBytes)
		if len(s.Options) > 0 {
			f.Options = append([]string(nil), s.Options...)
		}
		f.Scores = checkScores(&vs, path+".scores", t, s.Options, s.Scores, prevScores[s.ID])
		out = append(out, f)
	}
	assignKeys(&vs, specs, out, existing)
	buildLogic(&vs, specs, out)
	checkRecall(&vs, out)
	if err := vs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func checkOptions(vs *domain.Violations, path string, t FieldType, options []string, lim Limits) {
	switch t {
	case TypeDropdown, TypeRadio:
		if len(options) == 0 {
			vs.Add(path, "required", "options are required for "+string(t)+" fields")
			return
		}
	case TypeCheckbox:
	case "":
		return
	default:
		if len(options) > 0 {
			vs.Add(path, "not_allowed", "options are only allowed on dropdown, radio and checkbox fields")
		}
		return
	}
	if len(options) > lim.MaxOptions {
		vs.Add(path, "too_many", fmt.Sprintf("a field holds at most %d options", lim.MaxOptions))
		return
	}
	seen := make(map[string]bool, len(options))
	for j, o := range options {
		item := fmt.Sprintf("%s[%d]", path, j)
		switch {
		case strings.TrimSpace(o) == "":
			vs.Add(item, "required", "options must be non-empty strings")
		case !text.Field(vs, item, o):
		case utf8.RuneCountInString(o) > maxOption:
			vs.Add(item, "too_long", fmt.Sprintf("an option must be at most %d characters", maxOption))
		case seen[o]:
			vs.Add(item, "duplicate", "option "+o+" appears twice")
		}
		seen[o] = true
	}
}

// MaxFileBytesLimit is the largest per-file limit a file field may set.
const MaxFileBytesLimit = 100 << 20

// checkFileRules checks the upload rules, which only file fields take.
func checkFileRules(vs *domain.Violations, path string, t FieldType, accept []string, maxBytes *int64) ([]string, int64) {
	if t != TypeFile {
		if len(accept) > 0 {
			vs.Add(path+".accept", "not_allowed", "accept is only allowed on file fields")
		}
		if maxBytes != nil {
			vs.Add(path+".max_file_size", "not_allowed", "max_file_size is only allowed on file fields")
		}
		return nil, 0
	}
	var out []string
	for j, a := range accept {
		a = strings.ToLower(strings.TrimSpace(a))
		if !validMediaRange(a) {
			vs.Add(fmt.Sprintf("%s.accept[%d]", path, j), "invalid_value", "must be a content type such as application/pdf or image/*")
			continue
		}
		out = append(out, a)
	}
	var limit int64
	if maxBytes != nil {
		if *maxBytes < 1 || *maxBytes > MaxFileBytesLimit {
			vs.Add(path+".max_file_size", "invalid_value", fmt.Sprintf("max_file_size must be 1 to %d bytes", MaxFileBytesLimit))
		}
		limit = *maxBytes
	}
	return out, limit
}

// validMediaRange accepts type/subtype and type/* made of token characters.
func validMediaRange(s string) bool {
	typ, sub, ok := strings.Cut(s, "/")
	if !ok || typ == "" || sub == "" || typ == "*" {
		return false
	}
	token := func(x string) bool {
		for _, r := range x {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$&^_.+-", r)) {
				return false
			}
		}
		return true
	}
	return token(typ) && (sub == "*" || token(sub))
}
