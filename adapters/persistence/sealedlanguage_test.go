package persistence

import (
	"testing"
	"time"

	"github.com/formward/formward/domain/submission"
)

// metadata.language (a form with languages) goes through the sealed text and back on both
// decoders, and a language sent twice leaves the text to encoding/json.
func TestSealedMetadataLanguageRoundTrip(t *testing.T) {
	lang := "pt-BR"
	at := time.UnixMilli(1_700_000_000_000).UTC()
	s := submission.UnmarshalFromDatabase("sub_1", "ws_1", "frm_1", map[string]submission.Value{"f1": submission.Single("Vermelho")},
		submission.Metadata{Source: submission.SourceForm, Language: &lang}, at, at)
	b, err := encodeSubmission(s)
	if err != nil {
		t.Fatal(err)
	}
	_, meta, ok := decodeSealedFast(b)
	if !ok {
		t.Fatalf("%s: not read by the fast decoder", b)
	}
	if meta.Language == nil || *meta.Language != lang {
		t.Fatalf("language %v from %s", meta.Language, b)
	}
	sameSealed(t, string(b))
	for _, text := range []string{
		`{"data":{},"metadata":{"source":"form","language":"de"}}`,
		`{"data":{},"metadata":{"source":"form","language":null}}`,
		`{"data":{},"metadata":{"language":"de","language":"fr","source":"form"}}`,
	} {
		sameSealed(t, text)
	}
	// Without a language, the sealed text is what it always was.
	s = submission.UnmarshalFromDatabase("sub_1", "ws_1", "frm_1", nil, submission.Metadata{Source: submission.SourceAPI}, at, at)
	if b, _ := encodeSubmission(s); string(b) != `{"data":{},"metadata":{"source":"api"}}` {
		t.Fatalf("sealed %s", b)
	}
}
