// Command load drives the capture path of a running formward: many connections posting API
// submissions to one form, as fast as the server acknowledges them. Only 201 counts as
// acknowledged. It prints one JSON line with throughput and latency percentiles on stdout and a
// human summary on stderr.
//
//	go run ./test/load -url http://127.0.0.1:8080/v1 -key KEY -form frm_... -c 64 -d 10s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

type config struct {
	baseURL     string
	key         string
	formID      string
	fields      string
	db          string
	connections int
	duration    time.Duration
	warmup      time.Duration
	timeout     time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.baseURL, "url", "http://127.0.0.1:8080/v1", "API base URL, including /v1")
	flag.StringVar(&cfg.key, "key", os.Getenv("FORMWARD_KEY"), "API key (read-write or admin); default $FORMWARD_KEY")
	flag.StringVar(&cfg.formID, "form", "", "form ID to submit to")
	flag.StringVar(&cfg.fields, "fields", "", "comma-separated field IDs, each optionally id=value (default: GET the form and build valid values for its fields)")
	flag.StringVar(&cfg.db, "db", "", "label for the database under test, copied into the result")
	flag.IntVar(&cfg.connections, "c", 64, "concurrent connections")
	flag.DurationVar(&cfg.duration, "d", 10*time.Second, "measured duration")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "warm-up before measuring (not counted)")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "per-request timeout")
	flag.Parse()

	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// result is the JSON line printed on stdout.
type result struct {
	DB              string         `json:"db"`
	Connections     int            `json:"connections"`
	DurationS       float64        `json:"duration_s"`
	Acknowledged    int            `json:"acknowledged"`
	Errors          int            `json:"errors"`
	RPS             float64        `json:"rps"`
	P50ms           float64        `json:"p50_ms"`
	P90ms           float64        `json:"p90_ms"`
	P99ms           float64        `json:"p99_ms"`
	MaxMs           float64        `json:"max_ms"`
	Statuses        map[string]int `json:"statuses,omitempty"`
	TransportErrors int            `json:"transport_errors,omitempty"`
}

// workerStats is kept per worker so the hot loop shares nothing.
type workerStats struct {
	latencies    []time.Duration // acknowledged requests only
	acknowledged int
	statuses     map[int]int
	transport    int
	firstFailure string
}

