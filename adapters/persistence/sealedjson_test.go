package persistence

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/formward/formward/domain/submission"
)

// sealedSamples are texts of submissions.sealed: as encodeSubmission writes them, and shapes
// it never writes (which the fast decoder must leave to encoding/json, or read identically).
var sealedSamples = []string{
	`{"data":{"f1":"Ada","f2":["Keynote","Dinner"],"f3":[]},"metadata":{"referrer":"https://example.com/x","source":"form","utm":{"utm_source":"news"}}}`,
	`{"data":{},"metadata":{"source":"api"}}`,
	`{"data":{"f1":"caf\u00e9 \"q\" \\ \n \u003cb\u003e","f2":["a\tb","=1+2"]},"metadata":{"ip_hash":"h","user_agent":"UA","reply_to":"a@b.c","subject":"Hi","source":"form","utm":{}}}`,
	`{ "data" : { "f1" : "x" } , "metadata" : { "source" : "api" , "utm" : null , "referrer" : null } } `,
	`{"metadata":{"source":"api"},"data":{"f1":"x"}}`,
	`{"data":{"f1":"x"}}`,
	`{}`,
	`{"data":null,"metadata":null}`,
	`{"data":{"f1":null,"f2":["a",null]},"metadata":{"source":null}}`,
	`{"data":{"f1":"a","f1":"b"},"metadata":{"source":"api"}}`,
	`{"data":{"f1":"a"},"data":{"f2":"b"},"metadata":{"source":"api"}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"api","utm":{"a":"1"},"utm":{"b":"2"}}}`,
	`{"Data":{"f1":"a"},"METADATA":{"Source":"api"}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"api","extra":1}}`,
	`{"data":{"f1":1,"f2":true},"metadata":{"source":"api"}}`,
	"{\"data\":{\"f1\":\"\xff\xfe\"},\"metadata\":{\"source\":\"api\"}}",
	"{\"data\":{\"f1\":\"a\x01\"},\"metadata\":{\"source\":\"api\"}}",
	`{"data":{"f\u0031":"a"},"metadata":{"source":"api"}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"api"}} x`,
	`{"data":{"f1":"a"},"metadata":{"source":"api"}`,
	`{"data":{"f1":"a",},"metadata":{"source":"api"}}`,
	`{"data":{"f1":["a",]},"metadata":{"source":"api"}}`,
	`{"data":{"f1":"a"}"metadata":{"source":"api"}}`,
	`{,"data":{}}`,
	`{"data":{"f1":"\ud83d\ude00 \ud800"},"metadata":{"source":"api"}}`,
	`{"data":{"f1":"a\"},"metadata":{"source":"api"}}`,
	`[]`,
	``,
	`{"data":{"f1":"a"},"metadata":{"source":"form","score":12.5}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"form","score":-3e2}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"form","score":null}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"form","score":01}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"form","score":+1}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"form","score":"1"}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"form","score":1,"score":2}}`,
	`{"data":{"f1":"a"},"metadata":{"source":"form","score":1e999}}`,
}

func sameSealed(t *testing.T, text string) {
	t.Helper()
	wantData, wantMeta, err := decodeSealedJSON([]byte(text))
	gotData, gotMeta, ok := decodeSealedFast([]byte(text))
	if !ok {
		return // encoding/json decides
	}
	if err != nil {
		t.Fatalf("%q: the fast decoder took what encoding/json refuses (%v)", text, err)
	}
	if !reflect.DeepEqual(gotMeta, wantMeta) {
		t.Fatalf("%q: metadata %+v, encoding/json %+v", text, gotMeta, wantMeta)
	}
	if len(gotData) != len(wantData) {
		t.Fatalf("%q: %d answers, encoding/json %d", text, len(gotData), len(wantData))
	}
	for k, w := range wantData {
		g, ok := gotData[k]
		if !ok || g.IsList() != w.IsList() || !reflect.DeepEqual(g.Strings(), w.Strings()) {
			t.Fatalf("%q: answer %q is %#v, encoding/json %#v", text, k, g, w)
		}
	}
}

// The fast decoder reads what encoding/json reads, or declines.
func TestDecodeSealedFastMatchesEncodingJSON(t *testing.T) {
	for _, s := range sealedSamples {
		sameSealed(t, s)
	}
	// What encodeSubmission writes always takes the fast path.
	ref, ua := "https://example.com/?a=1&b=<2>", "Mozilla/5.0"
	s := submission.UnmarshalFromDatabase("sub_1", "ws_1", "frm_1", map[string]submission.Value{
		"f1": submission.Single("Ada \"the\" Countess\nof Lovelace ✓"), "f2": submission.List([]string{"a", "=b"}), "f3": submission.Single(""),
	}, submission.Metadata{Source: submission.SourceForm, Referrer: &ref, UserAgent: &ua, UTM: map[string]string{"utm_source": "x"}}, time.UnixMilli(1_700_000_000_000).UTC(), time.UnixMilli(1_700_000_000_000).UTC())
	b, err := encodeSubmission(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := decodeSealedFast(b); !ok {
		t.Fatalf("%s: not read by the fast decoder", b)
	}
	sameSealed(t, string(b))
	// A score round-trips through the fast path.
	score := 7.25
	scored := submission.UnmarshalFromDatabase("sub_2", "ws_1", "frm_1", map[string]submission.Value{"f1": submission.Single("B")},
		submission.Metadata{Source: submission.SourceForm, Score: &score}, time.UnixMilli(1_700_000_000_000).UTC(), time.UnixMilli(1_700_000_000_000).UTC())
	if b, err = encodeSubmission(scored); err != nil {
		t.Fatal(err)
	}
	_, meta, ok := decodeSealedFast(b)
	if !ok || meta.Score == nil || *meta.Score != score {
		t.Fatalf("%s: score read as %v (ok %v)", b, meta.Score, ok)
	}
	sameSealed(t, string(b))
	// A form without scores writes no score: its bytes stay as before.
	if b, err = encodeSubmission(s); err != nil || bytes.Contains(b, []byte("score")) {
		t.Fatalf("%s: unscored submission mentions a score (%v)", b, err)
	}
	for _, bad := range []string{`{"data":{"f1":1}}`, `{"Data":{}}`, `{"data":{}} x`, `{"data":{"f1":"a"},"data":{}}`} {
		if _, _, ok := decodeSealedFast([]byte(bad)); ok {
			t.Errorf("%s: read by the fast decoder", bad)
		}
	}
}

func FuzzDecodeSealedFast(f *testing.F) {
	for _, s := range sealedSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { sameSealed(t, text) })
}
