package bootstrap

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/ports"
)

// readiness keeps /readyz truthful when storage fails: once a write has met a storage failure
// (the database says so, or any request was answered 503 unavailable), /readyz answers 503
// until a probe write to the database and the object store succeeds, or a write request
// succeeds again. A load balancer then stops sending traffic to a process whose disk is full
// instead of collecting errors.
type readiness struct {
	probe         func(ctx context.Context) error
	writesFailing func() bool
	log           *zap.Logger

	mu      sync.Mutex
	failing bool
}

// newReadiness probes with one small database write and one small object written and deleted.
func newReadiness(rt *Runtime) *readiness {
	return &readiness{log: rt.Log, writesFailing: rt.DB.WritesFailing, probe: func(ctx context.Context) error {
		if err := rt.DB.ProbeWrite(ctx); err != nil {
			return err
		}
		if rt.Files == nil {
			return nil
		}
		return probeObjectStore(ctx, rt.Files)
	}}
}

// probeObjectKey is where the probe object lives; no upload key starts with "readiness/".
const probeObjectKey = "readiness/probe"

func probeObjectStore(ctx context.Context, store ports.ObjectStore) error {
	body := bytes.Repeat([]byte{'.'}, 4096)
	if err := store.Put(ctx, probeObjectKey, bytes.NewReader(body), int64(len(body)), "application/octet-stream"); err != nil {
		return fmt.Errorf("probe object store: %w", err)
	}
	if err := store.Delete(ctx, probeObjectKey); err != nil {
		return fmt.Errorf("probe object store: %w", err)
	}
	return nil
}

func (rd *readiness) setFailing(v bool) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.failing != v {
		if v {
			rd.log.Warn("storage unavailable: not ready until a write succeeds")
		} else {
			rd.log.Info("storage takes writes again: ready")
		}
	}
	rd.failing = v
}

// check answers /readyz's question "may this process take writes?" after a failure.
func (rd *readiness) check(ctx context.Context) error {
	rd.mu.Lock()
	failing := rd.failing
	rd.mu.Unlock()
	if !failing && !rd.writesFailing() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rd.probe(ctx); err != nil {
		rd.setFailing(true)
		return err
	}
	rd.setFailing(false)
	return nil
}

// wrap records the outcome of every request and answers /readyz with 503 while failing.
func (rd *readiness) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			if err := rd.check(r.Context()); err != nil {
				rd.log.Warn("not ready", zap.Error(err))
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.Header().Set("Retry-After", "5")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"status":"unavailable"}` + "\n"))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		switch {
		case sw.status == http.StatusServiceUnavailable:
			rd.setFailing(true)
		case sw.status >= 200 && sw.status < 300 && r.Method != http.MethodGet && r.Method != http.MethodHead:
			rd.setFailing(false)
		}
	})
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer (flush, deadlines).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush passes a flush through (gin's writer asserts http.Flusher when a handler flushes).
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
