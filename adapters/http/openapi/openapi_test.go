package openapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func newValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatalf("NewValidator: %v", err)
	}
	return v
}

type doc struct {
	OpenAPI           string                                `json:"openapi"`
	JSONSchemaDialect string                                `json:"jsonSchemaDialect"`
	Servers           []struct{ URL string }                `json:"servers"`
	Security          []map[string][]string                 `json:"security"`
	Paths             map[string]map[string]json.RawMessage `json:"paths"`
	Components        struct {
		SecuritySchemes map[string]struct {
			Type   string `json:"type"`
			Scheme string `json:"scheme"`
		} `json:"securitySchemes"`
	} `json:"components"`
}

type op struct {
	Security   *[]map[string][]string     `json:"security"`
	Parameters []map[string]string        `json:"parameters"`
	Responses  map[string]json.RawMessage `json:"responses"`
}

func parseDoc(t *testing.T) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(Document(), &d); err != nil {
		t.Fatalf("document is not JSON: %v", err)
	}
	return d
}

// operations yields every operation of the document with its lower-case method.
func operations(t *testing.T, d doc) map[string]op {
	t.Helper()
	out := map[string]op{}
	for path, item := range d.Paths {
		for m, raw := range item {
			if m == "parameters" || m == "summary" || m == "description" {
				continue
			}
			var o op
			if err := json.Unmarshal(raw, &o); err != nil {
				t.Fatalf("%s %s: %v", m, path, err)
			}
			out[strings.ToUpper(m)+" "+path] = o
		}
	}
	return out
}

func TestDocumentIsOpenAPI31(t *testing.T) {
	d := parseDoc(t)
	if d.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", d.OpenAPI)
	}
	if d.JSONSchemaDialect != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("jsonSchemaDialect = %q", d.JSONSchemaDialect)
	}
	if len(d.Servers) != 1 || d.Servers[0].URL != "http://127.0.0.1:8080/v1" {
		t.Errorf("servers = %+v", d.Servers)
	}
	if s, ok := d.Components.SecuritySchemes["bearer"]; !ok || s.Type != "http" || s.Scheme != "bearer" {
		t.Errorf("bearer security scheme = %+v", s)
	}
	if len(d.Security) != 1 || d.Security[0]["bearer"] == nil {
		t.Errorf("global security = %+v", d.Security)
	}
}

func TestEveryOperationDocumentsAuthErrors(t *testing.T) {
	d := parseDoc(t)
	ops := operations(t, d)
	if len(ops) != 56 {
		t.Errorf("%d operations, want 56", len(ops))
	}
	for name, o := range ops {
		if name == "GET /openapi.json" {
			if o.Security == nil || len(*o.Security) != 0 {
				t.Errorf("%s: security must be [] (no auth)", name)
			}
			continue
		}
		if o.Security != nil {
			t.Errorf("%s: must use the global bearer security", name)
		}
		for _, code := range []string{"401", "429", "500"} {
			if _, ok := o.Responses[code]; !ok {
				t.Errorf("%s: no %s response", name, code)
			}
		}
		// Account management needs an admin key, reads included.
		write := !strings.HasPrefix(name, "GET ") || accountPath(name)
		if _, ok := o.Responses["403"]; ok != write {
			t.Errorf("%s: 403 documented = %v, want %v", name, ok, write)
		}
		if strings.HasPrefix(name, "POST ") {
			idem := false
			for _, p := range o.Parameters {
				idem = idem || p["$ref"] == "#/components/parameters/IdempotencyKey"
			}
			if !idem {
				t.Errorf("%s: no Idempotency-Key parameter", name)
			}
			// A retry creates nothing: it answers 200 with the delivery; privacy requests answer
			// 200 with what they found or deleted.
			// A replay answers 202 with its job.
			creates := !strings.HasSuffix(name, "/retry") && !strings.HasPrefix(name, "POST /privacy/") && !strings.HasSuffix(name, "/replay")
			if _, ok := o.Responses["201"]; !ok && creates {
				t.Errorf("%s: no 201", name)
			}
		}
		if strings.HasPrefix(name, "DELETE ") {
			if _, ok := o.Responses["204"]; !ok {
				t.Errorf("%s: no 204", name)
			}
		}
		if strings.HasPrefix(name, "POST ") || strings.HasPrefix(name, "PATCH ") {
			for _, code := range []string{"400", "413", "422"} {
				if code == "422" && strings.HasSuffix(name, "/retry") {
					continue // no body to validate
				}
				if _, ok := o.Responses[code]; !ok {
					t.Errorf("%s: no %s response", name, code)
				}
			}
		}
	}
}

