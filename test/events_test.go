package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestEventsBackfillAndReplayToKafka: a consumer that joins after 50,000 submissions gets every
// one of them from `formward events backfill`, as submission.snapshot, in each form's order,
// even when the backfill is killed half way and run again; `formward events replay` publishes
// the retained events of a range again under their own IDs; deleted submissions come back
// through neither.
func TestEventsBackfillAndReplayToKafka(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "", "")
	in.setEnv("FORMWARD_API_RATE_LIMIT", "0")
	key := in.cli("keys", "create", "--name", "events", "--scope", "admin")
	in.startServe()
	brokers := strings.Join(kafkaBrokers(t), ",")
	began := time.Now().UTC().Add(-time.Second)

	const n = 50000
	formID, fieldID := createForm(t, in, key, "Backfilled")
	other, otherField := createForm(t, in, key, "Other")
	subs := make([]string, n)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				subs[i] = submit(t, in, key, formID, fieldID, fmt.Sprintf("answer %d", i))
			}
		})
	}
	wg.Wait()
	for i := range 3 {
		submit(t, in, key, other, otherField, fmt.Sprintf("other %d", i))
	}
	deleted := map[string]bool{}
	for _, id := range subs[:5] {
		in.do("DELETE", "/v1/forms/"+formID+"/submissions/"+id, key, nil).expect(t, http.StatusNoContent)
		deleted[id] = true
	}

	// Bad input: a clear error, nothing published.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"events", "backfill", "--kafka-brokers", brokers}, "give --form ID"},
		{[]string{"events", "backfill", "--form", "frm_06H2A5K67FET23ZMG66CAQQT13Y74", "--kafka-brokers", brokers}, "no such form"},
		{[]string{"events", "replay", "--since", time.Now().Add(-8 * 24 * time.Hour).UTC().Format(time.RFC3339), "--kafka-brokers", brokers}, "before the oldest retained event"},
		{[]string{"events", "replay", "--since", began.Format(time.RFC3339), "--until", began.Add(-time.Hour).Format(time.RFC3339), "--kafka-brokers", brokers}, "--until must be after --since"},
		{[]string{"events", "replay", "--since", "yesterday", "--kafka-brokers", brokers}, "not an RFC 3339 time"},
		{[]string{"events", "replay", "--since", began.Format(time.RFC3339)}, "needs Kafka"},
	} {
		if out := cliFails(t, in, c.args...); !strings.Contains(out, c.want) {
			t.Errorf("formward %s: %q, want it to say %q", strings.Join(c.args, " "), out, c.want)
		}
	}

	// A backfill killed after its first batches, then run again, resumes.
	topic := "late.consumer"
	first := in.startProc("events", "backfill", "--form", formID, "--kafka-brokers", brokers, "--kafka-topic", topic, "--rate", "5000")
	cl := consumer(t, brokers, topic)
	var got []record
	got = append(got, cl.until(t, 1000)...)
	first.kill(t)
	out := in.cli("events", "backfill", "--form", formID, "--kafka-brokers", brokers, "--kafka-topic", topic, "--rate", "0")
	if !strings.Contains(out, `"resumed": true`) {
		t.Fatalf("second backfill: %s", out)
	}
	got = append(got, cl.drain(t)...)
	seen := map[string]string{} // submission → event ID
	var order []string
	for _, r := range got {
		if r.Type != "submission.snapshot" || r.ceType != "submission.snapshot" || r.key != formID || r.FormID != formID || r.FormVersion != 1 {
			t.Fatalf("a snapshot %+v", r)
		}
		sub := r.Data.SubmissionID
		if id, dup := seen[sub]; dup {
			if id != r.ID {
				t.Fatalf("submission %s published twice under two event IDs (%s, %s): consumers could not dedupe", sub, id, r.ID)
			}
			continue // the batch in flight when the first run was killed
		}
		seen[sub] = r.ID
		order = append(order, sub)
		if deleted[sub] {
			t.Fatalf("a deleted submission was backfilled: %s", sub)
		}
	}
	if len(seen) != n-5 {
		t.Fatalf("%d submissions backfilled, want %d", len(seen), n-5)
	}
	if dup := len(got) - len(seen); dup > 500 {
		t.Fatalf("%d snapshots published twice: more than the one batch in flight at the kill", dup)
	}
	// In the form's order: the order of its export, oldest first.
	if stored := storeOrder(t, in, key, formID); !slices.Equal(order, stored) {
		t.Fatalf("snapshots are not in the form's order (%d snapshots, %d stored)", len(order), len(stored))
	}

	// Replay: the retained events of the range, under their IDs, marked, without the deleted.
	rtopic := "replayed"
	out = in.cli("events", "replay", "--since", began.Format(time.RFC3339Nano), "--form", formID, "--kafka-brokers", brokers, "--kafka-topic", rtopic)
	var res struct {
		Published int `json:"events_published"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Published != n-5 {
		t.Fatalf("replay: %s (%v), want %d events", out, err, n-5)
	}
	replayed := consumer(t, brokers, rtopic).until(t, n-5)
	ids := map[string]bool{}
	for _, r := range replayed {
		if r.Type != "submission.created" || r.FormID != formID || !r.replay || deleted[r.Data.SubmissionID] {
			t.Fatalf("a replayed event %+v", r)
		}
		ids[r.ID] = true
	}
	if len(ids) != n-5 {
		t.Fatalf("%d distinct replayed events, want %d", len(ids), n-5)
	}
}

// storeOrder lists a form's submission IDs as its NDJSON export gives them, oldest first.
func storeOrder(t *testing.T, in *instance, key, formID string) []string {
	t.Helper()
	req, err := http.NewRequest("GET", in.baseURL+"/v1/forms/"+formID+"/submissions/export?format=ndjson", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := in.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ids []string
	dec := json.NewDecoder(resp.Body)
	for dec.More() {
		var row struct {
			ID string `json:"id"`
		}
		if err := dec.Decode(&row); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, row.ID)
	}
	return ids
}

// cliFails runs formward and returns its stderr, failing the test when it succeeds.
func cliFails(t *testing.T, in *instance, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, formwardBin, args...)
	cmd.Env = in.environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("formward %s succeeded, want an error", strings.Join(args, " "))
	}
	return stderr.String()
}

// record is one event read from a topic.
type record struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	FormID      string `json:"form_id"`
	FormVersion int    `json:"form_version"`
	Data        struct {
		SubmissionID string `json:"submission_id"`
	} `json:"data"`
	key, ceType string
	replay      bool
}

type topicReader struct{ cl *kgo.Client }

func consumer(t *testing.T, brokers, topic string) topicReader {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return topicReader{cl: cl}
}

// until reads until at least n records came (or fails after two minutes).
func (tr topicReader) until(t *testing.T, n int) []record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out []record
	for len(out) < n {
		if ctx.Err() != nil {
			t.Fatalf("read %d records, want %d", len(out), n)
		}
		out = append(out, tr.poll(t, ctx)...)
	}
	return out
}

// drain reads what the topic holds until a poll of two seconds brings nothing more.
func (tr topicReader) drain(t *testing.T) []record {
	t.Helper()
	var out []record
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		got := tr.poll(t, ctx)
		cancel()
		if len(got) == 0 {
			return out
		}
		out = append(out, got...)
	}
}

func (tr topicReader) poll(t *testing.T, ctx context.Context) []record {
	t.Helper()
	var out []record
	tr.cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
		var rec record
		if err := json.Unmarshal(r.Value, &rec); err != nil {
			t.Errorf("a message that is not an event: %s", r.Value)
			return
		}
		rec.key = string(r.Key)
		for _, h := range r.Headers {
			switch h.Key {
			case "ce_type":
				rec.ceType = string(h.Value)
			case "ce_replay":
				rec.replay = string(h.Value) == "true"
			}
		}
		out = append(out, rec)
	})
	return out
}
