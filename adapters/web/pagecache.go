package web

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"sync"

	"github.com/formward/formward/domain/form"
)

// The clean public page (GET /f/{id}, no posted values, no errors) is the same for every view
// of a form version except the render token, the proof-of-work challenge and the UTM hidden
// inputs. It is rendered once per version with unguessable markers in those places, split at
// them, and served by splicing the per-view values, escaped as html/template escapes them.

// pageCacheMax bounds the cached pages; the map is cleared when it is full.
const pageCacheMax = 1024

type pageSlot uint8

const (
	slotToken pageSlot = iota
	slotChallenge
	slotUTM
)

// cachedPage is a rendered page cut at its per-view slots: parts[i] comes before slots[i],
// and the last part after the last slot.
type cachedPage struct {
	parts []string
	slots []pageSlot
	size  int
	// gz are the parts compressed (pagegzip.go), gzSize their total size.
	gz     []gzipPart
	gzSize int
}

// pageCache holds the pages of form versions, keyed by what determines them.
type pageCache struct {
	mu    sync.RWMutex
	pages map[string]*cachedPage
	// markers put in the template where the per-view values go; random per process, so no
	// form content can contain them.
	tokenMark, challengeMark, utmMark string
}

func newPageCache() (*pageCache, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	m := hex.EncodeToString(b[:])
	return &pageCache{pages: make(map[string]*cachedPage), tokenMark: "fwtok" + m, challengeMark: "fwpow" + m, utmMark: "fwutm" + m}, nil
}

func (pc *pageCache) get(key string) *cachedPage {
	pc.mu.RLock()
	p := pc.pages[key]
	pc.mu.RUnlock()
	return p
}

func (pc *pageCache) put(key string, p *cachedPage) {
	pc.mu.Lock()
	if len(pc.pages) >= pageCacheMax {
		clear(pc.pages)
	}
	pc.pages[key] = p
	pc.mu.Unlock()
}

// pageKey names a form version's clean page: the form ID, its updated_at and a digest of every
// template input except the per-view ones (the token, challenge and UTM values), so a changed
// form never matches an older page even when updated_at did not move.
func pageKey(f *form.Form, d *pageData) string {
	fp := fingerprints.Get().(*fingerprint)
	defer fingerprints.Put(fp)
	fp.b = fp.b[:0]
	fp.str(d.Title, d.Description, d.Action, d.FormError)
	fp.flag(d.Multipart, d.PoW, d.Honeypot)
	fp.num(len(d.Fields))
	for _, v := range d.Fields {
		fp.str(v.ID, v.InputID, v.ErrorID, v.Label, v.Kind, v.InputType, v.Placeholder, v.Help, v.HelpID, v.Value, v.Error, v.Accept, v.Rule)
		fp.flag(v.Required, v.Checked)
		fp.recall(v.LabelParts, v.HelpParts)
		fp.num(len(v.Options))
		for _, o := range v.Options {
			fp.str(o.ID, o.Value, o.Label)
			fp.flag(o.Checked)
		}
	}
	fp.num(len(d.Carry))
	for _, cv := range d.Carry {
		fp.str(cv.Name, cv.Value)
	}
	fp.flag(d.Steps != nil)
	if st := d.Steps; st != nil {
		fp.num(st.Page, st.Index, st.Count)
		fp.str(st.Action)
	}
	fp.num(len(d.Errors))
	for _, e := range d.Errors {
		fp.str(e.Target, e.Label, e.Message)
	}
	fp.str(d.Notice, d.Resume)
	fp.flag(d.Partial)
	if d.Lang != nil { // the words and the switcher follow from the language
		fp.str(d.Lang.Tag)
	}
	fp.num(d.Wait)
	fp.str(d.Theme.Class, d.Theme.CSS, d.Theme.Logo)
	fp.num(d.Theme.LogoWidth, d.Theme.LogoHeight)
	fp.flag(d.Captcha != nil)
	if d.Captcha != nil {
		fp.str(d.Captcha.Script, d.Captcha.Class, d.Captcha.SiteKey)
	}
	sum := sha256.Sum256(fp.b)
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(f.UpdatedAt().UnixNano()))
	return f.ID() + "\x00" + string(ts[:]) + string(sum[:])
}

// fingerprint writes values unambiguously (length-prefixed) into a buffer, hashed once at the
// end.
type fingerprint struct {
	b []byte
}

var fingerprints = sync.Pool{New: func() any { return &fingerprint{b: make([]byte, 0, 4096)} }}

