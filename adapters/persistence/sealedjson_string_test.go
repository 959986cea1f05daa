package persistence

import (
	"encoding/json"
	"testing"
)

// The fast path reads exactly what encoding/json reads, or leaves the string to it.
func TestPlainJSONStringMatchesDecoder(t *testing.T) {
	for _, s := range []string{"", "Ada", "a \"quoted\" word", "back\\slash", "line\nbreak", "tab\there", "<b>&amp;</b>",
		"café ✓", "\u2028", "=SUM(A1)", string([]byte{0xff, 'x'})} {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if got, ok := plainJSONString(raw); ok && got != want {
			t.Errorf("%q: fast path read %q, the decoder %q", s, got, want)
		}
	}
	if _, ok := plainJSONString(json.RawMessage(`"Ada Lovelace"`)); !ok {
		t.Error("a plain string must take the fast path")
	}
	for _, raw := range []string{`"\u00e9"`, `"a"b"`, `"`, `["a"]`, "\"\xff\""} {
		if got, ok := plainJSONString(json.RawMessage(raw)); ok {
			t.Errorf("%s read as %q by the fast path", raw, got)
		}
	}
}
