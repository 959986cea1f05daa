package actionkit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/ports"
)

func TestBreakerSetsCountByState(t *testing.T) {
	var sets actionkit.BreakerSets
	opts := actionkit.BreakerOptions{Failures: 1, Cooldown: time.Hour, Created: sets.Add}
	a, b := actionkit.NewBreakers(opts), actionkit.NewBreakers(opts)
	ctx := context.Background()
	a.Do(ctx, "act_1", func() ports.ActionOutcome { return ports.ActionOutcome{Err: errors.New("down")} })
	a.Do(ctx, "act_2", func() ports.ActionOutcome { return ports.ActionOutcome{} })
	b.Do(ctx, "act_3", func() ports.ActionOutcome { return ports.ActionOutcome{} })
	if c, h, o := sets.Counts(); c != 2 || h != 0 || o != 1 {
		t.Fatalf("counts closed %d, half-open %d, open %d; want 2, 0, 1", c, h, o)
	}
}
