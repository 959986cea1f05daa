// Command load drives a running formward with many connections, as fast as the server answers,
// in one of three modes:
//
//   - api (default): API POST /v1/forms/{id}/submissions with a JSON body; only 201 counts;
//   - page: the public page GET /f/{id}; only 200 counts;
//   - capture: the public capture POST /f/{id} with an application/x-www-form-urlencoded body,
//     as the page's HTML form sends it; 200 (the thank-you page) or 303 (a redirect) counts, and
//     at the end the form's submission_count must have grown by the acknowledged number.
//
// It prints one JSON line with throughput and latency percentiles on stdout and a human summary
// on stderr.
//
//	go run ./test/load -url http://127.0.0.1:8080/v1 -key KEY -form frm_... -c 64 -d 10s
//	go run ./test/load -mode page -url http://127.0.0.1:8080/v1 -key KEY -form frm_...
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
	mode        string
	site        string
	freshPage   string
	noToken     bool
	step        bool
	record      string
	encoding    string
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
	flag.StringVar(&cfg.mode, "mode", "api", "what to load: api (JSON API capture), page (GET /f/{id}) or capture (urlencoded POST /f/{id})")
	flag.StringVar(&cfg.site, "site", "", "public site root for page and capture modes (default: -url without its /v1)")
	flag.BoolVar(&cfg.noToken, "no-token", false, "capture mode: leave the page's render token (_token) out of the post; the server accepts that only when the form's min_fill_seconds is 0 and proof_of_work is off")
	flag.BoolVar(&cfg.step, "step", false, "capture mode: post Next from page 1 (POST /f/{id}/page) instead of the final post: a page move, which on a form with save and resume saves a new draft; nothing is stored as a submission")
	flag.StringVar(&cfg.freshPage, "fresh-page", "auto", "capture mode: post each submission with a render token of its own, from a page fetched beforehand (always, never, or auto: when the server refuses a replayed token)")
	flag.StringVar(&cfg.encoding, "accept-encoding", "", "page mode: the Accept-Encoding of the page requests (gzip: as a browser asks; default none, the page uncompressed)")
	flag.StringVar(&cfg.record, "record", "", "folder to keep the first response of each kind in (the form, a submission, a page, a page post), for test/load/plain to answer the same bytes")
	ab := flag.String("ab", "", "summarize an A/B file of tagged result lines (test/load/ab.sh) and exit")
	flag.Parse()

	if *ab != "" {
		if err := summarizeAB(*ab); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// result is the JSON line printed on stdout.
type result struct {
	Mode            string         `json:"mode"`
	RenderToken     *bool          `json:"render_token,omitempty"` // capture mode: the post carries the page's _token
	AcceptEncoding  string         `json:"accept_encoding,omitempty"`
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
	// Capture mode: pages fetched in the measured window because the pre-fetched render
	// tokens ran out (their time is not in the latencies), and the stored-count check.
	InlinePageFetches int   `json:"inline_page_fetches,omitempty"`
	StoredDelta       int64 `json:"stored_delta,omitempty"`
}

// workerStats is kept per worker so the hot loop shares nothing.
type workerStats struct {
	latencies    []time.Duration // acknowledged requests only
	acknowledged int
	statuses     map[int]int
	transport    int
	firstFailure string
	inline       int // capture mode: pages fetched in the measured window for a fresh token
}

// target is what one mode loads: shot sends one measured request; prepare, when set, runs
// untimed before each shot (capture mode fetching a page for a fresh render token).
type target struct {
	shot func(ctx context.Context, payload []byte) (int, []byte, error)
	ok   func(status int) bool
	// next returns the payload of the next shot and whether it had to be fetched inline.
	next func(ctx context.Context) ([]byte, bool, error)
	// after runs once the load has stopped (capture mode: the stored-count check).
	after func(res *result) error
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
	if cfg.site == "" {
		cfg.site = strings.TrimSuffix(base, "/v1")
	}
	cfg.site = strings.TrimRight(cfg.site, "/")

	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.connections,
		MaxIdleConnsPerHost: cfg.connections,
		MaxConnsPerHost:     cfg.connections,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	var rt http.RoundTripper = transport
	var rec *recorder
	if cfg.record != "" {
		if err := os.MkdirAll(cfg.record, 0o755); err != nil {
			return err
		}
		rec = &recorder{next: transport, dir: cfg.record, seen: map[string]bool{}}
		rec.on.Store(true)
		rt = rec
	}
	// Redirects are answers here (a capture may redirect to the owner's URL), never followed.
	client := &http.Client{Transport: rt, Timeout: cfg.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	var tg *target
	var err error
	switch cfg.mode {
	case "api":
		tg, err = apiTarget(client, base, cfg)
	case "page":
		tg, err = pageTarget(client, cfg)
	case "capture":
		tg, err = captureTarget(client, base, cfg)
	default:
		err = fmt.Errorf("unknown -mode %q (want api, page or capture)", cfg.mode)
	}
	if err != nil {
		return err
	}

	if rec != nil {
		rec.on.Store(false) // recorded from the probes above; the load passes through untouched
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
				if !time.Now().Before(measureTo) {
					return
				}
				payload, inline, err := tg.next(ctx)
				if err != nil {
					s.transport++
					if s.firstFailure == "" {
						s.firstFailure = "fetching the page: " + err.Error()
					}
					continue
				}
				t0 := time.Now()
				if !t0.Before(measureTo) {
					return
				}
				if inline && !t0.Before(measureFrom) {
					s.inline++
				}
				status, respBody, err := tg.shot(ctx, payload)
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
				case tg.ok(status):
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

	mode := cfg.mode
	if cfg.step {
		mode = "step"
	}
	res := result{Mode: mode, DB: cfg.db, Connections: cfg.connections, DurationS: round(elapsed.Seconds(), 3), Statuses: map[string]int{}}
	var all []time.Duration
	var failures []string
	for _, s := range stats {
		res.Acknowledged += s.acknowledged
		res.TransportErrors += s.transport
		res.Errors += s.transport
		res.InlinePageFetches += s.inline
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
	var afterErr error
	if tg.after != nil {
		afterErr = tg.after(&res)
	}

	fmt.Fprintf(os.Stderr, "load: %s, %d connections, %.1fs measured after %s warm-up: %d acknowledged (%.0f/s), %d errors; p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		res.Mode, res.Connections, res.DurationS, cfg.warmup, res.Acknowledged, res.RPS, res.Errors, res.P50ms, res.P90ms, res.P99ms, res.MaxMs)
	for code, n := range res.Statuses {
		fmt.Fprintf(os.Stderr, "load: status %s: %d responses\n", code, n)
	}
	if res.TransportErrors > 0 {
		fmt.Fprintf(os.Stderr, "load: transport errors: %d\n", res.TransportErrors)
	}
	if res.InlinePageFetches > 0 {
		fmt.Fprintf(os.Stderr, "load: %d pages fetched inline for render tokens (untimed, but they share the server)\n", res.InlinePageFetches)
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
		return errors.New("no request was acknowledged")
	}
	return afterErr
}

// apiTarget posts one valid JSON body to the API; only 201 counts.
func apiTarget(client *http.Client, base string, cfg config) (*target, error) {
	data, err := buildData(client, base, cfg)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return nil, err
	}
	url := base + "/forms/" + cfg.formID + "/submissions"
	// One request first, so a wrong key or an invalid body fails loudly instead of as a
	// benchmark of error responses.
	if status, respBody, err := post(context.Background(), client, url, cfg.key, body); err != nil {
		return nil, fmt.Errorf("first submission: %w", err)
	} else if status != http.StatusCreated {
		return nil, fmt.Errorf("first submission: status %d: %s", status, respBody)
	}
	return &target{
		shot: func(ctx context.Context, payload []byte) (int, []byte, error) {
			return post(ctx, client, url, cfg.key, payload)
		},
		ok:   func(status int) bool { return status == http.StatusCreated },
		next: func(context.Context) ([]byte, bool, error) { return body, false, nil },
	}, nil
}

// pageTarget fetches the public page; only 200 counts, with its whole body read.
func pageTarget(client *http.Client, cfg config) (*target, error) {
	url := cfg.site + "/f/" + cfg.formID
	if status, body, err := get(context.Background(), client, url, cfg.encoding); err != nil {
		return nil, fmt.Errorf("first page: %w", err)
	} else if status != http.StatusOK {
		return nil, fmt.Errorf("first page: GET %s: status %d: %s", url, status, truncate(body, 300))
	}
	return &target{
		shot:  func(ctx context.Context, _ []byte) (int, []byte, error) { return get(ctx, client, url, cfg.encoding) },
		ok:    func(status int) bool { return status == http.StatusOK },
		next:  func(context.Context) ([]byte, bool, error) { return nil, false, nil },
		after: func(res *result) error { res.AcceptEncoding = cfg.encoding; return nil },
	}, nil
}

// get fetches url; with an encoding, it asks for it (Accept-Encoding) and the body is returned
// as sent, not decoded.
func get(ctx context.Context, client *http.Client, url string, encoding ...string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	if len(encoding) > 0 && encoding[0] != "" {
		req.Header.Set("Accept-Encoding", encoding[0])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
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

// valueFor builds a value that the submitted-value rules (docs/api.md) accept for the field's type.
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
