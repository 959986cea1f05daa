// Package formstats is how a form's public page performs: views, starts, submissions,
// completion rate and time to complete, counted per UTC day.
package formstats

import (
	"sort"
	"time"

	"github.com/formward/formward/domain/form"
)

// Buckets are the upper bounds, in seconds, of the fill-time histogram: a completion that took
// d falls in the first bucket whose bound is at least d. The median read from it is
// approximate: exact to within its bucket, interpolated linearly inside it. Fill times beyond
// the last bound count in the last bucket.
var Buckets = []int{5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 420, 600, 900, 1200, 1800, 2700, 3600, 7200, 14400, 28800, 86400}

// BucketOf returns the bucket (its upper bound in seconds) of a fill time.
func BucketOf(fill time.Duration) int {
	if fill < 0 {
		fill = 0
	}
	for _, b := range Buckets {
		if fill <= time.Duration(b)*time.Second {
			return b
		}
	}
	return Buckets[len(Buckets)-1]
}

// Day is the UTC day of t, as midnight UTC.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Median returns the approximate median of the fill times counted in hist (bucket upper bound
// in seconds → count), in seconds; ok is false when hist counts nothing.
func Median(hist map[int]int64) (seconds float64, ok bool) {
	var total int64
	bounds := make([]int, 0, len(hist))
	for b, n := range hist {
		if n > 0 {
			total += n
			bounds = append(bounds, b)
		}
	}
	if total == 0 {
		return 0, false
	}
	sort.Ints(bounds)
	half := float64(total) / 2
	var below int64
	for _, b := range bounds {
		n := hist[b]
		if float64(below+n) >= half {
			lower := float64(lowerBound(b))
			frac := (half - float64(below)) / float64(n)
			return lower + frac*(float64(b)-lower), true
		}
		below += n
	}
	return float64(bounds[len(bounds)-1]), true
}

// lowerBound is the bound of the bucket before b (0 for the first).
func lowerBound(b int) int {
	lower := 0
	for _, x := range Buckets {
		if x >= b {
			break
		}
		lower = x
	}
	return lower
}

// Daily is one day's counts as a report shows them.
type Daily struct {
	Date        time.Time
	Views       int64
	Starts      int64
	Submissions int64
}

// Report is a form's performance over a period.
type Report struct {
	Views, Starts, Submissions int64
	// FormSubmissions came through the public page (or a form-backend post), APISubmissions
	// through the API; together they are Submissions (days counted before the split count
	// their submissions from a rendered page as form ones, the rest as API ones).
	FormSubmissions, APISubmissions int64
	// CompletionRate is form submissions over starts (0..1); nil without starts.
	CompletionRate *float64
	// MedianSecondsToComplete is the approximate median time from the page's render to its
	// submission; nil when no submission from the page was counted.
	MedianSecondsToComplete *float64
	// Daily has every day of the period, oldest first, days without activity included.
	Daily []Daily
	// Fields summarise the answers of the form's current fields, in their order.
	Fields []FieldSummary
	// Pages tell how many visits reached each page of a multi-page form; nil for one page.
	Pages []PageReach
}

// Counts are one day's stored counts, as the report reads them.
type Counts struct {
	Day                                     time.Time
	Views, Starts, Submissions, Completions int64
	FormSubmissions, APISubmissions         int64
	FillTimes                               map[int]int64
	Fields                                  map[string]FieldCounts
	Pages                                   map[int]int64
}

// NewReport sums the days of the period from first to last (midnight UTC, inclusive), with the
// answers of the form's current fields.
func NewReport(first, last time.Time, days []Counts, fields []form.Field) Report {
	byDay := make(map[time.Time]Counts, len(days))
	for _, d := range days {
		byDay[Day(d.Day)] = d
	}
	var r Report
	hist := map[int]int64{}
	answers := map[string]FieldCounts{}
	pages := map[int]int64{}
	for d := Day(first); !d.After(last); d = d.AddDate(0, 0, 1) {
		c := byDay[d]
		r.Views += c.Views
		r.Starts += c.Starts
		r.Submissions += c.Submissions
		r.FormSubmissions += c.FormSubmissions
		r.APISubmissions += c.APISubmissions
		for b, n := range c.FillTimes {
			hist[b] += n
		}
		for id, fc := range c.Fields {
			answers[id] = answers[id].Add(fc)
		}
		for p, n := range c.Pages {
			pages[p] += n
		}
		r.Daily = append(r.Daily, Daily{Date: d, Views: c.Views, Starts: c.Starts, Submissions: c.Submissions})
	}
	if r.Starts > 0 {
		rate := float64(r.FormSubmissions) / float64(r.Starts)
		if rate > 1 {
			rate = 1 // a start counted by another process, or on the day before the period
		}
		r.CompletionRate = &rate
	}
	r.Fields = Summaries(fields, answers)
	r.Pages = Reach(fields, pages)
	if m, ok := Median(hist); ok {
		r.MedianSecondsToComplete = &m
	}
	return r
}
