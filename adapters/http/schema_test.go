package httpapi_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

// TestFormVersionSchema: any reading key gets the schema of version 1 as application/schema+json,
// a real validator compiles it and takes the API's own submission data; other versions,
// other workspaces and malformed versions are not found.
func TestFormVersionSchema(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, httpapi.Options{PublicURL: "https://forms.example.com/"})
		f := h.createForm(
			map[string]any{"label": "Name", "type": "text", "required": true, "key": "name"},
			map[string]any{"label": "Age", "type": "number"},
			map[string]any{"label": "Tags", "type": "checkbox", "options": []string{"a", "b"}})
		id := f["id"].(string)
		fields := fieldIDs(f)
		path := "/v1/forms/" + id + "/versions/1/schema"
		r := h.do("GET", path, h.keys["read-only"], nil)
		h.expect(r, http.StatusOK, "")
		if ct := r.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/schema+json") {
			t.Fatalf("content type %q", ct)
		}
		want := "https://forms.example.com" + path
		if r.json["$id"] != want {
			t.Fatalf("$id = %v, want %s", r.json["$id"], want)
		}
		name := r.json["properties"].(map[string]any)[fields[0]].(map[string]any)
		if name["title"] != "Name" || name["x-formward-key"] != "name" {
			t.Fatalf("name property = %v", name)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource(want, doc); err != nil {
			t.Fatal(err)
		}
		schema, err := c.Compile(want)
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		s := h.do("POST", "/v1/forms/"+id+"/submissions", h.keys["read-write"],
			map[string]any{"data": map[string]any{fields[0]: "Ada", fields[1]: 1e3, fields[2]: []string{"b"}}})
		h.expect(s, http.StatusCreated, "")
		if err := schema.Validate(s.json["data"]); err != nil {
			t.Fatalf("the API's own data %v does not match: %v", s.json["data"], err)
		}
		if err := schema.Validate(map[string]any{fields[0]: "Ada", fields[1]: "ten"}); err == nil {
			t.Fatal("schema takes a word for a number")
		}

		for _, p := range []string{"/versions/2/schema", "/versions/0/schema", "/versions/01/schema", "/versions/x/schema"} {
			h.expect(h.do("GET", "/v1/forms/"+id+p, h.keys["admin"], nil), http.StatusNotFound, "not_found")
		}
		h.expect(h.do("GET", path, h.keys["other"], nil), http.StatusNotFound, "not_found")
		h.expect(h.do("GET", path, "", nil), http.StatusUnauthorized, "")
	})
}
