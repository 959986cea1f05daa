package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// recorder keeps, while on, the first response of each kind of request the load sends (the
// form read, an API submission, a page, a page post) in dir, for test/load/plain to answer
// with the same bytes: the plain server beside every figure of make bench. It is switched off
// before the measured load starts, so the load itself goes through a bare pass-through.
type recorder struct {
	next http.RoundTripper
	dir  string
	on   atomic.Bool
	mu   sync.Mutex
	seen map[string]bool
}

// recorded is one response as test/load/plain reads it.
type recorded struct {
	Status      int    `json:"status"`
	ContentType string `json:"content_type,omitempty"`
	Location    string `json:"location,omitempty"`
	Encoding    string `json:"content_encoding,omitempty"`
	Body        []byte `json:"body"`
}

// kindOf names the request's kind, "" for one the plain server does not answer.
func kindOf(r *http.Request) string {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v1/forms/") && strings.Count(p, "/") == 3:
		return "form"
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/v1/forms/") && strings.HasSuffix(p, "/submissions"):
		return "submit"
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/f/"):
		return "page"
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/f/"):
		return "capture"
	}
	return ""
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := rec.next.RoundTrip(r)
	if err != nil || !rec.on.Load() {
		return resp, err
	}
	kind := kindOf(r)
	rec.mu.Lock()
	first := kind != "" && !rec.seen[kind] && resp.StatusCode < 400
	if first {
		rec.seen[kind] = true
	}
	rec.mu.Unlock()
	if !first {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	out, err := json.Marshal(recorded{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Location: resp.Header.Get("Location"),
		Encoding: resp.Header.Get("Content-Encoding"), Body: body})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(rec.dir, kind+".json"), out, 0o644); err != nil {
		return nil, fmt.Errorf("record %s: %w", kind, err)
	}
	return resp, nil
}
