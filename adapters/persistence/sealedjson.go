package persistence

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/submission"
)

// decodeSealedFast reads the plaintext of submissions.sealed as encodeSubmission writes it
// ({"data":{…},"metadata":{…}}, every answer a string or a list of strings) without
// encoding/json's reflection and with one string allocation for the whole text: the answers
// that need no unescaping are slices of it. Exports decode every stored submission of a form,
// and encoding/json was most of their CPU. ok is false for anything outside that shape
// (unknown or repeated keys, other value types, malformed text); the caller then decodes with
// encoding/json, so the result never differs from it.
func decodeSealedFast(plaintext []byte) (data map[string]submission.Value, meta submission.Metadata, ok bool) {
	d := sealedDecoder{b: plaintext, s: string(plaintext)}
	if !d.byte('{') {
		return nil, meta, false
	}
	var seenData, seenMeta bool
	for !d.byte('}') {
		if seenData || seenMeta {
			if !d.byte(',') {
				return nil, meta, false
			}
		}
		key, kok := d.key()
		if !kok || !d.byte(':') {
			return nil, meta, false
		}
		switch {
		case key == "data" && !seenData:
			seenData = true
			if data, ok = d.answers(); !ok {
				return nil, meta, false
			}
		case key == "metadata" && !seenMeta:
			seenMeta = true
			if !d.metadata(&meta) {
				return nil, meta, false
			}
		default:
			return nil, meta, false
		}
	}
	d.space()
	if d.i != len(d.b) {
		return nil, meta, false
	}
	if data == nil {
		// encoding/json leaves a missing "data" nil; decodeSubmission then makes an empty map.
		data = map[string]submission.Value{}
	}
	return data, meta, true
}

// sealedDecoder walks b; s is the same bytes as one string, which decoded strings slice.
type sealedDecoder struct {
	b []byte
	s string
	i int
}

