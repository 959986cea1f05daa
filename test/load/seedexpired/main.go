// Command seedexpired prepares the retention part of the capture benchmark (test/load/bench.sh
// with BENCH_RETENTION=N): it stores N submissions, received 13 months ago, in a Starter
// workspace of the database that formward serve is about to open, so that serve's first
// retention pass (run at start) deletes them while the benchmark captures. It reads the same
// environment as serve (FORMWARD_DATA_DIR or FORMWARD_DATABASE_URL, FORMWARD_MASTER_KEY), and
// finishes the privacy index backfill itself so that serve's pass starts at once. With
// -remaining it stores nothing and prints how many of those submissions are left (the script
// reads it before and after the load: what the retention job deleted meanwhile). With -recent
// the N submissions are received now, in a workspace of their own, for the backfill part of
// the benchmark (BENCH_BACKFILL=N): the last line printed is "form <id>", the form to backfill.
// With -forms F (and -recent) the N submissions are spread over F forms of that workspace, in
// turn: the stored data of the capture benchmark with a full database (BENCH_STORED=N).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
)

type clockAt struct{ t time.Time }

func (c clockAt) Now() time.Time { return c.t }

func main() {
	n := flag.Int("n", 100000, "submissions to store")
	workers := flag.Int("c", 64, "concurrent writers")
	remaining := flag.Bool("remaining", false, "print how many expired benchmark submissions are left, and store nothing")
	recent := flag.Bool("recent", false, "store submissions received now (the backfill benchmark) instead of 13 months ago")
	forms := flag.Int("forms", 1, "forms to spread the submissions over, in turn")
	flag.Parse()
	if *remaining {
		if err := count(context.Background()); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(context.Background(), *n, *workers, max(1, *forms), *recent); err != nil {
		log.Fatal(err)
	}
}

// benchWorkspace names the workspace of the seeded submissions.
const benchWorkspace = "Expired (retention benchmark)"

// count prints the number of submissions left in the benchmark's workspaces.
func count(ctx context.Context) error {
	db, err := persistence.Open(ctx, persistence.Config{DatabaseURL: os.Getenv("FORMWARD_DATABASE_URL"), DataDir: os.Getenv("FORMWARD_DATA_DIR")})
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	var n int64
	err = db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM submissions WHERE workspace_id IN (SELECT id FROM workspaces WHERE name = '"+
		benchWorkspace+"')").Scan(&n)
	if err != nil {
		return err
	}
	fmt.Println(n)
	return nil
}

func run(ctx context.Context, n, workers, nforms int, recent bool) error {
	master, err := crypto.ParseMasterKey(os.Getenv("FORMWARD_MASTER_KEY"))
	if err != nil {
		return fmt.Errorf("FORMWARD_MASTER_KEY: %w", err)
	}
	db, err := persistence.Open(ctx, persistence.Config{DatabaseURL: os.Getenv("FORMWARD_DATABASE_URL"), DataDir: os.Getenv("FORMWARD_DATA_DIR")})
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	ids := system.NewIDs()
	then, name := time.Now().Add(-395*24*time.Hour), benchWorkspace
	if recent {
		then, name = time.Now().Add(-time.Hour), "Stored (backfill benchmark)"
	}
	ring := crypto.NewKeyring(master)
	cipher := crypto.NewCipher(ring, persistence.NewDataKeyRepository(db), ids, clockAt{then})
	index := crypto.NewBlindIndex(ring.Primary())

	w, err := workspace.New(ids.New("wsp"), name, workspace.PlanStarter, then)
	if err != nil {
		return err
	}
	if err := persistence.NewWorkspaceRepository(db).Create(ctx, w); err != nil {
		return err
	}
	start := time.Now()
	all := make([]*form.Form, nforms)
	for i := range all {
		f, err := form.New(ids.New("frm"), w.ID(), form.Draft{Name: fmt.Sprintf("Last year's registrations %d", i+1), Fields: []form.FieldSpec{
			{Label: "Full name", Type: "text", Required: true},
			{Label: "Email", Type: "email", Required: true},
			{Label: "Comments", Type: "textarea"},
		}}, func() string { return ids.New("fld") }, form.DefaultLimits, then)
		if err != nil {
			return err
		}
		if err := persistence.NewFormRepository(db, cipher).Create(ctx, f); err != nil {
			return err
		}
		all[i] = f
	}
	f := all[0]
	subs := persistence.NewSubmissionRepository(db, cipher, index)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				at := then.Add(time.Duration(i) * time.Millisecond)
				f := all[i%int64(len(all))]
				fs := f.Fields()
				s, err := submission.New(ids.New("sub"), f, map[string]submission.Input{
					fs[0].ID: fmt.Sprintf("Respondent %d", i),
					fs[1].ID: fmt.Sprintf("respondent%d@example.com", i),
					fs[2].ID: "Looking forward to it.",
				}, submission.Metadata{Source: submission.SourceAPI}, at)
				if err == nil {
					err = subs.Add(ctx, s, event.ForSubmission(ids.New("evt"), event.SubmissionCreated, s, at))
				}
				if err != nil {
					if failed.Add(1) == 1 {
						log.Printf("add: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		return fmt.Errorf("%d of %d submissions failed", failed.Load(), n)
	}
	// The events of submissions received 13 months ago were published and purged from the
	// outbox long since; left pending, serve's relay would spend the benchmark publishing them.
	// (The workspace ID is one generated here: safe to put in the statement.)
	if _, err := db.SQL().ExecContext(ctx, "DELETE FROM outbox WHERE workspace_id = '"+w.ID()+"'"); err != nil {
		return fmt.Errorf("clear the seeded events: %w", err)
	}
	privacy := persistence.NewPrivacyIndex(db, cipher, index)
	for {
		_, done, err := privacy.Reindex(ctx, 1000)
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	if recent {
		fmt.Printf("seeded %d submissions of the last hour over %d forms in workspace %s in %s\nform %s\n", n, len(all), w.ID(), time.Since(start).Round(time.Millisecond), f.ID())
		return nil
	}
	fmt.Printf("seeded %d expired submissions in workspace %s (starter plan) in %s\n", n, w.ID(), time.Since(start).Round(time.Millisecond))
	return nil
}
