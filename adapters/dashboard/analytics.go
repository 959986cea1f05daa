package dashboard

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/formstats"
)

// The per-question and per-page charts are SVG drawn in CSS pixels (no viewBox): each row is
// a label line and a bar under it whose width is a percentage of the chart's, so the text
// stays readable at any width and nothing needs a script.
const (
	rowHeight = 48 // one option or page: its label line and its bar
	rowLabelY = 18 // the label's baseline in the row
	rowBarY   = 26 // the bar's top in the row
	rowBarH   = 14
	// Labels longer than these are cut with "…" in the chart (the table has them whole): the
	// long cut on wide screens, the short one below 1024 px (the CSS shows one of the two), so
	// that a label never runs into its count at the end of the line.
	labelLong  = 64
	labelShort = 26
)

// chartRow is one bar of a per-question or per-page chart.
type chartRow struct {
	Label, Long, Short string
	Count              int64
	// Percent is the row's share as shown ("40%"); Width the bar's width in % of the chart's.
	Percent string
	Width   string
	// Y is the row's top; LabelY and BarY its label's baseline and its bar's top.
	Y, LabelY, BarY int
	// DropOff is a page's loss to the next step, as shown ("25%"); "—" when nothing reached it.
	DropOff string
	Left    int64
	// Saved is how many open drafts wait at a page (save and resume).
	Saved int64
}

// questionView is one question's summary on the analytics page.
type questionView struct {
	// ID names the chart's elements (aria-labelledby); Label is the question.
	ID, Label, Type string
	Answered        int64
	// AnsweredPercent is the answered count over the period's submissions.
	AnsweredPercent string
	Choice, Number  bool
	// Multiple: several options can be chosen (a checkbox group), so the shares can add up
	// to more than 100%.
	Multiple         bool
	Rows             []chartRow
	Height           int
	Min, Median, Max string
}

// analyticsDetail is what the analytics page shows beyond the totals and the daily chart:
// submissions by source, each question's answers and a multi-page form's reach per page.
type analyticsDetail struct {
	FormSubmissions, APISubmissions int64
	Questions                       []questionView
	Pages                           []chartRow
	PagesHeight                     int
	// Saving: the form keeps drafts, so the page table shows how many wait at each page.
	Saving bool
	// Funnel is views, starts and form submissions, each as a share of the views.
	Funnel       []chartRow
	FunnelHeight int
	BarH         int
}

// detailOf lays out the report's submissions by source, questions and pages.
func detailOf(r formstats.Report, fields []form.Field) analyticsDetail {
	d := analyticsDetail{FormSubmissions: r.FormSubmissions, APISubmissions: r.APISubmissions, BarH: rowBarH}
	for i, st := range []struct {
		label string
		n     int64
	}{{"Viewed the page", r.Views}, {"Started to fill it in", r.Starts}, {"Submitted from the form", r.FormSubmissions}} {
		d.Funnel = append(d.Funnel, row(i, st.label, st.n, r.Views))
	}
	d.FunnelHeight = len(d.Funnel) * rowHeight
	byID := make(map[string]form.Field, len(fields))
	for _, f := range fields {
		byID[f.ID] = f
	}
	for i, s := range r.Fields {
		q := questionView{ID: "q" + strconv.Itoa(i+1), Label: s.Label, Type: string(s.Type), Answered: s.Answered,
			AnsweredPercent: percent(s.Answered, r.Submissions), Min: "—", Median: "—", Max: "—"}
		switch s.Kind {
		case formstats.KindChoice:
			q.Choice = true
			q.Multiple = byID[s.FieldID].Multiple()
			single := len(byID[s.FieldID].Options) == 0
			for j, o := range s.Options {
				label := o.Option
				if single {
					label = checkboxWords[label]
				}
				q.Rows = append(q.Rows, row(j, label, o.Count, s.Answered))
			}
			q.Height = len(q.Rows) * rowHeight
		case formstats.KindNumber:
			q.Number = true
			q.Min, q.Median, q.Max = number(s.Min), number(s.Median), number(s.Max)
		}
		d.Questions = append(d.Questions, q)
	}
	if len(r.Pages) > 0 {
		first := r.Pages[0].Reached
		for i, p := range r.Pages {
			pr := row(i, "Page "+strconv.Itoa(p.Page), p.Reached, first)
			// The next step is the next page, or the submission after the last page.
			next := r.FormSubmissions
			if i+1 < len(r.Pages) {
				next = r.Pages[i+1].Reached
			}
			pr.Left = max(0, p.Reached-next)
			pr.Saved = p.Saved
			pr.DropOff = "—"
			if p.Reached > 0 {
				pr.DropOff = percent(pr.Left, p.Reached)
			}
			d.Pages = append(d.Pages, pr)
		}
		d.PagesHeight = len(d.Pages) * rowHeight
	}
	return d
}

// checkboxWords name a single checkbox's answers (formstats.SingleCheckboxOptions).
var checkboxWords = map[string]string{"true": "Checked", "false": "Not checked"}

// row lays out the i-th bar of a chart: count out of total.
func row(i int, label string, count, total int64) chartRow {
	y := i * rowHeight
	w := 0.0
	if total > 0 {
		w = math.Min(100, float64(count)/float64(total)*100)
	}
	return chartRow{Label: label, Long: cut(label, labelLong), Short: cut(label, labelShort), Count: count,
		Percent: percent(count, total), Width: strconv.FormatFloat(math.Round(w*10)/10, 'f', -1, 64) + "%",
		Y: y, LabelY: y + rowLabelY, BarY: y + rowBarY}
}

// percent is n over total as a person reads it ("40%", "33.3%"); "—" without a total.
func percent(n, total int64) string {
	if total <= 0 {
		return "—"
	}
	p := math.Round(float64(n)/float64(total)*1000) / 10
	return strconv.FormatFloat(p, 'f', -1, 64) + "%"
}

// number writes a min, median or max ("—" without answers), rounded to six decimals so that a
// median between two values reads 0.3, not 0.30000000000000004.
func number(v *float64) string {
	if v == nil {
		return "—"
	}
	return strconv.FormatFloat(math.Round(*v*1e6)/1e6, 'f', -1, 64)
}

// cut shortens s to at most n characters, ending with "…" when it was longer.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