// num writes each number in turn.
func (fp *fingerprint) num(ns ...int) {
	for _, n := range ns {
		fp.b = binary.BigEndian.AppendUint64(fp.b, uint64(n))
	}
}

// str writes each string in turn, its length first.
func (fp *fingerprint) str(ss ...string) {
	for _, s := range ss {
		fp.num(len(s))
		fp.b = append(fp.b, s...)
	}
}

// flag writes each flag in turn, as 1 or 0.
func (fp *fingerprint) flag(bs ...bool) {
	for _, b := range bs {
		if b {
			fp.num(1)
		} else {
			fp.num(0)
		}
	}
}

var errPageMarkers = errors.New("public page: per-view markers not found exactly once")

// build renders the clean page of data (its Token, Challenge and UTM ignored) with markers and
// cuts it at them.
func (h *Handler) buildPage(data pageData) (*cachedPage, error) {
	pc := h.pages
	data.Token = pc.tokenMark
	data.Challenge = ""
	if data.PoW {
		data.Challenge = pc.challengeMark
	}
	data.UTM = []utmValue{{Name: pc.utmMark, Value: pc.utmMark}}
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, "form.html", data); err != nil {
		return nil, err
	}
	out := buf.String()
	utmBlock := `<input type="hidden" name="` + pc.utmMark + `" value="` + pc.utmMark + `">`
	wantChallenge := 0
	if data.PoW {
		wantChallenge = 1
	}
	if strings.Count(out, pc.tokenMark) != 1 || strings.Count(out, pc.challengeMark) != wantChallenge ||
		strings.Count(out, pc.utmMark) != 2 || strings.Count(out, utmBlock) != 1 {
		return nil, errPageMarkers
	}
	type cut struct {
		at, n int
		slot  pageSlot
	}
	cuts := []cut{{strings.Index(out, pc.tokenMark), len(pc.tokenMark), slotToken}, {strings.Index(out, utmBlock), len(utmBlock), slotUTM}}
	if data.PoW {
		cuts = append(cuts, cut{strings.Index(out, pc.challengeMark), len(pc.challengeMark), slotChallenge})
	}
	// at most three cuts: order them by position.
	for i := 1; i < len(cuts); i++ {
		for j := i; j > 0 && cuts[j].at < cuts[j-1].at; j-- {
			cuts[j], cuts[j-1] = cuts[j-1], cuts[j]
		}
	}
	p := &cachedPage{}
	prev := 0
	for _, c := range cuts {
		p.parts = append(p.parts, out[prev:c.at])
		p.slots = append(p.slots, c.slot)
		prev = c.at + c.n
	}
	p.parts = append(p.parts, out[prev:])
	for _, s := range p.parts {
		p.size += len(s)
	}
	gz, err := compressParts(p.parts)
	if err != nil {
		return nil, err
	}
	p.gz = gz
	for _, g := range gz {
		p.gzSize += len(g.deflate)
	}
	return p, nil
}

// write splices the per-view values into the page.
func (p *cachedPage) write(buf *bytes.Buffer, token, challenge string, utm []utmValue) {
	buf.Grow(p.size + len(token) + 2*len(challenge) + 128*len(utm))
	for i, s := range p.slots {
		buf.WriteString(p.parts[i])
		p.writeSlot(buf, s, token, challenge, utm)
	}
	buf.WriteString(p.parts[len(p.parts)-1])
}

// writeSlot writes a slot's per-view value, escaped.
func (p *cachedPage) writeSlot(buf *bytes.Buffer, s pageSlot, token, challenge string, utm []utmValue) {
	switch s {
	case slotToken:
		attrEscape(buf, token)
	case slotChallenge:
		attrEscape(buf, challenge)
	case slotUTM:
		for _, u := range utm {
			buf.WriteString(`<input type="hidden" name="`)
			attrEscape(buf, u.Name)
			buf.WriteString(`" value="`)
			attrEscape(buf, u.Value)
			buf.WriteString(`">`)
		}
	}
}

// attrEscape writes s as html/template writes a plain string in a quoted attribute value
// (attrEscaper: htmlReplacementTable, other runes as they are): NUL, quotes, &, +, < and >
// replaced. All of them are ASCII, which never occurs inside a multi-byte sequence, so bytes do.
func attrEscape(buf *bytes.Buffer, s string) {
	written := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		buf.WriteString(s[written:i])
		buf.WriteString(repl)
		written = i + 1
	}
	buf.WriteString(s[written:])
}
