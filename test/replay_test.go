package e2e_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"
)

// TestWebhookReplayAfterAnOutage: a receiver is down while 5,000 submissions arrive, so every
// delivery fails until it is given up (undeliverable). Back up, it gets every one of them from
// one replay "since it went down", each once, marked as a replay and with the delivery ID it
// would dedupe on; a second replay sends each again once, and never a deleted submission.
func TestWebhookReplayAfterAnOutage(t *testing.T) {
	t.Parallel()
	// 5,000 on SQLite; on PostgreSQL the same path with 1,000, to keep the suite's time (each
	// failed and each replayed attempt is a durable write: 25,000 of them on SQLite).
	for db, n := range map[string]int{"sqlite": 5000, "postgres": 1000} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			dbURL, masterKey := "", ""
			if db == "postgres" {
				dbURL, masterKey = freshPostgresDatabase(t), randomMasterKey(t)
			}
			rc := newReceiver(t)
			in := newInstance(t, dbURL, masterKey)
			pipelineEnv(in, rc)
			// Two attempts, and a breaker that stays closed: each delivery is given up after its
			// second failure, as one would be after its fifth over a longer outage.
			in.setEnv("FORMWARD_RETRY_DELAYS", "10ms")
			in.setEnv("FORMWARD_BREAKER_FAILURES", "1000000")
			in.setEnv("FORMWARD_DELIVERY_CONCURRENCY_PER_ENDPOINT", "8")
			key := in.cli("keys", "create", "--name", "replay", "--scope", "admin")
			in.startServe()
			replayAfterOutage(t, in, rc, key, n)
		})
	}
}

func replayAfterOutage(t *testing.T, in *instance, rc *receiver, key string, n int) {
	formID, fieldID := createForm(t, in, key, "Outage")
	hook := registerWebhook(t, in, key, rc.url("/down"), formID, newSecret(t), "submission.created")
	wentDown := time.Now().UTC().Add(-time.Second)

	subs := make([]string, n)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				subs[i] = submit(t, in, key, formID, fieldID, fmt.Sprintf("answer %d", i))
			}
		})
	}
	wg.Wait()
	eventually(t, 10*time.Minute, "every delivery given up while the receiver is down", func() bool {
		return len(rc.requests("/down")) >= 2*n && countDeliveries(t, in, key, hook)["undeliverable"] == n
	})
	failed := map[string]string{} // submission → the delivery ID it was tried under
	for _, r := range rc.requests("/down") {
		failed[r.bodyObj(t)["data"].(map[string]any)["submission_id"].(string)] = r.header.Get("X-Service-Delivery")
	}
	rc.healed.Store(true)
	sentBefore := len(rc.requests("/down"))

	job := startReplay(t, in, key, hook, wentDown)
	done := waitReplay(t, in, key, hook, job)
	if done["events_total"] != float64(n) || done["events_sent"] != float64(n) || done["events_failed"] != 0.0 {
		t.Fatalf("replay %v, want %d events sent", done, n)
	}
	replayed := rc.requests("/down")[sentBefore:]
	checkReplayed(t, replayed, failed, n)

	// Deleted submissions never come back; the others come once more.
	deleted := map[string]bool{}
	for _, id := range subs[:10] {
		in.do("DELETE", "/v1/forms/"+formID+"/submissions/"+id, key, nil).expect(t, http.StatusNoContent)
		deleted[id] = true
	}
	sentBefore = len(rc.requests("/down"))
	job = startReplay(t, in, key, hook, wentDown)
	done = waitReplay(t, in, key, hook, job)
	if done["events_total"] != float64(n-10) || done["events_sent"] != float64(n-10) {
		t.Fatalf("second replay %v, want %d events sent", done, n-10)
	}
	again := rc.requests("/down")[sentBefore:]
	checkReplayed(t, again, failed, n-10)
	for _, r := range again {
		if deleted[r.bodyObj(t)["data"].(map[string]any)["submission_id"].(string)] {
			t.Fatalf("a deleted submission was replayed: %s", r.body)
		}
	}
}

// checkReplayed checks that reqs are want replayed deliveries, one per submission, each with the
// delivery ID its submission was first tried under.
func checkReplayed(t *testing.T, reqs []received, first map[string]string, want int) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range reqs {
		sub := r.bodyObj(t)["data"].(map[string]any)["submission_id"].(string)
		if seen[sub] {
			t.Fatalf("submission %s replayed twice in one replay", sub)
		}
		seen[sub] = true
		if r.header.Get("X-Service-Replay") != "true" || r.header.Get("X-Service-Event-Id") == "" {
			t.Fatalf("a replayed delivery without X-Service-Replay or X-Service-Event-Id: %v", r.header)
		}
		if got := r.header.Get("X-Service-Delivery"); got != first[sub] || r.header.Get("Webhook-Id") != got {
			t.Fatalf("submission %s replayed as %s (webhook-id %s), first sent as %s", sub, got, r.header.Get("Webhook-Id"), first[sub])
		}
	}
	if len(seen) != want || len(reqs) != want {
		t.Fatalf("%d requests for %d submissions, want %d", len(reqs), len(seen), want)
	}
}

func startReplay(t *testing.T, in *instance, key, hook string, since time.Time) string {
	t.Helper()
	r := in.do("POST", "/v1/webhooks/"+hook+"/replay", key, map[string]any{"since": since.Format(time.RFC3339Nano)})
	r.expect(t, http.StatusAccepted)
	return r.str(t, "id")
}

// waitReplay polls the job until it is done, and returns it.
func waitReplay(t *testing.T, in *instance, key, hook, job string) map[string]any {
	t.Helper()
	var last map[string]any
	eventually(t, 10*time.Minute, "the replay is done", func() bool {
		r := in.do("GET", "/v1/webhooks/"+hook+"/replays/"+job, key, nil)
		r.expect(t, http.StatusOK)
		last = r.obj
		if last["status"] == "failed" {
			t.Fatalf("replay failed: %v", last)
		}
		return last["status"] == "done"
	})
	return last
}

// countDeliveries counts a webhook's deliveries by status, reading every page.
func countDeliveries(t *testing.T, in *instance, key, hook string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	cursor := ""
	for {
		path := "/v1/webhooks/" + hook + "/deliveries?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		r := in.do("GET", path, key, nil)
		r.expect(t, http.StatusOK)
		for _, d := range objects(r.obj["data"]) {
			counts[d["status"].(string)]++
		}
		next, _ := r.obj["next_cursor"].(string)
		if next == "" {
			return counts
		}
		cursor = next
	}
}
