package analytics_test

import (
	"context"
	"testing"
	"time"

	"github.com/formward/formward/adapters/analytics"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/formstats"
	"github.com/formward/formward/ports"
)

func newForm(t *testing.T, db *persistence.DB) string {
	t.Helper()
	cipher := persistencetest.Cipher()
	app := application.New(application.Deps{Workspaces: persistence.NewWorkspaceRepository(db), Forms: persistence.NewFormRepository(db, cipher),
		IDs: system.NewIDs(), Clock: system.Clock{}}, application.Settings{})
	ws, err := app.Commands.CreateWorkspace.Handle(context.Background(), workspace.CreateWorkspace{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := app.Commands.CreateForm.Handle(auth.WithPrincipal(context.Background(), auth.SystemPrincipal(ws.ID())),
		forms.CreateForm{Draft: form.Draft{Name: "F", Fields: []form.FieldSpec{{Label: "Name", Type: "text"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return v.Form.ID()
}

func TestCounterWritesAndKeepsCounts(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		ctx := context.Background()
		store := persistence.NewFormStatsRepository(db)
		c := analytics.New(store, nil, time.Hour)
		id := newForm(t, db)
		day1 := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)
		day2 := day1.Add(2 * time.Minute)

		c.Viewed(id, day1)
		c.Viewed(id, day2)
		c.Viewed(id, day2)
		if !c.Started(id, "nonce-1", day1) || c.Started(id, "nonce-1", day2) || !c.Started(id, "nonce-2", day2) {
			t.Fatal("a page's start counts once")
		}
		c.Submitted(id, day2, ports.CountedSubmission{FromPage: true, Fill: 40 * time.Second, Nonce: "nonce-2"})
		c.Submitted(id, day2, ports.CountedSubmission{API: true})

		// A write that fails keeps the counts for the next one.
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if err := c.Flush(canceled); err == nil {
			t.Fatal("flush with a canceled context succeeded")
		}
		c.Viewed(id, day2)
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		days, err := store.Daily(ctx, id, formstats.Day(day1), formstats.Day(day2))
		if err != nil {
			t.Fatal(err)
		}
		if len(days) != 2 {
			t.Fatalf("days: %+v", days)
		}
		d1, d2 := days[0], days[1]
		if d1.Views != 1 || d1.Starts != 1 || d1.Submissions != 0 {
			t.Fatalf("day 1: %+v", d1)
		}
		if d2.Views != 3 || d2.Starts != 1 || d2.Submissions != 2 || d2.Completions != 1 || d2.FillTimes[45] != 1 || len(d2.FillTimes) != 1 ||
			d2.FormSubmissions != 1 || d2.APISubmissions != 1 {
			t.Fatalf("day 2: %+v", d2)
		}

		// A nonce is remembered for at least one window, then forgotten.
		if c.Started(id, "nonce-1", day2.Add(59*time.Minute)) {
			t.Fatal("a start counted twice within the window")
		}
		c.Started(id, "nonce-3", day2.Add(2*time.Hour))
		c.Started(id, "nonce-4", day2.Add(4*time.Hour))
		if !c.Started(id, "nonce-1", day2.Add(4*time.Hour)) {
			t.Fatal("a nonce is forgotten after two windows")
		}

		// Stopping writes what is left.
		stop := c.Start(time.Hour, 10*time.Second)
		c.Viewed(id, day2)
		stop()
		days, err = store.Daily(ctx, id, formstats.Day(day2), formstats.Day(day2))
		if err != nil || len(days) != 1 || days[0].Views != 4 {
			t.Fatalf("after stop: %+v %v", days, err)
		}
	})
}