func accountPath(op string) bool {
	_, path, _ := strings.Cut(op, " ")
	for _, p := range []string{"/workspace", "/api-keys", "/members", "/invitations", "/audit-events"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

func TestOperations(t *testing.T) {
	got := strings.Join(newValidator(t).Operations(), "\n")
	want := strings.Join([]string{
		"DELETE /api-keys/{id}",
		"DELETE /forms/{id}",
		"DELETE /forms/{id}/submissions/{submission_id}",
		"DELETE /integrations/{id}",
		"DELETE /invitations/{id}",
		"DELETE /members/{id}",
		"DELETE /webhooks/{id}",
		"DELETE /workflows/{id}",
		"GET /api-keys",
		"GET /audit-events",
		"GET /forms",
		"GET /forms/{id}",
		"GET /forms/{id}/definition",
		"GET /forms/{id}/drafts",
		"GET /forms/{id}/notification-runs",
		"GET /forms/{id}/stats",
		"GET /forms/{id}/submissions",
		"GET /forms/{id}/submissions/export",
		"GET /forms/{id}/submissions/{submission_id}",
		"GET /forms/{id}/versions",
		"GET /forms/{id}/versions/{version}",
		"GET /forms/{id}/versions/{version}/schema",
		"GET /integrations",
		"GET /integrations/{id}",
		"GET /invitations",
		"GET /members",
		"GET /openapi.json",
		"GET /webhooks",
		"GET /webhooks/{id}",
		"GET /webhooks/{id}/deliveries",
		"GET /webhooks/{id}/replays",
		"GET /webhooks/{id}/replays/{job_id}",
		"GET /workflows",
		"GET /workflows/{id}",
		"GET /workflows/{id}/runs",
		"GET /workspace",
		"PATCH /forms/{id}",
		"PATCH /forms/{id}/submissions/{submission_id}",
		"PATCH /members/{id}",
		"PATCH /webhooks/{id}",
		"PATCH /workflows/{id}",
		"PATCH /workspace",
		"POST /api-keys",
		"POST /forms",
		"POST /forms/{id}/submissions",
		"POST /forms/{id}/versions/{version}/restore",
		"POST /integrations",
		"POST /invitations",
		"POST /privacy/erase",
		"POST /privacy/export",
		"POST /webhooks",
		"POST /webhooks/{id}/deliveries/{delivery_id}/retry",
		"POST /webhooks/{id}/replay",
		"POST /workflows",
		"POST /workflows/{id}/runs/{run_id}/retry",
		"PUT /forms/by-ref/{ref}",
	}, "\n")
	if got != want {
		t.Errorf("Operations() =\n%s\nwant\n%s", got, want)
	}
}

func TestPathTemplatesMatch(t *testing.T) {
	v := newValidator(t)
	cases := map[string]string{
		"/forms":                                  "/forms",
		"/forms?limit=5":                          "/forms",
		"/forms/frm_ABC":                          "/forms/{id}",
		"/forms/frm_ABC/submissions":              "/forms/{id}/submissions",
		"/forms/frm_ABC/submissions/sub_XYZ":      "/forms/{id}/submissions/{submission_id}",
		"/forms/anything-at-all/submissions/junk": "/forms/{id}/submissions/{submission_id}",
		"/openapi.json":                           "/openapi.json",
		"/webhooks/whk_A/deliveries/dlv_B/retry":  "/webhooks/{id}/deliveries/{delivery_id}/retry",
	}
	for path, want := range cases {
		pi, ok := v.match(path)
		if !ok || pi.template != want {
			t.Errorf("match(%q) = %v, want %s", path, pi, want)
		}
	}
	for _, path := range []string{"", "forms", "/forms/", "/forms//submissions", "/forms/frm_A/other", "/v1/forms", "/workflows/", "/webhooks/whk_A/deliveries/dlv_B"} {
		if pi, ok := v.match(path); ok {
			t.Errorf("match(%q) = %s, want no match", path, pi.template)
		}
	}
}

const validForm = `{
  "id": "frm_01JD8X3R9T6V2KQ4M7ZB5WN0AE",
  "name": "Contact",
  "description": null,
  "status": "draft",
  "version": 1,
  "fields": [
    {"id": "fld_01JD8X3R9T6V2KQ4M7ZB5WN0AF", "label": "Email", "type": "email", "required": true, "options": [], "placeholder": null, "help": null, "key": "email", "hidden": false, "page": 1, "show_if": null},
    {"id": "fld_01JD8X3R9T6V2KQ4M7ZB5WN0AG", "label": "Topic", "type": "radio", "required": false, "options": ["a", "b"], "placeholder": "pick one", "help": "Either will do.\nWe read both.", "key": "topic", "hidden": false, "page": 2,
     "show_if": {"match": "any", "conditions": [{"field_id": "fld_01JD8X3R9T6V2KQ4M7ZB5WN0AF", "operator": "contains", "value": "@example.org"}]}}
  ],
  "submission_count": 0,
  "closed_reason": null,
  "settings": {"redirect_url": null, "thank_you_message": null,
    "spam": {"honeypot": true, "min_fill_seconds": 3, "proof_of_work": true, "captcha": null},
    "embed": {"frame_ancestors": [], "cors_origins": []},
    "notifications": {"owner": {"enabled": false, "to": []},
      "respondent": {"enabled": false, "email_field_id": null, "subject": "", "body": ""}},
    "closing": {"closes_at": null, "max_submissions": null, "one_per_email_field": null, "message": null},
    "allowed_origins": [],
    "theme": {"accent": null, "appearance": "light", "logo": null},
    "partial": {"enabled": false, "ttl_days": 30}},
  "created_at": "2026-11-22T19:48:41.123Z",
  "updated_at": "2026-11-22T19:48:41.123Z"
}`

func mutate(t *testing.T, body string, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestValidateForm(t *testing.T) {
	v := newValidator(t)
	for _, method := range []string{"GET", "PATCH"} {
		if err := v.ValidateResponse(method, "/forms/frm_01JD8X3R9T6V2KQ4M7ZB5WN0AE", 200, []byte(validForm)); err != nil {
			t.Errorf("%s valid form: %v", method, err)
		}
	}
	if err := v.ValidateResponse("POST", "/forms", 201, []byte(validForm)); err != nil {
		t.Errorf("POST valid form: %v", err)
	}

	bad := map[string][]byte{
		"missing id":            mutate(t, validForm, func(m map[string]any) { delete(m, "id") }),
		"extra property":        mutate(t, validForm, func(m map[string]any) { m["owner"] = "me" }),
		"bad id prefix":         mutate(t, validForm, func(m map[string]any) { m["id"] = "form_01JD8X3R9T6V2KQ4M7ZB5WN0AE" }),
		"timestamp no millis":   mutate(t, validForm, func(m map[string]any) { m["created_at"] = "2026-11-22T19:48:41Z" }),
		"timestamp offset":      mutate(t, validForm, func(m map[string]any) { m["updated_at"] = "2026-11-22T19:48:41.123+00:00" }),
		"unknown status":        mutate(t, validForm, func(m map[string]any) { m["status"] = "live" }),
		"count not integer":     mutate(t, validForm, func(m map[string]any) { m["submission_count"] = 1.5 }),
		"unknown closed reason": mutate(t, validForm, func(m map[string]any) { m["closed_reason"] = "archived" }),
		"field options null": mutate(t, validForm, func(m map[string]any) {
			m["fields"].([]any)[0].(map[string]any)["options"] = nil
		}),
		"field extra property": mutate(t, validForm, func(m map[string]any) {
			m["fields"].([]any)[0].(map[string]any)["hint"] = "x"
		}),
	}
	for name, body := range bad {
		if err := v.ValidateResponse("GET", "/forms/frm_X", 200, body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := v.ValidateResponse("GET", "/forms/frm_X", 200, []byte("not json")); err == nil {
		t.Error("non-JSON body accepted")
	}
}

func TestValidateFormList(t *testing.T) {
	v := newValidator(t)
	item := mutate(t, validForm, func(m map[string]any) { delete(m, "fields"); delete(m, "settings") })
	page := []byte(`{"data": [` + string(item) + `], "next_cursor": "abc", "has_more": true}`)
	if err := v.ValidateResponse("GET", "/forms?limit=1", 200, page); err != nil {
		t.Errorf("valid page: %v", err)
	}
	if err := v.ValidateResponse("GET", "/forms", 200, []byte(`{"data": [], "next_cursor": null, "has_more": false}`)); err != nil {
		t.Errorf("empty page: %v", err)
	}
	withFields := []byte(`{"data": [` + validForm + `], "next_cursor": null, "has_more": false}`)
	if err := v.ValidateResponse("GET", "/forms", 200, withFields); err == nil {
		t.Error("list item with fields accepted")
	}
	if err := v.ValidateResponse("GET", "/forms", 200, []byte(`{"data": []}`)); err == nil {
		t.Error("envelope without next_cursor/has_more accepted")
	}
}

const validSubmission = `{
  "id": "sub_01JD8X3R9T6V2KQ4M7ZB5WN0AH",
  "form_id": "frm_01JD8X3R9T6V2KQ4M7ZB5WN0AE",
  "form_version": 1,
  "data": {"fld_01JD8X3R9T6V2KQ4M7ZB5WN0AF": "a@example.com", "fld_01JD8X3R9T6V2KQ4M7ZB5WN0AG": ["a", "b"]},
  "metadata": {"ip": null, "user_agent": null, "referrer": null, "source": "api", "utm": {}},
  "submitted_at": "2026-11-22T19:48:41.123Z",
  "updated_at": "2026-11-22T19:48:41.123Z"
}`

func TestValidateSubmission(t *testing.T) {
	v := newValidator(t)
	if err := v.ValidateResponse("POST", "/forms/frm_A/submissions", 201, []byte(validSubmission)); err != nil {
		t.Errorf("valid submission: %v", err)
	}
	public := mutate(t, validSubmission, func(m map[string]any) {
		m["metadata"] = map[string]any{
			"ip":         strings.Repeat("ab", 32),
			"user_agent": "Mozilla/5.0",
			"referrer":   "https://example.com/",
			"source":     "form",
			"utm":        map[string]any{"utm_source": "news", "utm_campaign": "fall"},
		}
	})
	if err := v.ValidateResponse("GET", "/forms/frm_A/submissions/sub_B", 200, public); err != nil {
		t.Errorf("public submission: %v", err)
	}
	bad := map[string][]byte{
		"raw ip":         mutate(t, validSubmission, func(m map[string]any) { m["metadata"].(map[string]any)["ip"] = "203.0.113.7" }),
		"other utm key":  mutate(t, validSubmission, func(m map[string]any) { m["metadata"].(map[string]any)["utm"] = map[string]any{"gclid": "x"} }),
		"number value":   mutate(t, validSubmission, func(m map[string]any) { m["data"] = map[string]any{"fld_01JD8X3R9T6V2KQ4M7ZB5WN0AF": 42} }),
		"bad source":     mutate(t, validSubmission, func(m map[string]any) { m["metadata"].(map[string]any)["source"] = "web" }),
		"no updated_at":  mutate(t, validSubmission, func(m map[string]any) { delete(m, "updated_at") }),
		"data key no id": mutate(t, validSubmission, func(m map[string]any) { m["data"] = map[string]any{"email": "x"} }),
	}
	for name, body := range bad {
		if err := v.ValidateResponse("GET", "/forms/frm_A/submissions/sub_B", 200, body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	page := []byte(`{"data": [` + validSubmission + `], "next_cursor": null, "has_more": false}`)
	if err := v.ValidateResponse("GET", "/forms/frm_A/submissions?created_after=2026-01-01T00:00:00Z", 200, page); err != nil {
		t.Errorf("submission page: %v", err)
	}
}

func TestValidateErrors(t *testing.T) {
	v := newValidator(t)
	unauthorized := []byte(`{"error": {"code": "unauthorized", "message": "missing API key", "status": 401}}`)
	for _, c := range []struct{ method, path string }{
		{"GET", "/forms"}, {"POST", "/forms"}, {"DELETE", "/forms/frm_A"}, {"PATCH", "/forms/frm_A/submissions/sub_B"},
	} {
		if err := v.ValidateResponse(c.method, c.path, 401, unauthorized); err != nil {
			t.Errorf("%s %s 401: %v", c.method, c.path, err)
		}
	}
	if err := v.ValidateResponse("GET", "/forms", 401, []byte(`{"error": {"code": "forbidden", "message": "x", "status": 401}}`)); err == nil {
		t.Error("401 with code forbidden accepted")
	}
	if err := v.ValidateResponse("GET", "/forms", 401, []byte(`{"error": {"code": "unauthorized", "message": "x", "status": 401, "trace": "x"}}`)); err == nil {
		t.Error("error with extra property accepted")
	}
	validation := []byte(`{"error": {"code": "validation_failed", "message": "bad", "status": 422,
		"details": [{"field": "fld_01JD8X3R9T6V2KQ4M7ZB5WN0AF", "code": "required", "message": "Email: a value is required"}]}}`)
	if err := v.ValidateResponse("POST", "/forms/frm_A/submissions", 422, validation); err != nil {
		t.Errorf("422: %v", err)
	}
	if err := v.ValidateResponse("POST", "/forms/frm_A/submissions", 422, []byte(`{"error": {"code": "validation_failed", "message": "bad", "status": 422}}`)); err == nil {
		t.Error("422 without details accepted")
	}
	for _, code := range []string{"form_closed", "conflict"} {
		body := []byte(`{"error": {"code": "` + code + `", "message": "x", "status": 409}}`)
		if err := v.ValidateResponse("POST", "/forms/frm_A/submissions", 409, body); err != nil {
			t.Errorf("409 %s: %v", code, err)
		}
	}
	if err := v.ValidateResponse("POST", "/forms", 409, []byte(`{"error": {"code": "form_closed", "message": "x", "status": 409}}`)); err == nil {
		t.Error("form_closed on POST /forms accepted")
	}
	notAllowed := []byte(`{"error": {"code": "method_not_allowed", "message": "x", "status": 405}}`)
	if err := v.ValidateResponse("PUT", "/forms/frm_A", 405, notAllowed); err != nil {
		t.Errorf("405 on known path: %v", err)
	}
}

func TestUndocumented(t *testing.T) {
	v := newValidator(t)
	notFound := []byte(`{"error": {"code": "not_found", "message": "x", "status": 404}}`)
	if err := v.ValidateResponse("GET", "/forms", 404, notFound); err == nil {
		t.Error("undocumented status accepted")
	}
	if err := v.ValidateResponse("GET", "/forms", 403, []byte(`{"error": {"code": "forbidden", "message": "x", "status": 403}}`)); err == nil {
		t.Error("403 on a GET accepted")
	}
	if err := v.ValidateResponse("PUT", "/forms/frm_A", 200, []byte(validForm)); err == nil {
		t.Error("undocumented method accepted")
	}
	if err := v.ValidateResponse("GET", "/workflows", 200, []byte(`{}`)); err == nil {
		t.Error("undocumented path accepted")
	}
	if err := v.ValidateResponse("GET", "/openapi.json", 401, nil); err == nil {
		t.Error("401 on /openapi.json accepted")
	}
}

func TestNoContent(t *testing.T) {
	v := newValidator(t)
	if err := v.ValidateResponse("DELETE", "/forms/frm_A", 204, nil); err != nil {
		t.Errorf("204 without body: %v", err)
	}
	if err := v.ValidateResponse("DELETE", "/forms/frm_A/submissions/sub_B", 204, []byte("{}")); err == nil {
		t.Error("204 with a body accepted")
	}
}

func TestDocumentValidatesItself(t *testing.T) {
	v := newValidator(t)
	if err := v.ValidateResponse("GET", "/openapi.json", 200, Document()); err != nil {
		t.Errorf("GET /openapi.json: %v", err)
	}
}

// A known path answers 405 to a method it does not have; OpenAPI has no responses per path, so
// every operation lists the MethodNotAllowed response.
func TestEveryOperationReferencesMethodNotAllowed(t *testing.T) {
	for name, o := range operations(t, parseDoc(t)) {
		var r map[string]string
		if err := json.Unmarshal(o.Responses["405"], &r); err != nil || r["$ref"] != "#/components/responses/MethodNotAllowed" {
			t.Errorf("%s: 405 = %s, want the MethodNotAllowed $ref", name, o.Responses["405"])
		}
	}
}

// The API reads a body as JSON whatever its Content-Type says, so every request body is
// documented under application/json (first: validators pick the first match) and */*.
func TestRequestBodiesTakeAnyMediaType(t *testing.T) {
	bodies := 0
	for name, raw := range rawOperations(t) {
		var o struct {
			RequestBody *struct {
				Content json.RawMessage `json:"content"`
			} `json:"requestBody"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		if o.RequestBody == nil {
			continue
		}
		{
			bodies++
			var keys []string
			dec := json.NewDecoder(strings.NewReader(string(o.RequestBody.Content)))
			_, _ = dec.Token()
			for dec.More() {
				k, _ := dec.Token()
				keys = append(keys, k.(string))
				var skip json.RawMessage
				_ = dec.Decode(&skip)
			}
			if strings.Join(keys, ",") != "application/json,*/*" {
				t.Errorf("%s: request media types %v, want application/json then */*", name, keys)
			}
		}
	}
	if bodies != 17 {
		t.Errorf("%d request bodies, want 17", bodies)
	}
}

// rawOperations yields every operation of the document as raw JSON.
func rawOperations(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(Document(), &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for path, item := range d.Paths {
		for m, raw := range item {
			if m != "parameters" && m != "summary" && m != "description" {
				out[strings.ToUpper(m)+" "+path] = raw
			}
		}
	}
	return out
}

// compileSchema compiles one component schema of the document.
func compileSchema(t *testing.T, name string) interface{ Validate(any) error } {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(Document())))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(docURL + "#/components/schemas/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A client may send back what it read: the request schemas accept the read-only properties.
// They must not mark them readOnly: validators (Prism) drop readOnly properties from request
// schemas and then refuse them as unknown.
func TestRequestSchemasAcceptWhatWasRead(t *testing.T) {
	for body, schema := range map[string]string{validForm: "FormPatch", validSubmission: "SubmissionPatch"} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := compileSchema(t, schema).Validate(inst); err != nil {
			t.Errorf("%s refuses a body read from the API: %v", schema, err)
		}
	}
	sub := mutate(t, validSubmission, func(m map[string]any) { delete(m, "updated_at"); m["created_at"] = m["submitted_at"] })
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(sub)))
	if err := compileSchema(t, "SubmissionCreate").Validate(inst); err != nil {
		t.Errorf("SubmissionCreate refuses read-only properties: %v", err)
	}
	inst, _ = jsonschema.UnmarshalJSON(strings.NewReader(`{"name": "X", "owner": "me"}`))
	if err := compileSchema(t, "FormCreate").Validate(inst); err == nil {
		t.Error("FormCreate accepts an unknown property")
	}

	var d struct {
		Components struct{ Schemas map[string]json.RawMessage } `json:"components"`
	}
	if err := json.Unmarshal(Document(), &d); err != nil {
		t.Fatal(err)
	}
	for name, raw := range d.Components.Schemas {
		if (strings.HasSuffix(name, "Create") || strings.HasSuffix(name, "Patch") || strings.HasSuffix(name, "Input")) && strings.Contains(string(raw), `"readOnly"`) {
			t.Errorf("request schema %s marks a property readOnly", name)
		}
	}
}

func TestOpenAPIDocumentSchemaDefinesWhatItRequires(t *testing.T) {
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
		} `json:"components"`
	}
	if err := json.Unmarshal(Document(), &d); err != nil {
		t.Fatal(err)
	}
	for name, s := range d.Components.Schemas {
		for _, p := range s.Required {
			if _, ok := s.Properties[p]; !ok {
				t.Errorf("schema %s requires %s without defining it", name, p)
			}
		}
	}
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"openapi": "3.1.0", "info": {"title": "x"}, "paths": {}}`))
	if err := compileSchema(t, "OpenAPIDocument").Validate(inst); err == nil {
		t.Error("OpenAPIDocument accepts an info without version")
	}
}
