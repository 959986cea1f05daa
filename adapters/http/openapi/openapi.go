// Package openapi holds the OpenAPI 3.1 document of the /v1 API and a validator that checks real
// responses against it, so tests can prove the document covers what the server does.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed openapi.json
var document []byte

// Document returns the OpenAPI 3.1 document served at GET /v1/openapi.json.
// The caller gets its own copy.
func Document() []byte {
	return bytes.Clone(document)
}

// docURL is the (never fetched) URL under which the document is loaded as one schema resource.
const docURL = "https://formward.invalid/v1/openapi.json"

// methods are the operation keys of an OpenAPI path item.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// response is one documented response: a nil schema means "no content".
type response struct {
	schema *jsonschema.Schema
	// file is a response documented with non-JSON content only (a download): its body is not
	// checked.
	file bool
}

type operation struct {
	responses map[string]response // status code, "4XX"-style range or "default"
}

type pathItem struct {
	template string
	segments []string
	ops      map[string]*operation // upper-case method
}

// Validator checks responses against the document's response schemas.
type Validator struct {
	paths            []*pathItem
	methodNotAllowed response
}

// NewValidator parses the embedded document and compiles the schema of every documented response.
func NewValidator() (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(document))
	if err != nil {
		return nil, fmt.Errorf("openapi: parse document: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("openapi: document is not an object")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, fmt.Errorf("openapi: add document: %w", err)
	}

	v := &Validator{}
	paths, _ := root["paths"].(map[string]any)
	templates := make([]string, 0, len(paths))
	for t := range paths {
		templates = append(templates, t)
	}
	sort.Strings(templates)
	for _, t := range templates {
		item, ok := paths[t].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("openapi: path %s is not an object", t)
		}
		if !strings.HasPrefix(t, "/") {
			return nil, fmt.Errorf("openapi: path %s does not start with /", t)
		}
		pi := &pathItem{template: t, segments: strings.Split(strings.TrimPrefix(t, "/"), "/"), ops: map[string]*operation{}}
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			op, ok := raw.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("openapi: %s %s is not an object", m, t)
			}
			resps, ok := op["responses"].(map[string]any)
			if !ok || len(resps) == 0 {
				return nil, fmt.Errorf("openapi: %s %s has no responses", m, t)
			}
			o := &operation{responses: map[string]response{}}
			base := "#/paths/" + escape(t) + "/" + m + "/responses/"
			for status, r := range resps {
				resp, err := compileResponse(c, root, base+escape(status), r)
				if err != nil {
					return nil, fmt.Errorf("openapi: %s %s %s: %w", strings.ToUpper(m), t, status, err)
				}
				o.responses[strings.ToUpper(status)] = resp
			}
			pi.ops[strings.ToUpper(m)] = o
		}
		v.paths = append(v.paths, pi)
	}

	mna, err := compileResponse(c, root, "#/components/responses/MethodNotAllowed",
		map[string]any{"$ref": "#/components/responses/MethodNotAllowed"})
	if err != nil {
		return nil, fmt.Errorf("openapi: MethodNotAllowed response: %w", err)
	}
	v.methodNotAllowed = mna
	return v, nil
}

// compileResponse follows a response's $ref (within the document) and compiles the schema of its
// application/json content, or returns a schema-less response when it declares no content.
func compileResponse(c *jsonschema.Compiler, root map[string]any, ptr string, r any) (response, error) {
	for i := 0; ; i++ {
		obj, ok := r.(map[string]any)
		if !ok {
			return response{}, fmt.Errorf("response at %s is not an object", ptr)
		}
		ref, isRef := obj["$ref"].(string)
		if !isRef {
			break
		}
		if i > 10 || !strings.HasPrefix(ref, "#/") {
			return response{}, fmt.Errorf("unsupported response $ref %q", ref)
		}
		target, err := resolve(root, ref)
		if err != nil {
			return response{}, err
		}
		ptr, r = ref, target
	}
	obj := r.(map[string]any)
	content, _ := obj["content"].(map[string]any)
	if len(content) == 0 {
		return response{}, nil
	}
	media, ok := content["application/json"].(map[string]any)
	if !ok {
		// A file (an export): any body of a documented media type is accepted.
		return response{file: true}, nil
	}
	if _, ok := media["schema"]; !ok {
		return response{}, fmt.Errorf("response at %s has no application/json schema", ptr)
	}
	sch, err := c.Compile(docURL + ptr + "/content/application~1json/schema")
	if err != nil {
		return response{}, err
	}
	return response{schema: sch}, nil
}

