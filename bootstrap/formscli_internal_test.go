package bootstrap

import (
	"encoding/json"
	"testing"
)

// The exported YAML keeps the API's order of properties, in block style, with the ref set.
func TestDefinitionYAMLKeepsTheDocumentsOrder(t *testing.T) {
	def := json.RawMessage(`{"ref":null,"name":"Contact us","description":null,"fields":[{"key":"email","label":"Email: \"work\"","type":"email","required":true,"options":[],"show_if":null}],"settings":{"thank_you_message":"Thanks!","spam":{"honeypot":true}}}`)
	got, err := definitionYAML(def, "contact")
	if err != nil {
		t.Fatal(err)
	}
	want := `ref: contact
name: Contact us
description: null
fields:
  - key: email
    label: 'Email: "work"'
    type: email
    required: true
    options: []
    show_if: null
settings:
  thank_you_message: Thanks!
  spam:
    honeypot: true
`
	if string(got) != want {
		t.Fatalf("YAML:\n%s\nwant:\n%s", got, want)
	}
}
