package dashboard

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
)

// The builder shows a form's fields as respondents meet them: hidden fields apart (they fill
// from the URL and sit on no page), then the questions in order with a page break between two
// pages. Every change is made on that sequence and written back as the field list the API
// takes, each field's page counted from the breaks above it, so a question moved above a break
// moves to the earlier page.

// sequence is the questions in order with nil standing for a page break.
type sequence []*form.FieldSpec

// layoutOf splits specs into the hidden fields and the questions' sequence; questions keep
// their order within a page and pages come in order (a form made through the API may list a
// page-2 field before a page-1 one).
func layoutOf(specs []form.FieldSpec) (hidden []form.FieldSpec, seq sequence) {
	var shown []form.FieldSpec
	for _, s := range specs {
		if s.Hidden {
			hidden = append(hidden, s)
		} else {
			shown = append(shown, s)
		}
	}
	sort.SliceStable(shown, func(i, j int) bool { return fieldPage(shown[i]) < fieldPage(shown[j]) })
	for i := range shown {
		if i > 0 && fieldPage(shown[i]) != fieldPage(shown[i-1]) {
			seq = append(seq, nil)
		}
		seq = append(seq, &shown[i])
	}
	return hidden, seq
}

func fieldPage(s form.FieldSpec) int {
	if s.Page == nil || *s.Page < 1 {
		return 1
	}
	return *s.Page
}

// fieldsOf writes the layout back as the field list: hidden fields first (on page 1, so every
// question's display rule may test them), then the questions with their pages. A break at
// either end or next to another leaves a page without questions: that is refused in words.
func fieldsOf(hidden []form.FieldSpec, seq sequence) ([]form.FieldSpec, error) {
	out := make([]form.FieldSpec, 0, len(hidden)+len(seq))
	for _, s := range hidden {
		s.Page = nil
		out = append(out, s)
	}
	page := 1
	for i, s := range seq {
		if s == nil {
			if i == 0 || i == len(seq)-1 || seq[i-1] == nil {
				empty := page
				if i > 0 {
					empty = page + 1
				}
				return nil, fmt.Errorf("page %d would have no questions; put a question on it or remove its page break", empty)
			}
			page++
			continue
		}
		f := *s
		f.Page = nil
		if page > 1 {
			p := page
			f.Page = &p
		}
		out = append(out, f)
	}
	return out, nil
}

// indexOf finds the field id in the sequence; -1 when it is not a question.
func (seq sequence) indexOf(id string) int {
	for i, s := range seq {
		if s != nil && s.ID == id {
			return i
		}
	}
	return -1
}

