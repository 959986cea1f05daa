package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/test/testkit"
)

// TestSIGKILLUnderLoadLosesNothing posts submissions from 32 concurrent clients (the API and the
// public page) as fast as they go, SIGKILLs serve once a few hundred have been acknowledged,
// restarts it on the same database and checks that every acknowledged submission is stored
// with its answers, that the form's submission_count is the number of stored rows, and, at the
// end, that every stored submission's submission.created event reached the webhook. Three
// rounds of load and kill, on SQLite and on PostgreSQL.
func TestSIGKILLUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { sigkillUnderLoad(t, "") })
	t.Run("postgres", func(t *testing.T) { sigkillUnderLoad(t, freshPostgresDatabase(t)) })
}

const (
	killClients    = 32
	killPageClient = 24 // clients from this index on post through the public page
	killRounds     = 3
	killAfterAcks  = 300 // acknowledgements per round before the kill
)

// killField is one field of the 10-field form and the value a client posts for it.
type killField struct {
	spec  map[string]any
	value func(client, seq int) any
}

var killFields = []killField{
	{map[string]any{"label": "Full name", "type": "text", "required": true}, func(c, n int) any { return fmt.Sprintf("Client %02d respondent %06d", c, n) }},
	{map[string]any{"label": "Email", "type": "email", "required": true}, func(c, n int) any { return fmt.Sprintf("c%02d-n%06d@example.org", c, n) }},
	{map[string]any{"label": "Age", "type": "number"}, func(c, n int) any { return 18 + n%60 }},
	{map[string]any{"label": "Ticket", "type": "dropdown", "required": true, "options": []string{"Standard", "Student", "VIP"}}, func(c, n int) any { return []string{"Standard", "Student", "VIP"}[n%3] }},
	{map[string]any{"label": "Sessions", "type": "checkbox", "options": []string{"Keynote", "Workshops", "Dinner"}}, func(c, n int) any { return []string{"Keynote", "Dinner"} }},
	{map[string]any{"label": "Diet", "type": "radio", "options": []string{"None", "Vegetarian", "Vegan"}}, func(c, n int) any { return "Vegetarian" }},
	{map[string]any{"label": "Comments", "type": "textarea"}, func(c, n int) any {
		return fmt.Sprintf("Comment of client %02d, submission %06d: looking forward to it, see you there soon!", c, n)
	}},
	{map[string]any{"label": "Arrival date", "type": "date"}, func(c, n int) any { return "2026-12-01" }},
	{map[string]any{"label": "Company", "type": "text"}, func(c, n int) any { return fmt.Sprintf("Company %02d-%06d Ltd.", c, n) }},
	{map[string]any{"label": "Team size", "type": "number"}, func(c, n int) any { return 1 + n%9 }},
}

// killPost is one acknowledged post: who sent it, which of its posts it was.
type killPost struct{ client, seq int }

