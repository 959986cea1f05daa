package bootstrap

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/test/testkit"
)

// roleCLI is the CLI with one role's flags parsed, ready for c.relay or c.worker.
func roleCLI(t *testing.T, role string, args ...string) *cli {
	t.Helper()
	var out bytes.Buffer
	c, root := newCLI(&out, &out)
	cmd, _, err := root.Find([]string{role})
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"--data-dir", t.TempDir(), "--log-level", "error", "--master-key", crypto.GenerateMasterKey().Base64()}
	if err := cmd.ParseFlags(append(base, args...)); err != nil {
		t.Fatal(err)
	}
	if len(c.errs) > 0 {
		t.Fatal(c.errs)
	}
	return c
}

func loopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// probe GETs path on the metrics listener; status 0 when nothing answers.
func probe(addr, path string) (int, string) {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// waitProbe polls path until it answers want, for up to 30 seconds.
func waitProbe(t *testing.T, addr, path string, want int) {
	t.Helper()
	var code int
	var body string
	if !testkit.Wait(30*time.Second, func() bool {
		code, body = probe(addr, path)
		return code == want
	}) {
		t.Fatalf("%s answered %d %s for 30s, want %d", path, code, body, want)
	}
}

// Relay and worker answer /healthz while their loops run and /readyz while the database and a
// Kafka broker answer, on the metrics listener; once Kafka is gone /readyz says 503, and once
// the role stopped /healthz does.
func TestRelayAndWorkerProbes(t *testing.T) {
	for _, role := range []string{"relay", "worker"} {
		t.Run(role, func(t *testing.T) {
			cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			defer cluster.Close()
			addr := loopbackAddr(t)
			c := roleCLI(t, role, "--kafka-brokers", cluster.ListenAddrs()[0], "--metrics-addr", addr)
			run := map[string]func(context.Context) error{"relay": c.relay, "worker": c.worker}[role]
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- run(ctx) }()

			waitProbe(t, addr, "/healthz", http.StatusOK)
			waitProbe(t, addr, "/readyz", http.StatusOK)
			if code, body := probe(addr, "/readyz"); code != http.StatusOK || body != `{"status":"ok"}` {
				t.Fatalf("/readyz = %d %s", code, body)
			}

			cluster.Close()
			waitProbe(t, addr, "/readyz", http.StatusServiceUnavailable)
			if code, body := probe(addr, "/healthz"); code != http.StatusOK {
				t.Fatalf("/healthz without Kafka = %d %s: the process still runs, it is only not ready", code, body)
			}

			cancel()
			if err := <-done; err != nil {
				t.Fatalf("%s: %v", role, err)
			}
			if code, body := probe(addr, "/healthz"); code != http.StatusServiceUnavailable || body != `{"status":"stopped"}` {
				t.Fatalf("/healthz after the role stopped = %d %s", code, body)
			}
		})
	}
}

// /readyz answers 503 once the database is gone, though Kafka still answers; serve's metrics
// listener has no probes (serve answers them on its public listener).
func TestProbesNeedTheDatabase(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	db := persistencetest.SQLite(t, nil)
	p := newRoleProbes(db, cluster.ListenAddrs(), zap.NewNop())
	h := metricsHandler(metrics.New().Registry, p)
	get := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	if got := get("/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz = %d with the database and Kafka up", got)
	}
	if err := db.SQL().Close(); err != nil {
		t.Fatal(err)
	}
	if got := get("/readyz"); got != http.StatusServiceUnavailable {
		t.Fatalf("/readyz = %d with the database closed, want 503", got)
	}

	serveOnly := metricsHandler(metrics.New().Registry, nil)
	for _, path := range []string{"/healthz", "/readyz"} {
		rec := httptest.NewRecorder()
		serveOnly.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("serve's metrics listener answers %s with %d, want 404", path, rec.Code)
		}
	}
}
