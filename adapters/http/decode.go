package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/submission"
)

// object is a JSON object whose properties are checked one by one, so that every broken rule
// (unknown property, wrong type) is reported together.
type object struct {
	path  string
	props map[string]json.RawMessage
	vs    *domain.Violations
}

// readBody reads the request's body as a JSON object that may carry props and echo readOnly
// back (see object.allow); violations collect in vs. When ok is false it has answered.
func (a *api) readBody(c *gin.Context, vs *domain.Violations, props, readOnly []string) (object, bool) {
	o, err := parseBody(body(c), vs)
	if err != nil {
		fail(c, a.Logger, err)
		return object{}, false
	}
	o.allow(props, readOnly)
	return o, true
}

// parseBody reads the body as a JSON object whatever the Content-Type says.
func parseBody(body []byte, vs *domain.Violations) (object, error) {
	trimmed := bytes.TrimSpace(body)
	if err := checkBodyUTF8(body); err != nil {
		return object{}, err
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return object{}, badRequest("the body must be a JSON object")
	}
	var props map[string]json.RawMessage
	if err := jsoncodec.Unmarshal(trimmed, &props); err != nil {
		return object{}, badRequest("the body is not valid JSON: " + jsonProblem(err))
	}
	return object{props: props, vs: vs}, nil
}

func jsonProblem(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return "unexpected value"
}

func (o object) at(name string) string {
	if o.path == "" {
		return name
	}
	return o.path + "." + name
}

// allow reports unknown properties; read-only ones are ignored so clients can send back what they read.
func (o object) allow(known []string, readOnly []string) {
	set := make(map[string]bool, len(known)+len(readOnly))
	for _, k := range known {
		set[k] = true
	}
	for _, k := range readOnly {
		set[k] = true
	}
	names := make([]string, 0, len(o.props))
	for k := range o.props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !set[k] {
			o.vs.Add(o.at(k), "unknown_property", "unknown property "+k)
		}
	}
}

func (o object) has(name string) bool { _, ok := o.props[name]; return ok }

func (o object) isNull(name string) bool {
	raw, ok := o.props[name]
	return ok && bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func (o object) typeError(name, want string) {
	o.vs.Add(o.at(name), "invalid_type", "must be "+want)
}

// str returns the string property; present is false when it is absent.
func (o object) str(name string) (v string, present bool) {
	raw, ok := o.props[name]
	if !ok {
		return "", false
	}
	if err := jsoncodec.Unmarshal(raw, &v); err != nil || o.isNull(name) {
		o.typeError(name, "a string")
		return "", true
	}
	return v, true
}

// nullableStr returns nil for JSON null.
func (o object) nullableStr(name string) (v *string, present bool) {
	if o.isNull(name) {
		return nil, true
	}
	s, present := o.str(name)
	if !present {
		return nil, false
	}
	return &s, true
}

func (o object) boolean(name string) (v bool, present bool) {
	raw, ok := o.props[name]
	if !ok {
		return false, false
	}
	if err := jsoncodec.Unmarshal(raw, &v); err != nil || o.isNull(name) {
		o.typeError(name, "true or false")
	}
	return v, true
}

func (o object) strings(name string) (v []string, present bool) {
	raw, ok := o.props[name]
	if !ok {
		return nil, false
	}
	if err := jsoncodec.Unmarshal(raw, &v); err != nil || o.isNull(name) {
		o.typeError(name, "an array of strings")
		return nil, true
	}
	if v == nil {
		v = []string{}
	}
	return v, true
}

// objects returns the array of objects under name.
func (o object) objects(name string) (v []object, present bool) {
	raw, ok := o.props[name]
	if !ok {
		return nil, false
	}
	var items []json.RawMessage
	if err := jsoncodec.Unmarshal(raw, &items); err != nil || o.isNull(name) {
		o.typeError(name, "an array of objects")
		return nil, true
	}
	v = make([]object, 0, len(items))
	for i, it := range items {
		var props map[string]json.RawMessage
		path := fmt.Sprintf("%s[%d]", o.at(name), i)
		if err := jsoncodec.Unmarshal(it, &props); err != nil || props == nil {
			o.vs.Add(path, "invalid_type", "must be an object")
			props = map[string]json.RawMessage{}
		}
		v = append(v, object{path: path, props: props, vs: o.vs})
	}
	return v, true
}

// answers decodes submitted values: strings, numbers (kept as text), booleans, arrays, null.
func (o object) answers(name string) (v map[string]submission.Input, present bool) {
	raw, ok := o.props[name]
	if !ok {
		return nil, false
	}
	var m map[string]any
	if err := jsoncodec.UnmarshalNumbers(raw, &m); err != nil || m == nil {
		o.typeError(name, "an object mapping field IDs or keys to values")
		return nil, true
	}
	out := make(map[string]submission.Input, len(m))
	for k, val := range m {
		out[k] = httpkit.ToInput(val)
	}
	return out, true
}