func sigkillUnderLoad(t *testing.T, dbURL string) {
	start := time.Now()
	rc := newReceiver(t)
	in := newInstance(t, dbURL, randomMasterKey(t))
	pipelineEnv(in, rc)
	in.setEnv("FORMWARD_FORM_RATE_LIMIT", "0")
	// A delivery the killed serve had claimed is sent again when its claim's lease (twice the
	// delivery timeout plus 5 s) runs out: 9 s rather than the default's 25 s. The retries are
	// spread over 7 s so that a busy machine's slow answers cannot use them all up.
	in.setEnv("FORMWARD_DELIVERY_TIMEOUT", "2s")
	in.setEnv("FORMWARD_RETRY_DELAYS", "200ms,1s,2s,4s")
	in.cli("migrate")
	key := in.cli("keys", "create", "--name", "sigkill", "--scope", "admin")
	in.startServe()

	specs := make([]map[string]any, len(killFields))
	for i, f := range killFields {
		specs[i] = f.spec
	}
	r := in.do("POST", "/v1/forms", key, map[string]any{"name": "Under load", "fields": specs})
	r.expect(t, http.StatusCreated)
	formID := r.str(t, "id")
	var fieldIDs []string
	for _, f := range objects(r.obj["fields"]) {
		fieldIDs = append(fieldIDs, f["id"].(string))
	}
	if len(fieldIDs) != len(killFields) {
		t.Fatalf("form has %d fields, want %d: %s", len(fieldIDs), len(killFields), r.raw)
	}
	// The public page takes a script's JSON post without a render token once the fill time is off.
	in.do("PATCH", "/v1/forms/"+formID, key, map[string]any{"status": "published",
		"settings": map[string]any{"spam": map[string]any{"min_fill_seconds": 0}}}).expect(t, http.StatusOK)
	registerWebhook(t, in, key, rc.url("/ok"), formID, newSecret(t), "submission.created")

	t.Logf("serve up with the form after %v", time.Since(start).Round(time.Millisecond))
	acked := map[string]killPost{}
	seq := make([]int, killClients) // each client's next post number, across rounds
	for round := 1; round <= killRounds; round++ {
		t0 := time.Now()
		got, refused := loadUntilKilled(t, in, key, formID, fieldIDs, seq)
		t1 := time.Now()
		for id, p := range got {
			if _, dup := acked[id]; dup {
				t.Fatalf("round %d: submission ID %s acknowledged twice", round, id)
			}
			acked[id] = p
		}
		if len(refused) > 0 {
			t.Fatalf("round %d: %d posts answered neither 201 nor an error, e.g. %s", round, len(refused), refused[0])
		}
		in.startServe()
		t2 := time.Now()
		stored := checkStored(t, in, key, formID, fieldIDs, acked)
		page := 0
		for _, p := range got {
			if p.client >= killPageClient {
				page++
			}
		}
		t.Logf("round %d: %d acknowledged in this round (%d through the page), %d in all; %d stored (%d unacknowledged but committed); load %v, restart %v, check %v",
			round, len(got), page, len(acked), stored, stored-len(acked), t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), time.Since(t2).Round(time.Millisecond))
	}

	// Every stored submission's event reaches the webhook, and none the database does not hold.
	setup := time.Since(start)
	tw := time.Now()
	stored := map[string]bool{}
	for _, s := range listAll(t, in, key, formID) {
		stored[s["id"].(string)] = true
	}
	seen := map[string]bool{}
	read := 0
	var missing []string
	if !testkit.Wait(40*time.Second, func() bool {
		reqs := rc.requests("/ok")
		for _, req := range reqs[read:] {
			var b struct {
				Event string `json:"event"`
				Data  struct {
					SubmissionID string `json:"submission_id"`
				} `json:"data"`
			}
			if err := json.Unmarshal(req.body, &b); err != nil || b.Event != "submission.created" {
				t.Errorf("webhook body: %v: %s", err, req.body)
				continue
			}
			if !stored[b.Data.SubmissionID] {
				t.Errorf("webhook got submission.created for %s, which is not stored", b.Data.SubmissionID)
			}
			seen[b.Data.SubmissionID] = true
		}
		read = len(reqs)
		missing = missing[:0]
		for id := range stored {
			if !seen[id] {
				missing = append(missing, id)
			}
		}
		return len(missing) == 0
	}) {
		sort.Strings(missing)
		ackedMissing := 0
		for _, id := range missing {
			if _, ok := acked[id]; ok {
				ackedMissing++
			}
		}
		t.Fatalf("%d stored submissions (%d of them acknowledged) never reached the webhook within 40s, e.g. %s",
			len(missing), ackedMissing, missing[0])
	}
	t.Logf("%d acknowledged, %d stored, %d webhook requests for %d distinct submissions; until the last check %v, webhook wait %v",
		len(acked), len(stored), read, len(seen), setup.Round(time.Millisecond), time.Since(tw).Round(time.Millisecond))
	in.stopServe()
}

