package analytics_test

import (
	"context"
	"strconv"
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
	"github.com/formward/formward/domain/submission"
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

// TestCounterAnswersSurviveFlushAndRestart counts answers, sources and pages in one process,
// writes them, then counts more in a new process (a restart) over the same storage: the
// report adds both up, and a failed write loses nothing.
func TestCounterAnswersSurviveFlushAndRestart(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		ctx := context.Background()
		store := persistence.NewFormStatsRepository(db)
		id := newForm(t, db)
		at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
		fields := []form.Field{
			{ID: "fld_colour", Type: form.TypeRadio, Options: []string{"Red", "Blue"}, Page: 1},
			{ID: "fld_qty", Type: form.TypeNumber, Page: 2},
			{ID: "fld_ok", Type: form.TypeCheckbox, Page: 2},
		}
		answer := func(colour, qty string) []formstats.Answer {
			return []formstats.Answer{{FieldID: "fld_colour", Kind: formstats.KindChoice, Value: submission.Single(colour)},
				{FieldID: "fld_qty", Kind: formstats.KindNumber, Value: submission.Single(qty)},
				{FieldID: "fld_ok", Kind: formstats.KindChoice, Value: submission.Single("true")}}
		}

		first := analytics.New(store, nil, time.Hour)
		first.Started(id, "visit-1", at)
		first.Reached(id, "visit-1", 1, at)
		first.Reached(id, "visit-1", 2, at)
		first.Reached(id, "visit-1", 2, at) // Back and Next again: once per visit
		first.Submitted(id, at, ports.CountedSubmission{FromPage: true, Nonce: "visit-1", Answers: answer("Red", "3"), Pages: []int{1, 2}})
		first.Submitted(id, at, ports.CountedSubmission{API: true, Answers: answer("Blue", "10")})
		if err := first.Flush(ctx); err != nil {
			t.Fatal(err)
		}

		// The restarted process counts on; its first write fails and is retried.
		second := analytics.New(store, nil, time.Hour)
		second.Started(id, "visit-2", at)
		second.Reached(id, "visit-2", 1, at)
		second.Submitted(id, at, ports.CountedSubmission{Answers: answer("Red", "4"), Pages: []int{1, 2}}) // a form-backend post: a start and every page
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if err := second.Flush(canceled); err == nil {
			t.Fatal("flush with a canceled context succeeded")
		}
		if err := second.Flush(ctx); err != nil {
			t.Fatal(err)
		}

		days, err := store.Daily(ctx, id, formstats.Day(at), formstats.Day(at))
		if err != nil || len(days) != 1 {
			t.Fatalf("days %+v %v", days, err)
		}
		d := days[0]
		counts := []formstats.Counts{{Day: d.Day, Views: d.Views, Starts: d.Starts, Submissions: d.Submissions, Completions: d.Completions,
			FormSubmissions: d.FormSubmissions, APISubmissions: d.APISubmissions, FillTimes: d.FillTimes, Fields: d.Fields, Pages: d.Pages}}
		r := formstats.NewReport(formstats.Day(at), formstats.Day(at), counts, fields)
		if r.Starts != 3 || r.Submissions != 3 || r.FormSubmissions != 2 || r.APISubmissions != 1 {
			t.Fatalf("totals %+v", r)
		}
		if r.CompletionRate == nil || *r.CompletionRate < 0.666 || *r.CompletionRate > 0.667 {
			t.Fatalf("completion %v, want 2/3", r.CompletionRate)
		}
		colour, qty, ok := r.Fields[0], r.Fields[1], r.Fields[2]
		if colour.Answered != 3 || colour.Options[0] != (formstats.Option{Option: "Red", Count: 2}) || colour.Options[1].Count != 1 {
			t.Fatalf("colour %+v", colour)
		}
		if qty.Answered != 3 || *qty.Min != 3 || *qty.Median != 4 || *qty.Max != 10 {
			t.Fatalf("quantity %+v", qty)
		}
		if ok.Options[0] != (formstats.Option{Option: "true", Count: 3}) || ok.Options[1].Count != 0 {
			t.Fatalf("single checkbox %+v", ok)
		}
		// Page 1: visit 1, visit 2 and the form-backend post; page 2: visit 1 and the post.
		if len(r.Pages) != 2 || r.Pages[0] != (formstats.PageReach{Page: 1, Reached: 3}) || r.Pages[1] != (formstats.PageReach{Page: 2, Reached: 2}) {
			t.Fatalf("pages %+v", r.Pages)
		}
	})
}

// TestCounterBoundsNumberValues keeps at most formstats.MaxNumberValues distinct values of a
// number field per day between two writes; later new values are rounded, still counted.
func TestCounterBoundsNumberValues(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		ctx := context.Background()
		store := persistence.NewFormStatsRepository(db)
		id := newForm(t, db)
		at := time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC)
		c := analytics.New(store, nil, time.Hour)
		for i := 0; i < formstats.MaxNumberValues+500; i++ {
			c.Submitted(id, at, ports.CountedSubmission{API: true,
				Answers: []formstats.Answer{{FieldID: "fld_n", Kind: formstats.KindNumber, Value: submission.Single(strconv.Itoa(100000 + i))}}})
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		days, err := store.Daily(ctx, id, formstats.Day(at), formstats.Day(at))
		if err != nil || len(days) != 1 {
			t.Fatalf("days %+v %v", days, err)
		}
		fc := days[0].Fields["fld_n"]
		var total int64
		for _, n := range fc.Numbers {
			total += n
		}
		if fc.Answered != formstats.MaxNumberValues+500 || total != fc.Answered || len(fc.Numbers) > formstats.MaxNumberValues+1 {
			t.Fatalf("answered %d, counted %d in %d values", fc.Answered, total, len(fc.Numbers))
		}
	})
}
