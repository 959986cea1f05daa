// Package jsoncodec is the JSON codec of the hot paths (the API's request bodies and answers,
// the sealed submission and event payloads, gin's JSON responses): github.com/segmentio/encoding,
// whose output is byte-for-byte encoding/json's and whose errors are encoding/json's own types.
//
// Measured (make bench, SQLite, 64 connections, CPU profile of serve): encoding/json's
// reflection took about 15% of the server's CPU on the capture path (the body's decode, the
// sealed payloads' encode, the 201's encode, the relay's decode); this codec does the same
// work in about a third of the time. A document it refuses is decoded again with encoding/json,
// so error messages (a syntax error's offset) stay exactly what they were.
package jsoncodec

import (
	"bytes"
	stdjson "encoding/json"
	"io"

	ginjson "github.com/gin-gonic/gin/codec/json"
	"github.com/segmentio/encoding/json"
)

// Marshal is encoding/json.Marshal.
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal is encoding/json.Unmarshal; a document it refuses gets encoding/json's own error.
func Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return stdjson.Unmarshal(data, v)
	}
	return nil
}

// UnmarshalNumbers is Unmarshal with numbers kept as json.Number (encoding/json's UseNumber)
// and nothing but whitespace allowed after the value.
func UnmarshalNumbers(data []byte, v any) error {
	if rest, err := json.Parse(data, v, json.UseNumber); err == nil && len(bytes.TrimSpace(rest)) == 0 {
		return nil
	}
	dec := stdjson.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// UseForGin makes gin render and bind JSON with this codec.
func UseForGin() { ginjson.API = ginCore{} }

type ginCore struct{}

func (ginCore) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (ginCore) Unmarshal(data []byte, v any) error { return Unmarshal(data, v) }
func (ginCore) MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	return json.MarshalIndent(v, prefix, indent)
}
func (ginCore) NewEncoder(w io.Writer) ginjson.Encoder { return json.NewEncoder(w) }
func (ginCore) NewDecoder(r io.Reader) ginjson.Decoder { return stdjson.NewDecoder(r) }
