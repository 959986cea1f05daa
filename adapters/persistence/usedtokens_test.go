package persistence_test

import (
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
)

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

func TestUsedTokensAcceptEachNonceOnce(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		clk := &fixedClock{t: time.Now()}
		u := persistence.NewUsedTokens(db, clk)
		ctx := t.Context()
		for i, want := range []bool{true, false} {
			fresh, err := u.Use(ctx, "nonce-a", clk.t.Add(time.Hour))
			if err != nil || fresh != want {
				t.Fatalf("use %d: %v %v", i, fresh, err)
			}
		}
		// Once expired, the row is purged by a later use and the table stays small.
		clk.t = clk.t.Add(2 * time.Hour)
		if _, err := u.Use(ctx, "nonce-b", clk.t.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		fresh, err := u.Use(ctx, "nonce-a", clk.t.Add(time.Hour))
		if err != nil || !fresh {
			t.Fatalf("expired nonce: %v %v", fresh, err)
		}
	})
}
