package formstats

import (
	"testing"
	"time"
)

func TestBucketOf(t *testing.T) {
	for _, c := range []struct {
		fill time.Duration
		want int
	}{{0, 5}, {-time.Second, 5}, {5 * time.Second, 5}, {5*time.Second + 1, 10}, {61 * time.Second, 90}, {48 * time.Hour, 86400}} {
		if got := BucketOf(c.fill); got != c.want {
			t.Errorf("BucketOf(%v) = %d, want %d", c.fill, got, c.want)
		}
	}
}

func TestMedian(t *testing.T) {
	if _, ok := Median(map[int]int64{}); ok {
		t.Fatal("median of nothing")
	}
	// Four in (10,15], none elsewhere: the median sits in the middle of that bucket.
	if m, _ := Median(map[int]int64{15: 4}); m != 12.5 {
		t.Fatalf("median = %v, want 12.5", m)
	}
	// 1 in (0,5], 1 in (5,10], 2 in (60,90]: half of 4 is reached at the end of (5,10].
	if m, _ := Median(map[int]int64{5: 1, 10: 1, 90: 2}); m != 10 {
		t.Fatalf("median = %v, want 10", m)
	}
}

func TestNewReportFillsEveryDay(t *testing.T) {
	first := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 0, 2)
	r := NewReport(first, last, []Counts{
		{Day: first, Views: 4, Starts: 4, Submissions: 3, Completions: 2, FormSubmissions: 2, APISubmissions: 1, FillTimes: map[int]int64{30: 2}},
		{Day: last, Views: 4, Submissions: 1, APISubmissions: 1},
	}, nil)
	if len(r.Daily) != 3 || r.Daily[1].Views != 0 || !r.Daily[2].Date.Equal(last) {
		t.Fatalf("daily = %+v", r.Daily)
	}
	if r.Views != 8 || r.Starts != 4 || r.Submissions != 4 || r.FormSubmissions != 2 || r.APISubmissions != 2 {
		t.Fatalf("totals = %+v", r)
	}
	// Completion: form submissions over starts; API submissions have no start.
	if r.CompletionRate == nil || *r.CompletionRate != 0.5 {
		t.Fatalf("completion rate = %v", r.CompletionRate)
	}
	if r.MedianSecondsToComplete == nil || *r.MedianSecondsToComplete != 25 {
		t.Fatalf("median = %v", r.MedianSecondsToComplete)
	}
	if r := NewReport(first, last, nil, nil); r.CompletionRate != nil || r.MedianSecondsToComplete != nil {
		t.Fatalf("empty report = %+v", r)
	}
}