// loadUntilKilled runs the clients against serve until killAfterAcks posts have been
// acknowledged, SIGKILLs serve while they keep posting, and returns the acknowledged posts by
// submission ID and a description of every answer that was neither a 201 nor a transport error.
func loadUntilKilled(t *testing.T, in *instance, key, formID string, fieldIDs []string, seq []int) (map[string]killPost, []string) {
	t.Helper()
	transport := &http.Transport{MaxIdleConnsPerHost: killClients, MaxConnsPerHost: killClients}
	defer transport.CloseIdleConnections()
	client := &http.Client{Timeout: 10 * time.Second, Transport: transport}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	acked := map[string]killPost{}
	var refused []string
	enough := make(chan struct{})
	var wg sync.WaitGroup
	for c := range killClients {
		wg.Go(func() {
			for ctx.Err() == nil {
				n := seq[c]
				seq[c]++
				id, status, body, err := killPostOnce(ctx, client, in.baseURL, key, formID, fieldIDs, c, n)
				if err != nil {
					continue // no answer: not acknowledged
				}
				mu.Lock()
				if status == http.StatusCreated && id != "" {
					acked[id] = killPost{c, n}
					if len(acked) == killAfterAcks {
						close(enough)
					}
				} else {
					refused = append(refused, fmt.Sprintf("client %d post %d: %d %s", c, n, status, body))
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-enough:
	case <-time.After(30 * time.Second):
		cancel()
		wg.Wait()
		t.Fatalf("only %d acknowledgements within 30s, e.g. refused: %v", len(acked), refused[:min(len(refused), 3)])
	}
	in.killServe()
	cancel()
	wg.Wait()
	return acked, refused
}

// killPostOnce posts client c's post n, through the API or the public page; id is the
// submission ID of a 201.
func killPostOnce(ctx context.Context, client *http.Client, base, key, formID string, fieldIDs []string, c, n int) (id string, status int, body []byte, err error) {
	data := map[string]any{}
	for i, f := range killFields {
		data[fieldIDs[i]] = f.value(c, n)
	}
	raw, _ := json.Marshal(map[string]any{"data": data})
	target := base + "/v1/forms/" + formID + "/submissions"
	if c >= killPageClient {
		target = base + "/f/" + formID
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(raw))
	if err != nil {
		return "", 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c < killPageClient {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, nil, err
	}
	defer resp.Body.Close()
	if body, err = io.ReadAll(resp.Body); err != nil {
		return "", 0, nil, err
	}
	var out struct {
		ID string `json:"id"`
	}
	if resp.StatusCode == http.StatusCreated {
		if err := json.Unmarshal(body, &out); err != nil {
			return "", resp.StatusCode, body, nil
		}
	}
	return out.ID, resp.StatusCode, body, nil
}

// killServe ends serve with SIGKILL (proc.kill): no shutdown, no flush, no commit.
func (in *instance) killServe() {
	in.t.Helper()
	if in.serve == nil {
		in.t.Fatalf("serve is not running")
	}
	p := &proc{name: "serve", cmd: in.serve, done: in.serveDone}
	in.serve, in.serveDone = nil, nil
	p.kill(in.t)
	fmt.Fprintf(in.logs, "$ kill -KILL formward serve\n")
}

// checkStored checks that every acknowledged post is stored with its answers and that the
// form's submission_count equals the number of stored rows; it returns that number.
func checkStored(t *testing.T, in *instance, key, formID string, fieldIDs []string, acked map[string]killPost) int {
	t.Helper()
	rows := listAll(t, in, key, formID)
	byID := make(map[string]map[string]any, len(rows))
	for _, s := range rows {
		id := s["id"].(string)
		if _, dup := byID[id]; dup {
			t.Fatalf("submission %s listed twice", id)
		}
		byID[id] = s
	}
	var lost []string
	for id, p := range acked {
		s, ok := byID[id]
		if !ok {
			lost = append(lost, fmt.Sprintf("%s (client %d post %d)", id, p.client, p.seq))
			continue
		}
		data, _ := s["data"].(map[string]any)
		for i, f := range killFields {
			want, isText := f.value(p.client, p.seq).(string)
			if isText && data[fieldIDs[i]] != want {
				t.Fatalf("acknowledged submission %s: %s = %v, want %q", id, f.spec["label"], data[fieldIDs[i]], want)
			}
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		t.Fatalf("%d of %d acknowledged submissions lost, e.g. %s", len(lost), len(acked), strings.Join(lost[:min(len(lost), 5)], ", "))
	}
	// One of them read on its own, as a client would after its 201.
	for id := range acked {
		in.do("GET", "/v1/forms/"+formID+"/submissions/"+id, key, nil).expect(t, http.StatusOK)
		break
	}
	r := in.do("GET", "/v1/forms/"+formID, key, nil)
	r.expect(t, http.StatusOK)
	count, _ := r.obj["submission_count"].(float64)
	if int(count) != len(rows) || len(rows) < len(acked) {
		t.Fatalf("submission_count %v, %d rows stored, %d acknowledged: want count = rows ≥ acknowledged", r.obj["submission_count"], len(rows), len(acked))
	}
	return len(rows)
}

// listAll pages through GET /v1/forms/{id}/submissions.
func listAll(t *testing.T, in *instance, key, formID string) []map[string]any {
	t.Helper()
	var all []map[string]any
	path := "/v1/forms/" + formID + "/submissions?limit=100"
	for {
		r := in.do("GET", path, key, nil)
		r.expect(t, http.StatusOK)
		all = append(all, objects(r.obj["data"])...)
		next, _ := r.obj["next_cursor"].(string)
		if r.obj["has_more"] != true || next == "" {
			return all
		}
		path = "/v1/forms/" + formID + "/submissions?limit=100&cursor=" + url.QueryEscape(next)
	}
}