// resolve walks a local JSON pointer ("#/a/b") through the parsed document.
func resolve(root map[string]any, ref string) (any, error) {
	var cur any = root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		if cur, ok = obj[tok]; !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	return cur, nil
}

// escape turns a key into a JSON pointer token.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// match finds the path item whose template fits the concrete path. Literal segments beat
// parameters, segment by segment from the left.
func (v *Validator) match(path string) (*pathItem, bool) {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if !strings.HasPrefix(path, "/") {
		return nil, false
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var best *pathItem
	var bestScore string
	for _, pi := range v.paths {
		if len(pi.segments) != len(segs) {
			continue
		}
		score := make([]byte, len(segs))
		ok := true
		for i, s := range pi.segments {
			switch {
			case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
				if segs[i] == "" {
					ok = false
				}
				score[i] = '0'
			case s == segs[i]:
				score[i] = '1'
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && (best == nil || string(score) > bestScore) {
			best, bestScore = pi, string(score)
		}
	}
	return best, best != nil
}

// ValidateResponse checks one real response. path is the request path relative to /v1, such as
// /forms/frm_ABC/submissions (a query string is ignored). It fails when the path, the method or the
// status is not documented, when a response documented without content has a body, and when the
// body does not match the documented schema. A 405 on a documented path with an undocumented
// method is checked against components/responses/MethodNotAllowed.
func (v *Validator) ValidateResponse(method, path string, status int, body []byte) error {
	method = strings.ToUpper(method)
	pi, ok := v.match(path)
	if !ok {
		return fmt.Errorf("openapi: path %s is not documented", path)
	}
	op, ok := pi.ops[method]
	if !ok {
		if status == http.StatusMethodNotAllowed {
			return v.check(v.methodNotAllowed, method, path, status, body)
		}
		return fmt.Errorf("openapi: %s %s (template %s) is not documented", method, path, pi.template)
	}
	code := strconv.Itoa(status)
	resp, ok := op.responses[code]
	if !ok {
		resp, ok = op.responses[code[:1]+"XX"]
	}
	if !ok {
		resp, ok = op.responses["DEFAULT"]
	}
	if !ok {
		return fmt.Errorf("openapi: status %d is not documented for %s %s", status, method, pi.template)
	}
	return v.check(resp, method, path, status, body)
}

func (v *Validator) check(resp response, method, path string, status int, body []byte) error {
	if resp.file {
		return nil
	}
	if resp.schema == nil {
		if len(body) != 0 {
			return fmt.Errorf("openapi: %s %s %d is documented without content but has a %d-byte body", method, path, status, len(body))
		}
		return nil
	}
	if !json.Valid(body) {
		return fmt.Errorf("openapi: %s %s %d: body is not JSON: %.200q", method, path, status, body)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openapi: %s %s %d: body: %w", method, path, status, err)
	}
	if err := resp.schema.Validate(inst); err != nil {
		return fmt.Errorf("openapi: %s %s %d: %w", method, path, status, err)
	}
	return nil
}

// Operations lists every documented operation as "METHOD /path/template", sorted.
func (v *Validator) Operations() []string {
	var out []string
	for _, pi := range v.paths {
		for m := range pi.ops {
			out = append(out, m+" "+pi.template)
		}
	}
	sort.Strings(out)
	return out
}