func (d *sealedDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// byte consumes c (after white space) when it comes next.
func (d *sealedDecoder) byte(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// peek reports whether c comes next (after white space) without consuming it.
func (d *sealedDecoder) peek(c byte) bool {
	d.space()
	return d.i < len(d.b) && d.b[d.i] == c
}

// null consumes a null literal.
func (d *sealedDecoder) null() bool {
	d.space()
	if len(d.b)-d.i >= 4 && d.s[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// key reads an object key: a string without escapes (ours are field IDs and fixed names; any
// other key makes the caller fall back, which also covers encoding/json's case-insensitive
// matching of struct fields).
func (d *sealedDecoder) key() (string, bool) {
	s, escaped, ok := d.str()
	return s, ok && !escaped
}

// str reads a JSON string. A string with escapes or invalid UTF-8 is decoded by encoding/json
// (escaped is then true), so its meaning is exactly encoding/json's.
func (d *sealedDecoder) str() (s string, escaped, ok bool) {
	if !d.byte('"') {
		return "", false, false
	}
	start := d.i
	plain := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			end := d.i
			d.i++
			if plain && utf8.ValidString(d.s[start:end]) {
				return d.s[start:end], false, true
			}
			var out string
			if err := jsoncodec.Unmarshal(d.b[start-1:d.i], &out); err != nil {
				return "", true, false
			}
			return out, true, true
		case c == '\\':
			plain = false
			d.i += 2
		case c < 0x20:
			return "", false, false
		default:
			d.i++
		}
	}
	return "", false, false
}

// answers reads the "data" object: field ID to a string or a list of strings.
func (d *sealedDecoder) answers() (map[string]submission.Value, bool) {
	if d.null() {
		return nil, true
	}
	if !d.byte('{') {
		return nil, false
	}
	out := make(map[string]submission.Value, 16)
	if d.byte('}') {
		return out, true
	}
	for {
		k, ok := d.key()
		if !ok || !d.byte(':') {
			return nil, false
		}
		if _, dup := out[k]; dup {
			return nil, false
		}
		if d.peek('[') {
			d.i++
			var items []string
			if !d.byte(']') {
				for {
					v, _, ok := d.str()
					if !ok {
						return nil, false
					}
					items = append(items, v)
					if d.byte(']') {
						break
					}
					if !d.byte(',') {
						return nil, false
					}
				}
			}
			if items == nil {
				items = []string{}
			}
			out[k] = submission.List(items)
		} else {
			v, _, ok := d.str()
			if !ok {
				return nil, false
			}
			out[k] = submission.Single(v)
		}
		if d.byte('}') {
			return out, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}

// metadata reads the "metadata" object into m.
func (d *sealedDecoder) metadata(m *submission.Metadata) bool {
	if d.null() {
		return true
	}
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	var seen [9]bool
	for {
		k, ok := d.key()
		if !ok || !d.byte(':') {
			return false
		}
		var slot int
		var dst **string
		switch k {
		case "ip_hash":
			slot, dst = 0, &m.IPHash
		case "user_agent":
			slot, dst = 1, &m.UserAgent
		case "referrer":
			slot, dst = 2, &m.Referrer
		case "reply_to":
			slot, dst = 3, &m.ReplyTo
		case "subject":
			slot, dst = 4, &m.Subject
		case "source":
			slot = 5
		case "utm":
			slot = 6
		case "language":
			slot, dst = 7, &m.Language
		case "score":
			slot = 8
		default:
			return false
		}
		if seen[slot] {
			return false
		}
		seen[slot] = true
		switch {
		case dst != nil:
			if !d.null() {
				v, _, ok := d.str()
				if !ok {
					return false
				}
				*dst = &v
			}
		case slot == 5:
			if !d.null() {
				v, _, ok := d.str()
				if !ok {
					return false
				}
				m.Source = submission.Source(v)
			}
		case slot == 8:
			if !d.score(m) {
				return false
			}
		default:
			if !d.utm(m) {
				return false
			}
		}
		if d.byte('}') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// score reads the submission's score: a JSON number, or null. The number's text is handed to
// encoding/json, so what it takes (and its rounding) is exactly encoding/json's.
func (d *sealedDecoder) score(m *submission.Metadata) bool {
	if d.null() {
		return true
	}
	d.space()
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		d.i++
	}
	if d.i == start {
		return false
	}
	var x float64
	if err := jsoncodec.Unmarshal(d.b[start:d.i], &x); err != nil {
		return false
	}
	m.Score = &x
	return true
}

// utm reads the campaign parameters: an object of strings, or null.
func (d *sealedDecoder) utm(m *submission.Metadata) bool {
	if d.null() {
		return true
	}
	if !d.byte('{') {
		return false
	}
	m.UTM = make(map[string]string, 2)
	if d.byte('}') {
		return true
	}
	for {
		k, ok := d.key()
		if !ok || !d.byte(':') {
			return false
		}
		if _, dup := m.UTM[k]; dup {
			return false
		}
		v, _, ok := d.str()
		if !ok {
			return false
		}
		m.UTM[k] = v
		if d.byte('}') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// plainJSONString reads a JSON string without escapes (most answers) without the decoder's
// reflection: exports read every stored answer of a form.
func plainJSONString(raw json.RawMessage) (string, bool) {
	n := len(raw)
	if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
		return "", false
	}
	for _, b := range raw[1 : n-1] {
		if b == '\\' || b == '"' || b < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(raw[1 : n-1]) {
		return "", false
	}
	return string(raw[1 : n-1]), true
}

// decodeSealedJSON is decodeSealedFast through encoding/json: any text it takes.
func decodeSealedJSON(plaintext []byte) (map[string]submission.Value, submission.Metadata, error) {
	var in sealedSubmission
	if err := jsoncodec.Unmarshal(plaintext, &in); err != nil {
		return nil, submission.Metadata{}, err
	}
	data := make(map[string]submission.Value, len(in.Data))
	for k, raw := range in.Data {
		if len(raw) > 0 && raw[0] == '[' {
			var list []string
			if err := jsoncodec.Unmarshal(raw, &list); err != nil {
				return nil, submission.Metadata{}, err
			}
			data[k] = submission.List(list)
			continue
		}
		if one, ok := plainJSONString(raw); ok {
			data[k] = submission.Single(one)
			continue
		}
		var one string
		if err := jsoncodec.Unmarshal(raw, &one); err != nil {
			return nil, submission.Metadata{}, err
		}
		data[k] = submission.Single(one)
	}
	m := in.Metadata
	return data, submission.Metadata{IPHash: m.IPHash, UserAgent: m.UserAgent, Referrer: m.Referrer, Source: submission.Source(m.Source), UTM: m.UTM,
		ReplyTo: m.ReplyTo, Subject: m.Subject, Language: m.Language, Score: m.Score}, nil
}
