package system

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/test/testkit"
)

func TestClockIsUTCMilliseconds(t *testing.T) {
	now := Clock{}.Now()
	if now.Location() != time.UTC {
		t.Fatalf("location = %v, want UTC", now.Location())
	}
	if now.Nanosecond()%int(time.Millisecond) != 0 {
		t.Fatalf("now = %v has sub-millisecond precision", now)
	}
	if d := time.Since(now); d < 0 || d > time.Second {
		t.Fatalf("now = %v is %v away from the wall clock", now, d)
	}
	// No monotonic reading: a value read back from storage compares equal with ==.
	if now != now.Round(0) {
		t.Fatalf("now carries a monotonic clock reading")
	}
}

func TestNewShape(t *testing.T) {
	ids := NewIDs()
	for _, prefix := range []string{"frm", "sub", "dek", "x", ""} {
		id := ids.New(prefix)
		if !strings.HasPrefix(id, prefix+"_") {
			t.Fatalf("id %q does not start with %q", id, prefix+"_")
		}
		body := strings.TrimPrefix(id, prefix+"_")
		if len(body) != 29 || EncodedLen != 29 {
			t.Fatalf("id %q has a %d-character body, want 29", id, len(body))
		}
		for _, c := range body {
			if !strings.ContainsRune(crockford, c) {
				t.Fatalf("id %q has %q outside Crockford base32", id, c)
			}
		}
		if !Valid(prefix, id) {
			t.Fatalf("Valid(%q, %q) = false", prefix, id)
		}
	}
}

func TestNewUniqueConcurrent(t *testing.T) {
	const workers, each = 8, 12500 // 100k in all
	ids := NewIDs()
	results := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			out := make([]string, each)
			for i := range out {
				out[i] = ids.New("sub")
			}
			results[w] = out
		})
	}
	wg.Wait()
	seen := make(map[string]struct{}, workers*each)
	for _, out := range results {
		for _, id := range out {
			if _, dup := seen[id]; dup {
				t.Fatalf("duplicate id %q", id)
			}
			seen[id] = struct{}{}
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("got %d ids, want %d", len(seen), workers*each)
	}
}

func TestNewOrderedByTime(t *testing.T) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var n int
	ids := &IDs{now: func() time.Time { n++; return base.Add(time.Duration(n) * time.Millisecond) }}
	var made []string
	for range 1000 {
		made = append(made, ids.New("frm"))
	}
	if !sort.StringsAreSorted(made) {
		t.Fatal("ids made in later milliseconds do not sort later")
	}
	// The encoded time round-trips.
	got, ok := Time("frm", made[0])
	if !ok || !got.Equal(base.Add(time.Millisecond)) {
		t.Fatalf("Time = %v, %v; want %v", got, ok, base.Add(time.Millisecond))
	}
	// Far-apart times also sort, across the whole 48-bit range in use.
	early := (&IDs{now: func() time.Time { return time.UnixMilli(1) }}).New("frm")
	late := (&IDs{now: func() time.Time { return time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) }}).New("frm")
	if !(early < made[0] && made[0] < late) {
		t.Fatalf("ordering broken: %q %q %q", early, made[0], late)
	}
}

func TestNewWallClockOrder(t *testing.T) {
	ids := NewIDs()
	a := ids.New("frm")
	ta, _ := Time("frm", a)
	testkit.PastMillisecond(t, ta) // IDs carry milliseconds
	b := ids.New("frm")
	if a >= b {
		t.Fatalf("%q made before %q but sorts after it", a, b)
	}
	if d := time.Since(ta); d < 0 || d > time.Second {
		t.Fatalf("encoded time %v is %v from now", ta, d)
	}
}

func TestValid(t *testing.T) {
	good := NewIDs().New("frm")
	body := good[4:]
	cases := []struct {
		name, prefix, id string
		want             bool
	}{
		{"good", "frm", good, true},
		{"zeros", "frm", "frm_" + strings.Repeat("0", 29), true},
		{"wrong prefix", "sub", good, false},
		{"prefix is a prefix of the prefix", "fr", good, false},
		{"no underscore", "frm", "frm-" + body, false},
		{"short", "frm", good[:len(good)-1], false},
		{"long", "frm", good + "0", false},
		{"lower case", "frm", "frm_" + strings.ToLower(body), strings.ToLower(body) == body},
		{"letter I", "frm", "frm_I" + body[1:], false},
		{"letter L", "frm", "frm_L" + body[1:], false},
		{"letter O", "frm", "frm_O" + body[1:], false},
		{"letter U", "frm", "frm_U" + body[1:], false},
		{"padding", "frm", "frm_" + body[:28] + "=", false},
		{"path traversal", "frm", "frm_" + strings.Repeat(".", 27) + "/0", false},
		{"non-ASCII", "frm", "frm_" + body[:27] + "é", false},
		{"padding bit set", "frm", "frm_" + strings.Repeat("0", 28) + "1", false},
		{"empty", "frm", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Valid(c.prefix, c.id); got != c.want {
				t.Fatalf("Valid(%q, %q) = %v, want %v", c.prefix, c.id, got, c.want)
			}
		})
	}
	if _, ok := Time("frm", "frm_nope"); ok {
		t.Fatal("Time accepted a malformed id")
	}
}

func BenchmarkNew(b *testing.B) {
	ids := NewIDs()
	b.ReportAllocs()
	for b.Loop() {
		_ = ids.New("sub")
	}
}
