package formstats

import (
	"testing"

	"github.com/formward/formward/domain/form"
)

func TestNumberSummary(t *testing.T) {
	if lo, m, hi := NumberSummary(map[string]int64{}); lo != nil || m != nil || hi != nil {
		t.Fatal("summary of nothing")
	}
	for _, c := range []struct {
		hist        map[string]int64
		lo, med, hi float64
		comment     string
	}{
		{map[string]int64{"3": 1}, 3, 3, 3, "one answer"},
		{map[string]int64{"1": 1, "10": 1}, 1, 5.5, 10, "even count: the mean of the two middle answers"},
		{map[string]int64{"-2.5": 2, "7": 3, "100": 1}, -2.5, 7, 100, "counts per value, negatives first"},
		{map[string]int64{"1": 2, "2": 2, "bad": 5, "9": 0}, 1, 1.5, 2, "unreadable and empty values are skipped"},
	} {
		lo, m, hi := NumberSummary(c.hist)
		if lo == nil || *lo != c.lo || *m != c.med || *hi != c.hi {
			t.Errorf("%s: %v %v %v", c.comment, lo, m, hi)
		}
	}
}

func TestSummariesAndReach(t *testing.T) {
	fields := []form.Field{
		{ID: "size", Type: form.TypeDropdown, Options: []string{"S", "M", "L"}, Page: 1},
		{ID: "ok", Type: form.TypeCheckbox, Page: 1},
		{ID: "qty", Type: form.TypeNumber, Page: 3},
		{ID: "note", Type: form.TypeText, Page: 3},
	}
	counts := map[string]FieldCounts{
		"size": {Answered: 3, Options: map[string]int64{"L": 2, "S": 1, "XXL": 4}},
		"qty":  {Answered: 2, Numbers: map[string]int64{"4": 1, "8": 1}},
		"note": {Answered: 1},
		"gone": {Answered: 9},
	}
	s := Summaries(fields, counts)
	if len(s) != 4 || s[0].FieldID != "size" || s[3].FieldID != "note" {
		t.Fatalf("summaries %+v", s)
	}
	// The field's options in its order, zeros included; an option no longer offered is left out.
	if want := []Option{{"S", 1}, {"M", 0}, {"L", 2}}; len(s[0].Options) != 3 || s[0].Options[0] != want[0] || s[0].Options[1] != want[1] || s[0].Options[2] != want[2] {
		t.Fatalf("size options %+v", s[0].Options)
	}
	if s[1].Kind != KindChoice || len(s[1].Options) != 2 || s[1].Answered != 0 {
		t.Fatalf("single checkbox %+v", s[1])
	}
	if s[2].Kind != KindNumber || *s[2].Median != 6 || s[3].Kind != KindOther || s[3].Options != nil || s[3].Min != nil {
		t.Fatalf("number and text %+v %+v", s[2], s[3])
	}
	r := Reach(fields, map[int]int64{1: 5, 3: 2})
	if len(r) != 2 || r[0] != (PageReach{Page: 1, Reached: 5}) || r[1] != (PageReach{Page: 3, Reached: 2}) {
		t.Fatalf("reach %+v", r)
	}
	if Reach(fields[:2], map[int]int64{1: 5}) != nil {
		t.Fatal("a form on one page has no reach")
	}
}

func TestRoundNumber(t *testing.T) {
	for in, want := range map[string]string{"123456": "123000", "0.012345": "0.0123", "-98765": "-98800", "7": "7", "x": "x"} {
		if got := RoundNumber(in); got != want {
			t.Errorf("RoundNumber(%s) = %s, want %s", in, got, want)
		}
	}
}
