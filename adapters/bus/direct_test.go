package bus_test

import (
	"context"
	"errors"
	"testing"

	"github.com/formward/formward/adapters/bus"
	"github.com/formward/formward/domain/event"
)

func TestDirectReturnsOnlyAfterTheHandler(t *testing.T) {
	var got []string
	fail := true
	d := bus.NewDirect(func(_ context.Context, es []event.Event) error {
		if fail {
			fail = false
			return errors.New("storage down")
		}
		for _, e := range es {
			got = append(got, e.ID)
		}
		return nil
	})
	batch := []event.Event{{ID: "evt_1"}, {ID: "evt_2"}}
	if err := d.Publish(context.Background(), batch); err == nil {
		t.Fatal("a failing handler must fail Publish, so the relay keeps the rows")
	}
	if err := d.Publish(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "evt_1" || got[1] != "evt_2" {
		t.Fatalf("handled %v, want the batch in order", got)
	}
	if err := d.Publish(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}
