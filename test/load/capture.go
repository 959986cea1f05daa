package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// captureTarget posts the public form as its HTML form does: urlencoded, the page's hidden
// inputs (render token and the like) copied from a fetched page, a valid value for every field.
// The form's spam checks must be relaxed for a load run (bench.sh does it: proof_of_work off,
// min_fill_seconds 0, the per-IP form rate limit off); a render token is accepted once, so
// unless the server accepts a replay, each post carries the token of its own page, fetched
// before the measured window (or inline, untimed, when those run out).
func captureTarget(client *http.Client, base string, cfg config) (*target, error) {
	pageURL := cfg.site + "/f/" + cfg.formID
	data, err := buildData(client, base, cfg)
	if err != nil {
		return nil, err
	}
	status, page, err := get(context.Background(), client, pageURL)
	if err != nil {
		return nil, fmt.Errorf("first page: %w", err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("first page: GET %s: status %d: %s", pageURL, status, truncate(page, 300))
	}
	controls := parseControls(page)
	var missing []string
	// A multi-page form (its page carries _page) shows the first page's inputs only; its final
	// post carries every page's answers, as the last page's hidden inputs do, so only a
	// one-page form must name every field.
	_, multiPage := controls.byName["_page"]
	for id := range data {
		if multiPage {
			break
		}
		if _, ok := controls.byName[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("the page has no input named after field(s) %v; its inputs are %v", missing, controls.names())
	}

	postURL := pageURL
	if cfg.step {
		postURL = pageURL + "/page" // Next from page 1: every answer goes along, as carried ones do
	}
	bodyFor := func(page []byte) []byte {
		v := url.Values{}
		if cfg.step {
			v.Set("_nav", "next")
		}
		for _, h := range parseControls(page).hidden {
			if cfg.noToken && h.name == "_token" {
				continue
			}
			v.Add(h.name, h.value)
		}
		for id, val := range data {
			switch x := val.(type) {
			case []string:
				for _, s := range x {
					v.Add(id, s)
				}
			case bool:
				if x {
					value := "on"
					if c := controls.byName[id]; c.value != "" {
						value = c.value
					}
					v.Set(id, value)
				}
			case float64:
				v.Set(id, strconv.FormatFloat(x, 'f', -1, 64))
			default:
				v.Set(id, fmt.Sprint(x))
			}
		}
		return []byte(v.Encode())
	}

	var okCount atomic.Int64
	ok := func(status int) bool { return status == http.StatusOK || status == http.StatusSeeOther }
	shot := func(ctx context.Context, body []byte) (int, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, postURL, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", cfg.site)
		req.Header.Set("Referer", pageURL)
		req.Header.Set("User-Agent", "formward-load")
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		if ok(resp.StatusCode) {
			okCount.Add(1)
			_, err = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, nil, err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, b, err
	}
	fetchBody := func(ctx context.Context) ([]byte, error) {
		status, page, err := get(ctx, client, pageURL)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("GET %s: status %d", pageURL, status)
		}
		return bodyFor(page), nil
	}

	// First posts: one must succeed; a second with the same token tells whether tokens replay.
	first := bodyFor(page)
	if status, b, err := shot(context.Background(), first); err != nil {
		return nil, fmt.Errorf("first submission: %w", err)
	} else if !ok(status) {
		return nil, fmt.Errorf("first submission: status %d: %s", status, truncate(b, 600))
	}
	fresh := cfg.freshPage == "always"
	if cfg.step {
		// A page move spends no token: one body serves every post, and nothing is stored as a
		// submission.
		tg := &target{shot: shot, ok: ok}
		tg.next = func(context.Context) ([]byte, bool, error) { return first, false, nil }
		tg.after = func(*result) error { return nil }
		return tg, nil
	}
	if cfg.freshPage == "auto" && !cfg.noToken {
		status, _, err := shot(context.Background(), first)
		if err != nil {
			return nil, fmt.Errorf("replay probe: %w", err)
		}
		fresh = !ok(status)
		fmt.Fprintf(os.Stderr, "load: a replayed render token is answered %d: each post %s\n", status,
			map[bool]string{true: "carries a token of its own (pages fetched before the measured window)", false: "reuses one body"}[fresh])
	}
	okCount.Store(0) // the probes above are stored before the count below
	before, err := submissionCount(client, base, cfg)
	if err != nil {
		return nil, err
	}

	tg := &target{shot: shot, ok: ok}
	if !fresh {
		tg.next = func(context.Context) ([]byte, bool, error) { return first, false, nil }
	} else {
		pool := prefetch(cfg, fetchBody)
		var mu sync.Mutex
		tg.next = func(ctx context.Context) ([]byte, bool, error) {
			mu.Lock()
			if n := len(pool); n > 0 {
				b := pool[n-1]
				pool = pool[:n-1]
				mu.Unlock()
				return b, false, nil
			}
			mu.Unlock()
			b, err := fetchBody(ctx)
			return b, true, err
		}
	}
	tg.after = func(res *result) error {
		withToken := !cfg.noToken
		res.RenderToken = &withToken
		after, err := submissionCount(client, base, cfg)
		if err != nil {
			return err
		}
		res.StoredDelta = after - before
		if res.StoredDelta != okCount.Load() {
			return fmt.Errorf("the form's submission_count grew by %d during the run, but %d posts were answered as accepted", res.StoredDelta, okCount.Load())
		}
		fmt.Fprintf(os.Stderr, "load: submission_count grew by %d = every accepted post, warm-up included\n", res.StoredDelta)
		return nil
	}
	return tg, nil
}

// prefetch fetches pages with every connection for as long as the warm-up and measured run
// will take, each parsed into a ready body with its own render token.
func prefetch(cfg config, fetchBody func(context.Context) ([]byte, error)) [][]byte {
	span := cfg.warmup + cfg.duration
	t0 := time.Now()
	until := t0.Add(span)
	var mu sync.Mutex
	var pool [][]byte
	var failed atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < cfg.connections; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine [][]byte
			for time.Now().Before(until) {
				b, err := fetchBody(context.Background())
				if err != nil {
					failed.Add(1)
					continue
				}
				mine = append(mine, b)
			}
			mu.Lock()
			pool = append(pool, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "load: pre-fetched %d pages (render tokens) in %s, %d failed\n", len(pool), time.Since(t0).Round(time.Millisecond), failed.Load())
	return pool
}

func submissionCount(client *http.Client, base string, cfg config) (int64, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/forms/"+cfg.formID, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+cfg.key)
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("get form: %w", err)
	}
	defer resp.Body.Close()
	var f struct {
		SubmissionCount *int64 `json:"submission_count"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil || f.SubmissionCount == nil {
		return 0, fmt.Errorf("get form: status %d, no submission_count (%v)", resp.StatusCode, err)
	}
	return *f.SubmissionCount, nil
}

// control is one named input, select or textarea of the page.
type control struct {
	tag, typ, name, value string
}

type controls struct {
	byName map[string]control
	hidden []control // type=hidden inputs, copied into every post
}

func (c controls) names() []string {
	var out []string
	for n := range c.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var (
	tagRe  = regexp.MustCompile(`(?is)<(input|select|textarea)\b([^>]*)>`)
	attrRe = regexp.MustCompile(`(?s)([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)
)

// parseControls finds the named form controls in the page; good enough for server-rendered
// attributes, which is all the page has.
func parseControls(page []byte) controls {
	c := controls{byName: map[string]control{}}
	for _, m := range tagRe.FindAllSubmatch(page, -1) {
		ctl := control{tag: strings.ToLower(string(m[1]))}
		for _, a := range attrRe.FindAllSubmatch(m[2], -1) {
			val := string(a[2]) + string(a[3]) + string(a[4])
			switch strings.ToLower(string(a[1])) {
			case "name":
				ctl.name = html.UnescapeString(val)
			case "type":
				ctl.typ = strings.ToLower(val)
			case "value":
				ctl.value = html.UnescapeString(val)
			}
		}
		if ctl.name == "" {
			continue
		}
		if _, seen := c.byName[ctl.name]; !seen {
			c.byName[ctl.name] = ctl
		}
		if ctl.tag == "input" && ctl.typ == "hidden" {
			c.hidden = append(c.hidden, ctl)
		}
	}
	return c
}
