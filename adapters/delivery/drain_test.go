package delivery_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// fastReceiver is a healthy HTTPS endpoint on loopback: it answers 204 after delay and counts
// the requests and the most in flight at once.
type fastReceiver struct {
	srv      *httptest.Server
	got      atomic.Int64
	inFlight atomic.Int64
	mu       sync.Mutex
	peak     int64
	done     chan struct{} // closed when want requests came
	want     int64
}

func newFastReceiver(tb testing.TB, delay time.Duration, want int) *fastReceiver {
	r := &fastReceiver{done: make(chan struct{}), want: int64(want)}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := r.inFlight.Add(1)
		r.mu.Lock()
		r.peak = max(r.peak, n)
		r.mu.Unlock()
		// The endpoint's own work: the latency a healthy receiver answers with.
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-req.Context().Done():
		}
		r.inFlight.Add(-1)
		w.WriteHeader(http.StatusNoContent)
		if r.got.Add(1) == r.want {
			close(r.done)
		}
	}))
	tb.Cleanup(r.srv.Close)
	return r
}

func (r *fastReceiver) peakInFlight() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}

// drain queues n deliveries to one webhook of one workspace, answering in delay, runs an engine
// with the production defaults but perEndpointMax, and returns how long the endpoint took to
// receive them all and the most attempts it had in flight at once.
func drain(tb testing.TB, db *persistence.DB, n int, delay time.Duration, perEndpointMax int) (time.Duration, int64) {
	ctx := context.Background()
	cipher := persistencetest.Cipher()
	workspaces := persistence.NewWorkspaceRepository(db)
	hooks := persistence.NewWebhookRepository(db, cipher)
	deliveries := persistence.NewDeliveryRepository(db, cipher)
	recv := newFastReceiver(tb, delay, n)
	path := tb.TempDir() + "/ca.pem"
	writeCA(tb, path, recv.srv)
	client, err := delivery.NewClient(delivery.Options{AllowPrivate: true, ExtraCAFile: path})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(client.Close)

	now := time.Now()
	suffix := strconv.FormatInt(now.UnixNano(), 36)
	ws, err := workspace.New("wsp_drain"+suffix, "Acme", workspace.PlanBusiness, now)
	if err != nil {
		tb.Fatal(err)
	}
	if err := workspaces.Create(ctx, ws); err != nil {
		tb.Fatal(err)
	}
	hook, err := webhook.New("whk_drain"+suffix, ws.ID(), webhook.Draft{URL: recv.srv.URL + "/hook", Events: []string{"submission.created"}}, now)
	if err != nil {
		tb.Fatal(err)
	}
	if err := hooks.Create(ctx, hook); err != nil {
		tb.Fatal(err)
	}
	body := []byte(`{"event":"submission.created","form_id":"frm_1","data":{"fields":{"text":"` + strings.Repeat("x", 800) + `"}}}`)
	var backlog []*webhook.Delivery
	for i := range n {
		e := event.Event{ID: fmt.Sprintf("evt_%s_%05d", suffix, i), Type: event.SubmissionCreated, WorkspaceID: ws.ID(), FormID: "frm_1", OccurredAt: now}
		backlog = append(backlog, webhook.NewDelivery(fmt.Sprintf("dlv_%s_%05d", suffix, i), hook, e, body, now))
	}
	for len(backlog) > 0 {
		k := min(len(backlog), 500)
		if err := deliveries.AddAll(ctx, backlog[:k]); err != nil {
			tb.Fatal(err)
		}
		backlog = backlog[k:]
	}

	// Production defaults (16 at once, 4 per workspace, 2 per endpoint at first, 100 ms polling).
	counted := &countingDeliveries{DeliveryRepository: deliveries}
	defer func() {
		if os.Getenv("DRAIN_STATS") != "" {
			tb.Logf("claims %d (%v each, %.1f items), saves %d (%v each)", counted.claims.Load(), time.Duration(counted.claimNS.Load()/max(counted.claims.Load(), 1)),
				float64(counted.claimed.Load())/float64(max(counted.claims.Load(), 1)), counted.saves.Load(), time.Duration(counted.saveNS.Load()/max(counted.saves.Load(), 1)))
		}
	}()
	engine := webhooks.NewDeliveryEngine(counted, hooks, delivery.Sender{Client: client}, system.Clock{},
		webhooks.DeliveryEngineConfig{PerEndpointMax: perEndpointMax}, nil)
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	start := time.Now()
	go func() { _ = engine.Run(runCtx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	select {
	case <-recv.done:
	case <-time.After(2 * time.Minute):
		tb.Fatalf("%d of %d deliveries arrived in 2 minutes", recv.got.Load(), n)
	}
	return time.Since(start), recv.peakInFlight()
}

// writeCA writes the server's certificate as a PEM file for Options.ExtraCAFile.
func writeCA(tb testing.TB, path string, srv *httptest.Server) {
	tb.Helper()
	pemData := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, pemData, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// A healthy endpoint answering in a few milliseconds gets more than the two attempts at once it
// starts with, through the real database, client and engine.
func TestHealthyEndpointGetsMoreThanTwoAtOnce(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		took, peak := drain(t, db, 600, 3*time.Millisecond, webhooks.DefaultConcurrencyPerEndpointMax)
		t.Logf("600 deliveries in %v (%.0f/s), at most %d at once", took, 600/took.Seconds(), peak)
		if peak <= 2 {
			t.Fatalf("the healthy endpoint had at most %d attempts at once, want more than 2", peak)
		}
	})
}

// BenchmarkDrainOneEndpoint measures how fast a backlog of 4,000 deliveries to one healthy
// endpoint (HTTPS on loopback, answering in 3 ms) drains, with the fixed limit of 2 at once and
// with the adaptive limit. SQLite always, PostgreSQL when FORMWARD_TEST_POSTGRES_URL reaches one:
//
//	go test ./adapters/delivery -run '^$' -bench DrainOneEndpoint -benchtime 1x
func BenchmarkDrainOneEndpoint(b *testing.B) {
	const n = 4000
	dialects := []struct {
		name string
		open func(testing.TB) *persistence.DB
	}{
		{persistence.DialectSQLite, func(tb testing.TB) *persistence.DB { return persistencetest.SQLite(tb, nil) }},
		{persistence.DialectPostgres, func(tb testing.TB) *persistence.DB { return persistencetest.Postgres(tb) }},
	}
	for _, d := range dialects {
		for _, mode := range []struct {
			name string
			max  int
		}{{"fixed", webhooks.DefaultConcurrencyPerEndpoint}, {"adaptive", webhooks.DefaultConcurrencyPerEndpointMax}} {
			b.Run(d.name+"/"+mode.name, func(b *testing.B) {
				var total time.Duration
				var peak int64
				for range b.N {
					db := d.open(b)
					took, p := drain(b, db, n, 3*time.Millisecond, mode.max)
					total += took
					peak = max(peak, p)
				}
				b.ReportMetric(float64(n*b.N)/total.Seconds(), "deliveries/s")
				b.ReportMetric(float64(peak), "peak-in-flight")
			})
		}
	}
}

type countingDeliveries struct {
	ports.DeliveryRepository
	claims, claimed, claimNS, saves, saveNS atomic.Int64
}

func (c *countingDeliveries) ClaimDue(ctx context.Context, cl ports.Claim) ([]*webhook.Delivery, error) {
	t := time.Now()
	got, err := c.DeliveryRepository.ClaimDue(ctx, cl)
	c.claims.Add(1)
	c.claimed.Add(int64(len(got)))
	c.claimNS.Add(int64(time.Since(t)))
	return got, err
}

func (c *countingDeliveries) Save(ctx context.Context, d *webhook.Delivery) error {
	t := time.Now()
	err := c.DeliveryRepository.Save(ctx, d)
	c.saves.Add(1)
	c.saveNS.Add(int64(time.Since(t)))
	return err
}