// breakAt finds the n-th page break (1: the one before page 2); -1 when there is none.
func (seq sequence) breakAt(n int) int {
	for i, s := range seq {
		if s == nil {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}

// insert puts s at position i.
func (seq sequence) insert(i int, s *form.FieldSpec) sequence {
	seq = append(seq, nil)
	copy(seq[i+1:], seq[i:])
	seq[i] = s
	return seq
}

// pageNumbers gives each question's page, by ID, as the sequence places it.
func (seq sequence) pageNumbers() map[string]int {
	out := make(map[string]int, len(seq))
	page := 1
	for _, s := range seq {
		if s == nil {
			page++
		} else {
			out[s.ID] = page
		}
	}
	return out
}

// saveLayout writes a changed layout: a page left without questions is refused before anything
// is sent, like the domain refuses it.
func (h *Handler) saveLayout(c *gin.Context, fv forms.FormView, hidden []form.FieldSpec, seq sequence, notice, anchor string) {
	specs, err := fieldsOf(hidden, seq)
	if err != nil {
		h.drawBuilder(c, fv, builderState{status: http.StatusUnprocessableEntity, rest: sentence(err.Error())})
		return
	}
	h.patchFields(c, fv, specs, "", notice, anchor)
}

// moveField moves a question one step up or down; passing a page break moves it to the
// neighbouring page.
func (h *Handler) moveField(c *gin.Context) {
	fv, specs, i, ok := h.editableField(c)
	if !ok {
		return
	}
	hidden, seq := layoutOf(specs)
	id := specs[i].ID
	at := seq.indexOf(id)
	to := at - 1
	if c.PostForm("direction") == "down" {
		to = at + 1
	}
	if at < 0 || to < 0 || to >= len(seq) {
		h.redirect(c, "/app/forms/"+fv.Form.ID()+"#field-"+id, "")
		return
	}
	seq[at], seq[to] = seq[to], seq[at]
	pages, n := seq.pageNumbers(), 0
	for _, s := range seq {
		if s != nil {
			n++
			if s.ID == id {
				break
			}
		}
	}
	var notice string
	if layoutPages(seq) > 1 {
		notice = fmt.Sprintf("%s moved to position %d of %d, on page %d.", specs[i].Label, n, questionsIn(seq), pages[id])
	} else {
		notice = fmt.Sprintf("%s moved to position %d of %d.", specs[i].Label, n, questionsIn(seq))
	}
	h.saveLayout(c, fv, hidden, seq, notice, "#field-"+id)
}

func questionsIn(seq sequence) int {
	n := 0
	for _, s := range seq {
		if s != nil {
			n++
		}
	}
	return n
}

func layoutPages(seq sequence) int { return len(seq) - questionsIn(seq) + 1 }

// duplicateField adds a copy of a question right after it: same type, options, rules and
// logic, a label marked as a copy and a key of its own.
func (h *Handler) duplicateField(c *gin.Context) {
	fv, specs, i, ok := h.editableField(c)
	if !ok {
		return
	}
	cp := specs[i]
	cp.ID, cp.Key = "", nil
	cp.Label = strings.TrimSpace(cp.Label) + " (copy)"
	cp.Options = append([]string(nil), cp.Options...)
	cp.Accept = append([]string(nil), cp.Accept...)
	if cp.Hidden {
		specs = append(specs[:i+1], append([]form.FieldSpec{cp}, specs[i+1:]...)...)
		h.patchFields(c, fv, specs, "", cp.Label+" added.", "#hidden")
		return
	}
	hidden, seq := layoutOf(specs)
	seq = seq.insert(seq.indexOf(specs[i].ID)+1, &cp)
	h.saveLayout(c, fv, hidden, seq, cp.Label+" added below "+specs[i].Label+".", "#field-"+specs[i].ID)
}

// addBreak starts a new page after a question (after=<field id>).
func (h *Handler) addBreak(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	hidden, seq := layoutOf(specsOf(fv.Form.Fields()))
	at := seq.indexOf(c.PostForm("after"))
	if at < 0 {
		h.fail(c, fmt.Errorf("page break: %w", errBadOrder))
		return
	}
	seq = seq.insert(at+1, nil)
	h.saveLayout(c, fv, hidden, seq, fmt.Sprintf("Page break added: page %d starts after %s.", seq.pageNumbers()[seq[at].ID]+1, seq[at].Label), "#questions")
}

// changeBreak moves (direction=up|down) or removes (remove=1) the n-th page break.
func (h *Handler) changeBreak(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	hidden, seq := layoutOf(specsOf(fv.Form.Fields()))
	n, _ := strconv.Atoi(c.Param("n"))
	at := seq.breakAt(n)
	if at < 0 {
		h.fail(c, fmt.Errorf("page break: %w", errBadOrder))
		return
	}
	if c.PostForm("remove") != "" {
		seq = append(seq[:at], seq[at+1:]...)
		h.saveLayout(c, fv, hidden, seq, fmt.Sprintf("Page break removed: pages %d and %d are one page now.", n, n+1), "#questions")
		return
	}
	to := at - 1
	if c.PostForm("direction") == "down" {
		to = at + 1
	}
	if to < 0 || to >= len(seq) {
		h.redirect(c, "/app/forms/"+fv.Form.ID()+"#break-"+strconv.Itoa(n), "")
		return
	}
	seq[at], seq[to] = seq[to], seq[at]
	h.saveLayout(c, fv, hidden, seq, fmt.Sprintf("Page %d now starts at %s.", n+1, firstAfter(seq, to)), "#break-"+strconv.Itoa(n))
}

// firstAfter names the question after position i, or says there is none.
func firstAfter(seq sequence, i int) string {
	for _, s := range seq[i+1:] {
		if s != nil {
			return s.Label
		}
	}
	return "the end"
}

// reorderFields takes the full new order of the questions, page breaks as "|"
// (order=fld_a,fld_b,|,fld_c), as drag and drop sends it; hidden fields keep their place.
func (h *Handler) reorderFields(c *gin.Context) {
	fv, ok := h.editable(c)
	if !ok {
		return
	}
	hidden, seq := layoutOf(specsOf(fv.Form.Fields()))
	byID := make(map[string]*form.FieldSpec, len(seq))
	for _, s := range seq {
		if s != nil {
			byID[s.ID] = s
		}
	}
	var next sequence
	for _, tok := range strings.Split(c.PostForm("order"), ",") {
		tok = strings.TrimSpace(tok)
		if tok == "|" {
			next = append(next, nil)
			continue
		}
		s, ok := byID[tok]
		if !ok {
			h.fail(c, fmt.Errorf("reorder: %w", errBadOrder))
			return
		}
		delete(byID, tok) // taken
		next = append(next, s)
	}
	if len(byID) > 0 {
		h.fail(c, fmt.Errorf("reorder: %w", errBadOrder))
		return
	}
	h.saveLayout(c, fv, hidden, next, "Questions reordered.", "#questions")
}
