package e2e_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPipelineLatency measures the time from the 201 of a submission to the webhook's receipt
// of its delivery, at a fixed arrival rate (open loop: a slow answer does not slow the sender).
// It runs only with FORMWARD_BENCH_PIPELINE=1:
//
//	FORMWARD_BENCH_PIPELINE=1 go test ./test -run TestPipelineLatency -v -timeout 10m
//
// Knobs: FORMWARD_BENCH_RATE (submissions/s, default 500), FORMWARD_BENCH_SECONDS (10).
func TestPipelineLatency(t *testing.T) {
	if os.Getenv("FORMWARD_BENCH_PIPELINE") != "1" {
		t.Skip("set FORMWARD_BENCH_PIPELINE=1 to run the pipeline latency benchmark")
	}
	rate := envInt("FORMWARD_BENCH_RATE", 500)
	seconds := envInt("FORMWARD_BENCH_SECONDS", 10)

	t.Run("embedded-sqlite", func(t *testing.T) {
		in, key, rc := benchInstance(t, "")
		in.startServe()
		measureLatency(t, in, key, rc, rate, seconds)
		in.stopServe()
	})
	t.Run("embedded-postgres", func(t *testing.T) {
		dbURL := freshPostgresDatabase(t)
		in, key, rc := benchInstance(t, dbURL)
		in.startServe()
		measureLatency(t, in, key, rc, rate, seconds)
		in.stopServe()
		logStages(t, dbURL)
	})
	t.Run("kafka-postgres", func(t *testing.T) {
		dbURL := freshPostgresDatabase(t)
		in, key, rc := benchInstance(t, dbURL, "FORMWARD_KAFKA_BROKERS", strings.Join(kafkaBrokers(t), ","))
		in.startServe()
		in.startProc("relay")
		in.startProc("worker")
		measureLatency(t, in, key, rc, rate, seconds)
		in.stopServe()
		logStages(t, dbURL)
	})
}

// logStages splits the latency by stage from the stored timestamps (milliseconds): outbox row
// committed → published by the relay → delivery recorded by the fan-out → first attempt made.
func logStages(t *testing.T, dbURL string) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	row := db.QueryRow(`WITH s AS (
		SELECT o.published_at - o.created_at AS relay, d.created_at - o.published_at AS fanout,
		       (d.attempts::jsonb->0->>'at')::bigint - d.created_at AS send
		FROM outbox o JOIN deliveries d ON d.event_id = o.id)
		SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY relay), percentile_disc(0.99) WITHIN GROUP (ORDER BY relay),
		       percentile_disc(0.5) WITHIN GROUP (ORDER BY fanout), percentile_disc(0.99) WITHIN GROUP (ORDER BY fanout),
		       percentile_disc(0.5) WITHIN GROUP (ORDER BY send), percentile_disc(0.99) WITHIN GROUP (ORDER BY send) FROM s`)
	var r50, r99, f50, f99, s50, s99 sql.NullInt64
	if err := row.Scan(&r50, &r99, &f50, &f99, &s50, &s99); err != nil {
		t.Logf("stages: %v", err)
		return
	}
	t.Logf("stages (ms, p50/p99): commit→published %d/%d, published→delivery recorded %d/%d, recorded→first attempt %d/%d",
		r50.Int64, r99.Int64, f50.Int64, f99.Int64, s50.Int64, s99.Int64)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchInstance is an instance at the info log level, without rate limit, with a migrated
// database and an admin key; env adds name, value pairs.
func benchInstance(t *testing.T, dbURL string, env ...string) (*instance, string, *receiver) {
	t.Helper()
	rc := newReceiver(t)
	in := newInstance(t, dbURL, randomMasterKey(t))
	pipelineEnv(in, rc)
	for i := 0; i+1 < len(env); i += 2 {
		in.setEnv(env[i], env[i+1])
	}
	in.cli("migrate")
	return in, in.cli("keys", "create", "--name", "bench", "--scope", "admin"), rc
}

func measureLatency(t *testing.T, in *instance, key string, rc *receiver, rate, seconds int) {
	form, field := createForm(t, in, key, "Bench")
	registerWebhook(t, in, key, rc.url("/ok"), form, newSecret(t), "submission.created")

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}
	url := in.baseURL + "/v1/forms/" + form + "/submissions"
	var mu sync.Mutex
	created := map[string]time.Time{}
	failures := 0
	var wg sync.WaitGroup
	interval := time.Second / time.Duration(rate)
	total := rate * seconds
	start := time.Now()
	for i := range total {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval))) // the arrival schedule of the load
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"data": map[string]any{field: fmt.Sprintf("bench %d", i)}})
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				mu.Lock()
				failures++
				mu.Unlock()
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			at := time.Now()
			var out struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(raw, &out)
			mu.Lock()
			defer mu.Unlock()
			if resp.StatusCode != http.StatusCreated || out.ID == "" {
				failures++
				return
			}
			created[out.ID] = at
		})
	}
	wg.Wait()
	sent := time.Since(start)

	receipt := func() map[string]time.Time {
		out := map[string]time.Time{}
		for _, r := range rc.requests("/ok") {
			var b struct {
				Data struct {
					SubmissionID string `json:"submission_id"`
				} `json:"data"`
			}
			_ = json.Unmarshal(r.body, &b)
			if _, seen := out[b.Data.SubmissionID]; !seen {
				out[b.Data.SubmissionID] = r.at
			}
		}
		return out
	}
	eventually(t, 60*time.Second, "every delivery", func() bool { return len(receipt()) >= len(created) })
	got := receipt()
	lat := make([]time.Duration, 0, len(created))
	for id, at := range created {
		lat = append(lat, max(got[id].Sub(at), 0))
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		return lat[min(len(lat)-1, int(math.Ceil(p*float64(len(lat))))-1)]
	}
	t.Logf("%d submissions in %v (%.0f/s), %d failed; 201→receipt p50 %v, p90 %v, p99 %v, max %v",
		len(created), sent.Round(time.Millisecond), float64(len(created))/sent.Seconds(), failures,
		pct(0.50).Round(time.Millisecond), pct(0.90).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	if failures > 0 {
		t.Errorf("%d submissions failed", failures)
	}
}