func run(cfg config) error {
	if cfg.formID == "" {
		return errors.New("-form is required")
	}
	if cfg.key == "" {
		return errors.New("-key is required")
	}
	if cfg.connections < 1 {
		return errors.New("-c must be at least 1")
	}
	base := strings.TrimRight(cfg.baseURL, "/")

	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.connections,
		MaxIdleConnsPerHost: cfg.connections,
		MaxConnsPerHost:     cfg.connections,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	client := &http.Client{Transport: transport, Timeout: cfg.timeout}

	data, err := buildData(client, base, cfg)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return err
	}
	target := base + "/forms/" + cfg.formID + "/submissions"

	// One request first, so a wrong key or an invalid body fails loudly instead of as a
	// benchmark of error responses.
	if status, respBody, err := post(context.Background(), client, target, cfg.key, body); err != nil {
		return fmt.Errorf("first submission: %w", err)
	} else if status != http.StatusCreated {
		return fmt.Errorf("first submission: status %d: %s", status, respBody)
	}

	start := time.Now()
	measureFrom := start.Add(cfg.warmup)
	measureTo := measureFrom.Add(cfg.duration)
	ctx, cancel := context.WithDeadline(context.Background(), measureTo.Add(cfg.timeout))
	defer cancel()

	stats := make([]*workerStats, cfg.connections)
	var wg sync.WaitGroup
	for i := range stats {
		s := &workerStats{statuses: map[int]int{}, latencies: make([]time.Duration, 0, 4096)}
		stats[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t0 := time.Now()
				if !t0.Before(measureTo) {
					return
				}
				status, respBody, err := post(ctx, client, target, cfg.key, body)
				lat := time.Since(t0)
				if t0.Before(measureFrom) {
					continue // warm-up
				}
				switch {
				case err != nil:
					s.transport++
					if s.firstFailure == "" {
						s.firstFailure = err.Error()
					}
				case status == http.StatusCreated:
					s.acknowledged++
					s.latencies = append(s.latencies, lat)
				default:
					s.statuses[status]++
					if s.firstFailure == "" {
						s.firstFailure = fmt.Sprintf("status %d: %s", status, truncate(respBody, 300))
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(measureFrom)

	res := result{DB: cfg.db, Connections: cfg.connections, DurationS: round(elapsed.Seconds(), 3), Statuses: map[string]int{}}
	var all []time.Duration
	var failures []string
	for _, s := range stats {
		res.Acknowledged += s.acknowledged
		res.TransportErrors += s.transport
		res.Errors += s.transport
		for code, n := range s.statuses {
			res.Statuses[fmt.Sprint(code)] += n
			res.Errors += n
		}
		if s.firstFailure != "" && len(failures) < 3 {
			failures = append(failures, s.firstFailure)
		}
		all = append(all, s.latencies...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	res.RPS = round(float64(res.Acknowledged)/elapsed.Seconds(), 1)
	res.P50ms = percentileMs(all, 0.50)
	res.P90ms = percentileMs(all, 0.90)
	res.P99ms = percentileMs(all, 0.99)
	if len(all) > 0 {
		res.MaxMs = ms(all[len(all)-1])
	}
	if len(res.Statuses) == 0 {
		res.Statuses = nil
	}

	fmt.Fprintf(os.Stderr, "load: %d connections, %.1fs measured after %s warm-up: %d acknowledged (%.0f/s), %d errors; p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		res.Connections, res.DurationS, cfg.warmup, res.Acknowledged, res.RPS, res.Errors, res.P50ms, res.P90ms, res.P99ms, res.MaxMs)
	for code, n := range res.Statuses {
		fmt.Fprintf(os.Stderr, "load: status %s: %d responses\n", code, n)
	}
	if res.TransportErrors > 0 {
		fmt.Fprintf(os.Stderr, "load: transport errors: %d\n", res.TransportErrors)
	}
	for _, f := range failures {
		fmt.Fprintf(os.Stderr, "load: e.g. %s\n", f)
	}

	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	if res.Acknowledged == 0 {
		return errors.New("no submission was acknowledged")
	}
	return nil
}

func post(ctx context.Context, client *http.Client, target, key string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusCreated {
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, b, err
}

// field is the part of a form field the load tool needs to build a valid value.
type field struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Options  []string `json:"options"`
	Required bool     `json:"required"`
}

// buildData returns a valid data object: from -fields when given, else from the form itself.
func buildData(client *http.Client, base string, cfg config) (map[string]any, error) {
	data := map[string]any{}
	if cfg.fields != "" {
		for _, entry := range strings.Split(cfg.fields, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			id, value, ok := strings.Cut(entry, "=")
			if !ok {
				value = "load test value"
			}
			data[id] = value
		}
		return data, nil
	}

	req, err := http.NewRequest(http.MethodGet, base+"/forms/"+cfg.formID, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+cfg.key)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get form: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("get form: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get form: status %d: %s", resp.StatusCode, truncate(raw, 300))
	}
	var form struct {
		Fields []field `json:"fields"`
	}
	if err := json.Unmarshal(raw, &form); err != nil {
		return nil, fmt.Errorf("get form: %w", err)
	}
	if len(form.Fields) == 0 {
		return nil, errors.New("the form has no fields")
	}
	for i, f := range form.Fields {
		data[f.ID] = valueFor(f, i)
	}
	return data, nil
}

// valueFor builds a value that the DECISIONS.md rules accept for the field's type.
func valueFor(f field, i int) any {
	switch f.Type {
	case "email":
		return fmt.Sprintf("respondent%d@example.com", i)
	case "number":
		return 42.5 + float64(i)
	case "dropdown", "radio":
		if len(f.Options) > 0 {
			return f.Options[len(f.Options)-1]
		}
		return ""
	case "checkbox":
		if len(f.Options) == 0 {
			return true
		}
		if len(f.Options) == 1 {
			return []string{f.Options[0]}
		}
		return []string{f.Options[0], f.Options[1]}
	case "textarea":
		return strings.Repeat("A longer answer that spans a few sentences of free text. ", 8)
	case "date":
		return "2025-03-14"
	case "file":
		return []string{"https://files.example.com/uploads/report.pdf"}
	default: // text and anything new
		return fmt.Sprintf("load test answer %d", i)
	}
}

func percentileMs(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	idx := int(math.Ceil(p*float64(len(sorted)))) - 1
	if idx < 0 {
		idx = 0
	}
	return ms(sorted[idx])
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
