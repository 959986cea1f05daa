package jsoncodec_test

import (
	"bytes"
	stdjson "encoding/json"
	"math"
	"testing"
	"time"

	"github.com/formward/formward/adapters/jsoncodec"
)

type sample struct {
	ID       string                        `json:"id"`
	Count    int                           `json:"count"`
	Score    *float64                      `json:"score,omitempty"`
	Skipped  string                        `json:"skipped,omitempty"`
	At       time.Time                     `json:"at"`
	Raw      stdjson.RawMessage            `json:"raw"`
	Nested   map[string]any                `json:"nested"`
	Answers  map[string]stdjson.RawMessage `json:"answers"`
	List     []string                      `json:"list"`
	NilList  []string                      `json:"nil_list"`
	Internal string                        `json:"-"`
}

// The codec's output is encoding/json's, byte for byte: the API's JSON and the sealed payloads
// must not change with it.
func TestMarshalIsEncodingJSON(t *testing.T) {
	score := 2.5
	values := []any{
		"plain", "<script>&amp;\u2028\u2029 é 日本 \x00\x1f \"quoted\" \\", 0.1, 1e21, 1e-7, 123456789.0, -0.0, math.MaxInt64, true, nil,
		[]any{1, "2", 3.5, nil, map[string]any{"z": 1, "a": []string{"x"}}},
		map[string]any{"b": "<b>", "a": 1.25, "c": map[string]any{"y": nil}, "日": "本"},
		sample{ID: "sub_1", Count: 3, Score: &score, At: time.Date(2026, 11, 29, 8, 0, 0, 123456789, time.UTC),
			Raw: stdjson.RawMessage(` { "a" : [1, 2] , "h": "<&>" } `), Nested: map[string]any{"k": []any{"v", 2}},
			Answers: map[string]stdjson.RawMessage{"email": stdjson.RawMessage(`"a@example.com"`), "list": stdjson.RawMessage(`["x","y"]`)},
			List:    []string{"a", "b"}, Internal: "secret"},
		map[string]stdjson.RawMessage{"x": stdjson.RawMessage(`{"b":1,"a":2}`)},
	}
	for _, v := range values {
		want, werr := stdjson.Marshal(v)
		got, gerr := jsoncodec.Marshal(v)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(want, got) {
			t.Errorf("Marshal(%#v):\n got  %s (%v)\n want %s (%v)", v, got, gerr, want, werr)
		}
	}
}

// A document the codec refuses gets encoding/json's error, word for word.
func TestUnmarshalErrorsAreEncodingJSONs(t *testing.T) {
	for _, doc := range []string{`{"a":`, `{"a" 1}`, `[1,2,]`, `{"a":"\x01"}`, `nul`, `{"a":1}}`, ``, `{"count":"x"}`} {
		var got, want sample
		gerr := jsoncodec.Unmarshal([]byte(doc), &got)
		werr := stdjson.Unmarshal([]byte(doc), &want)
		if gerr == nil || werr == nil || gerr.Error() != werr.Error() {
			t.Errorf("Unmarshal(%q): got %v, want %v", doc, gerr, werr)
		}
	}
}

func TestUnmarshalNumbersKeepsNumbersAsText(t *testing.T) {
	var m map[string]any
	if err := jsoncodec.UnmarshalNumbers([]byte(` {"n": 12345678901234567890, "f": 1.50, "s": "x", "l": [1, "a"], "b": true} `), &m); err != nil {
		t.Fatal(err)
	}
	if m["n"] != stdjson.Number("12345678901234567890") || m["f"] != stdjson.Number("1.50") || m["s"] != "x" || m["b"] != true {
		t.Fatalf("decoded %#v", m)
	}
	if l, ok := m["l"].([]any); !ok || len(l) != 2 || l[0] != stdjson.Number("1") {
		t.Fatalf("list %#v", m["l"])
	}
	var bad map[string]any
	if err := jsoncodec.UnmarshalNumbers([]byte(`{"a": 1} {"b": 2}`), &bad); err != nil {
		// encoding/json's Decoder reads the first value and leaves the rest, as before.
		t.Fatalf("a second value after the first: %v", err)
	}
	if err := jsoncodec.UnmarshalNumbers([]byte(`{"a": }`), &bad); err == nil {
		t.Fatal("a broken document decoded")
	}
}
