package persistence_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// TestRawDumpHasNoPlaintext stores a submission with distinctive values through every path
// that keeps submitted content (capture, update, idempotent response, events, webhook deliveries)
// and a webhook signing secret, then reads every
// column of every table as raw bytes and checks that no value appears in any encoding.
func TestRawDumpHasNoPlaintext(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		const (
			secret   = "Zebra-Quartz-7731"
			updated  = "Okapi-Nimbus-4410"
			agent    = "SecretAgent/9.9 (Mars)"
			referrer = "https://hidden-referrer.example/landing?x=1"
		)
		w := mustWorkspace(t, r, base)
		f := publish(t, r, mustForm(t, r, w.ID(), base))
		s, e := buildSubmission(t, f, base, subOpts{name: secret, userAgent: agent, referrer: referrer})
		noErr(t, r.submissions.Add(ctx, s, e))
		nameID, _, _ := fieldIDs(f)
		mustUpdateAnswers(t, r, f, s.ID(), map[string]submission.Input{nameID: updated})
		_, err := r.idem.Reserve(ctx, w.ID(), "api", "idem-1", []byte("fp"), base)
		noErr(t, err)
		noErr(t, r.idem.Complete(ctx, w.ID(), "api", "idem-1", ports.StoredResponse{Status: 201,
			Body: []byte(`{"data":{"name":"` + secret + `"},"metadata":{"user_agent":"` + agent + `"}}`)}))

		// A webhook's signing secret and a delivery body carrying the submitted values.
		const whSecret = "Whsec-Pangolin-5521"
		wh := mustWebhook(t, r, w.ID(), strp(f.ID()), strp(whSecret), base)
		dl := buildDelivery(wh, f.ID(), base, `{"event":"submission.created","data":{"fields":{"name":"`+secret+`","ua":"`+agent+`"}}}`)
		noErr(t, r.deliveries.AddAll(ctx, []*webhook.Delivery{dl}))
		dl.Record(webhook.Outcome{StatusCode: 500, Err: errors.New("endpoint answered 500")}, base, retry.Default())
		noErr(t, r.deliveries.Save(ctx, dl))
		gotWH, err := r.webhooks.Get(ctx, w.ID(), wh.ID())
		noErr(t, err)
		gotDL, err := r.deliveries.Get(ctx, w.ID(), wh.ID(), dl.ID())
		noErr(t, err)
		if gotWH.Secret() != whSecret || !bytes.Equal(gotDL.Body(), dl.Body()) {
			t.Fatalf("webhook secret or delivery body lost")
		}

		// A workflow run: its action configs hold secrets, and it carries the submitted values.
		const runSecret = "Runsec-Axolotl-8812"
		run := buildRunFor(e, newID("wfl"), base, runSecret)
		noErr(t, runRepo(r).AddAll(ctx, []*workflow.Run{run}))
		run.Record(workflow.AttemptOutcome{StatusCode: 500, Err: errors.New("endpoint answered 500")}, base, retry.Default())
		noErr(t, runRepo(r).Save(ctx, run))
		gotRun, err := runRepo(r).Get(ctx, w.ID(), run.ID())
		noErr(t, err)
		if gotRun.Actions()[0].Config["secret"] != runSecret {
			t.Fatalf("run config lost")
		}

		// A workflow whose action config holds a signing secret, and integration credentials.
		const wflSecret = "Wflsec-Narwhal-3307"
		const botToken = "xoxb-Marmot-6619"
		const privateKey = "PrivKey-Quokka-2290"
		wfl := buildWorkflow(t, w.ID(), f.ID(), base, "submission.created", wflSecret)
		noErr(t, workflowRepo(r).Create(ctx, wfl))
		slack, err := integration.New(newID("int"), w.ID(), integration.Draft{Type: "slack", Credentials: map[string]string{"bot_token": botToken}}, base)
		noErr(t, err)
		noErr(t, integrationRepo(r).Create(ctx, slack))
		sheets, err := integration.New(newID("int"), w.ID(), integration.Draft{Type: "google_sheets", Credentials: map[string]string{
			"service_account_json": `{"client_email":"svc@p.iam.gserviceaccount.com","private_key":"` + privateKey + `"}`}}, base)
		noErr(t, err)
		noErr(t, integrationRepo(r).Create(ctx, sheets))
		gotWfl, err := workflowRepo(r).Get(ctx, w.ID(), wfl.ID())
		noErr(t, err)
		gotSlack, err := integrationRepo(r).OfType(ctx, w.ID(), "slack")
		noErr(t, err)
		if gotWfl.Actions()[0].Config["secret"] != wflSecret || gotSlack.Credentials()["bot_token"] != botToken {
			t.Fatalf("workflow secret or integration credential lost")
		}

		// The values are readable through the repositories...
		got, err := r.submissions.Get(ctx, w.ID(), f.ID(), s.ID())
		noErr(t, err)
		if got.Data()[nameID].String() != updated || *got.Metadata().UserAgent != agent || *got.Metadata().Referrer != referrer {
			t.Fatalf("round trip lost values")
		}

		// ...and nowhere in the tables.
		needles := [][]byte{}
		for _, v := range []string{secret, updated, agent, referrer, "hidden-referrer", "newsletter", whSecret, runSecret, wflSecret, botToken, privateKey} {
			needles = append(needles, []byte(v), []byte(hex.EncodeToString([]byte(v))), []byte(base64.StdEncoding.EncodeToString([]byte(v))))
		}
		tables := listTables(t, r.db)
		if len(tables) < 10 {
			t.Fatalf("found only tables %v", tables)
		}
		cells, control := 0, 0
		for _, table := range tables {
			cells += scanTable(t, r.db.SQL(), table, func(col string, raw []byte) {
				if bytes.Contains(raw, []byte("Topics")) { // a field label: not secret, stored as is
					control++
				}
				for _, n := range needles {
					if bytes.Contains(bytes.ToLower(raw), bytes.ToLower(n)) {
						t.Errorf("%s.%s contains %q in plaintext", table, col, n)
					}
				}
			})
		}
		if cells == 0 || control == 0 {
			t.Fatalf("the dump is blind: %d cells, form definition found %d times", cells, control)
		}

		// On SQLite also the files themselves (database and write-ahead log).
		if r.db.Dialect() == persistence.DialectSQLite {
			var file string
			noErr(t, r.db.SQL().QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file))
			for _, p := range []string{file, file + "-wal"} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("read %s: %v", filepath.Base(p), err)
				}
				for _, v := range []string{secret, updated, agent, referrer, whSecret, runSecret, wflSecret, botToken, privateKey} {
					if bytes.Contains(b, []byte(v)) {
						t.Errorf("%s contains %q", filepath.Base(p), v)
					}
				}
			}
		}
	})
}

func listTables(t *testing.T, db *persistence.DB) []string {
	t.Helper()
	q := "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
	if db.Dialect() == persistence.DialectPostgres {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
	}
	rows, err := db.SQL().Query(q)
	noErr(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		noErr(t, rows.Scan(&name))
		out = append(out, name)
	}
	noErr(t, rows.Err())
	return out
}

// scanTable calls fn with every non-null cell of SELECT * as bytes and returns how many.
func scanTable(t *testing.T, db *sql.DB, table string, fn func(col string, raw []byte)) int {
	t.Helper()
	rows, err := db.Query("SELECT * FROM " + table)
	noErr(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	noErr(t, err)
	n := 0
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		noErr(t, rows.Scan(ptrs...))
		for i, v := range vals {
			if v == nil {
				continue
			}
			var raw []byte
			switch v := v.(type) {
			case []byte:
				raw = v
			case string:
				raw = []byte(v)
			default:
				raw = []byte(fmt.Sprint(v))
			}
			fn(cols[i], raw)
			n++
		}
	}
	noErr(t, rows.Err())
	return n
}
