package actionkit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/ports"
)

func TestBreakersIgnorePermanentAndCanceled(t *testing.T) {
	b := actionkit.NewBreakers(actionkit.BreakerOptions{Failures: 2, Cooldown: time.Minute})
	fail := func(permanent bool) func() ports.ActionOutcome {
		return func() ports.ActionOutcome { return ports.ActionOutcome{Err: errors.New("x"), Permanent: permanent} }
	}
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if out := b.Do(ctx, "act_1", fail(true)); out.BreakerOpen {
			t.Fatal("permanent failures opened the breaker")
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for i := 0; i < 5; i++ {
		if out := b.Do(canceled, "act_1", fail(false)); out.BreakerOpen {
			t.Fatal("canceled attempts opened the breaker")
		}
	}
	b.Do(ctx, "act_1", fail(false))
	b.Do(ctx, "act_1", fail(false))
	called := false
	out := b.Do(ctx, "act_1", func() ports.ActionOutcome { called = true; return ports.ActionOutcome{} })
	if called || !out.BreakerOpen || !errors.Is(out.Err, actionkit.ErrBreakerOpen) || time.Until(out.RetryAt) < 50*time.Second {
		t.Fatalf("after two failures: called=%v outcome %+v", called, out)
	}
	if out := b.Do(ctx, "act_2", func() ports.ActionOutcome { return ports.ActionOutcome{} }); out.Err != nil {
		t.Fatalf("another action: %+v", out)
	}
}

func TestCheckerPaths(t *testing.T) {
	c := actionkit.Check(map[string]any{"a": 1, "b": "  ", "h": map[string]any{"X": 1, "Y": "ok"}, "u": "ftp://x"})
	c.String("a", true)
	c.String("b", true)
	c.String("missing", true)
	c.StringMap("h", false)
	c.HTTPSURL("u")
	got := map[string]string{}
	for _, v := range c.Violations() {
		got[v.Key] = v.Code
	}
	want := map[string]string{"a": "invalid_type", "b": "required", "missing": "required", "h.X": "invalid_type", "u": "https_required"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}
