// Package formschema describes a form version's submission data as a JSON Schema (draft
// 2020-12), for consumers of the API, the webhooks and the Kafka events. The schema says what
// the server returns in `data`: every value is a string or an array of strings, keyed by field ID.
package formschema

import (
	"encoding/json"

	"github.com/formward/formward/domain/form"
)

// Draft is the JSON Schema dialect of every schema this package writes.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// Patterns a value must match, the same strings the server accepts (domain/submission).
const (
	// NumberPattern is a decimal number: an optional sign, digits with an optional fraction
	// (or a fraction alone) and an optional exponent. Hexadecimal, digit separators, "Inf" and
	// "NaN" are refused, as the server refuses them. The server answers with the canonical form
	// ("1.5", "-2", "1e21"), which this pattern also matches.
	NumberPattern = `^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`
	// DatePattern is a date written YYYY-MM-DD; format "date" adds the calendar check.
	DatePattern = `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`
	// EmailPattern is one bare address: no name, no spaces or brackets, a dot in the domain,
	// a top-level label of two or more characters that is not all digits. It takes what the
	// server takes, internationalised domains included; format "email" (a host name, RFC 5321),
	// when a validator asserts formats, is stricter: it refuses those domains and labels with
	// "'" or "+", which the server takes.
	EmailPattern = `^[^\s<>"(),;:\\\[\]@]+@([^\s<>"(),;:\\\[\]@_.]+\.)+(` + tldChar + `*` + tldLetter + tldChar + `+|` + tldChar + `+` + tldLetter + tldChar + `*)$`
	tldChar      = `[A-Za-z0-9\-\x{80}-\x{10FFFF}]`
	tldLetter    = `[A-Za-z\-\x{80}-\x{10FFFF}]`
	// nonBlank is a string with at least one character that is not white space: the server
	// drops a blank answer instead of storing it.
	nonBlank = `\S`
)

// Maximum lengths of text answers, in characters (code points), as the server enforces them.
const (
	maxText     = 1000
	maxTextarea = 10000
	maxEmail    = 254
)

// ForFields returns the JSON Schema of a submission's data for a form whose fields are fields
// (the current fields of one version: removed fields are not among them and not in the
// schema). id is the schema's `$id`, the URL it is served at
// (`<public URL>/v1/forms/{id}/versions/{n}/schema`).
//
// A required field is listed in `required` only when it has no display rule (show_if): when
// its rule does not hold the field is not shown, not required, and its answer is dropped, so
// data may lack it. A field with a rule is therefore optional in the schema; its value, when
// present, is still checked.
func ForFields(id string, fields []form.Field) map[string]any {
	props := make(map[string]any, len(fields))
	required := []string{}
	for _, f := range fields {
		p := valueSchema(f)
		p["title"] = f.Label
		if f.Key != "" {
			p["x-formward-key"] = f.Key
		}
		props[f.ID] = p
		if f.Required && f.ShowIf == nil {
			required = append(required, f.ID)
		}
	}
	return map[string]any{
		"$schema":              Draft,
		"$id":                  id,
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

// JSON is ForFields written as JSON.
func JSON(id string, fields []form.Field) ([]byte, error) {
	return json.Marshal(ForFields(id, fields))
}

// valueSchema is the schema of one field's stored answer.
func valueSchema(f form.Field) map[string]any {
	switch f.Type {
	case form.TypeText:
		return map[string]any{"type": "string", "pattern": nonBlank, "maxLength": maxText}
	case form.TypeTextarea:
		return map[string]any{"type": "string", "pattern": nonBlank, "maxLength": maxTextarea}
	case form.TypeEmail:
		return map[string]any{"type": "string", "format": "email", "pattern": EmailPattern, "maxLength": maxEmail}
	case form.TypeNumber:
		return map[string]any{"type": "string", "pattern": NumberPattern}
	case form.TypeDate:
		return map[string]any{"type": "string", "format": "date", "pattern": DatePattern}
	case form.TypeDropdown, form.TypeRadio:
		return map[string]any{"type": "string", "enum": options(f)}
	case form.TypeCheckbox:
		if len(f.Options) == 0 {
			// A single box: "true" or "false"; a required box must be ticked.
			if f.Required {
				return map[string]any{"type": "string", "const": "true"}
			}
			return map[string]any{"type": "string", "enum": []string{"true", "false"}}
		}
		return map[string]any{"type": "array", "minItems": 1, "uniqueItems": true,
			"items": map[string]any{"type": "string", "enum": options(f)}}
	case form.TypeFile:
		// The files' links (the server's own uploads as signed download links).
		return map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string", "minLength": 1}}
	}
	return map[string]any{"type": "string"}
}

func options(f form.Field) []string {
	return append([]string{}, f.Options...)
}
