package delivery_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	"github.com/formward/formward/test/testkit"
)

// receiver is an HTTPS server on loopback; hang makes it hold every request until the test
// ends, otherwise it answers 204 and records when the first request came.
type receiver struct {
	srv      *httptest.Server
	inFlight atomic.Int64
	mu       sync.Mutex
	first    time.Time
}

func newReceiver(t *testing.T, hang bool) *receiver {
	t.Helper()
	r := &receiver{}
	release := make(chan struct{})
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.inFlight.Add(1)
		defer r.inFlight.Add(-1)
		if hang {
			select {
			case <-release:
			case <-req.Context().Done():
			}
			return
		}
		r.mu.Lock()
		if r.first.IsZero() {
			r.first = time.Now()
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: Close waits for the handlers
	return r
}

func (r *receiver) firstRequest() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// caFile writes the receivers' certificates as one PEM file for Options.ExtraCAFile.
func caFile(t *testing.T, rs ...*receiver) string {
	t.Helper()
	var pemData []byte
	for _, r := range rs {
		pemData = append(pemData, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})...)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Forty webhooks of workspace A whose receiver never answers, one of workspace B whose receiver
// is healthy: B's delivery, stored while A's hang, arrives within a second. Real database
// (SQLite and PostgreSQL), real signing HTTPS client, real receivers on loopback.
func TestHangingWorkspaceDoesNotDelayAnotherEndToEnd(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		ctx := context.Background()
		cipher := persistencetest.Cipher()
		workspaces := persistence.NewWorkspaceRepository(db)
		hooks := persistence.NewWebhookRepository(db, cipher)
		deliveries := persistence.NewDeliveryRepository(db, cipher)
		hanging, healthy := newReceiver(t, true), newReceiver(t, false)

		client, err := delivery.NewClient(delivery.Options{AllowPrivate: true, ExtraCAFile: caFile(t, hanging, healthy)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(client.Close)

		now := time.Now()
		suffix := fmt.Sprintf("%d", now.UnixNano())
		newWorkspace := func(id string) {
			w, err := workspace.New(id+suffix, "Acme", workspace.PlanBusiness, now)
			if err != nil {
				t.Fatal(err)
			}
			if err := workspaces.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		newHook := func(workspaceID, id, url string) *webhook.Webhook {
			w, err := webhook.New(id+suffix, workspaceID+suffix, webhook.Draft{URL: url, Events: []string{"submission.created"}}, now)
			if err != nil {
				t.Fatal(err)
			}
			if err := hooks.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
			return w
		}
		deliveryTo := func(w *webhook.Webhook, n int) *webhook.Delivery {
			e := event.Event{ID: fmt.Sprintf("evt_%s_%d", w.ID(), n), Type: event.SubmissionCreated, WorkspaceID: w.WorkspaceID(),
				FormID: "frm_1", OccurredAt: now}
			return webhook.NewDelivery(fmt.Sprintf("dlv_%s_%d", w.ID(), n), w, e, []byte(`{"event":"submission.created"}`), time.Now())
		}

		newWorkspace("wsp_a")
		newWorkspace("wsp_b")
		var backlog []*webhook.Delivery
		for i := range 40 {
			w := newHook("wsp_a", fmt.Sprintf("whk_a%02d", i), fmt.Sprintf("%s/a/%d", hanging.srv.URL, i))
			backlog = append(backlog, deliveryTo(w, 1), deliveryTo(w, 2))
		}
		if err := deliveries.AddAll(ctx, backlog); err != nil {
			t.Fatal(err)
		}
		b := newHook("wsp_b", "whk_b", healthy.srv.URL+"/b")

		// Production defaults: 16 attempts at once, 4 per workspace, 10 s timeout, 100 ms polling.
		engine := webhooks.NewDeliveryEngine(deliveries, hooks, delivery.Sender{Client: client}, system.Clock{},
			webhooks.DeliveryEngineConfig{}, nil)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { _ = engine.Run(runCtx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })

		waitUntil(t, "A's attempts hanging", func() bool { return hanging.inFlight.Load() >= 4 })
		stored := time.Now()
		if err := deliveries.AddAll(ctx, []*webhook.Delivery{deliveryTo(b, 1)}); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "B's delivery", func() bool { return !healthy.firstRequest().IsZero() })
		if took := healthy.firstRequest().Sub(stored); took > time.Second {
			t.Fatalf("B's delivery arrived %v after it was stored, behind A's hanging endpoints; want at most 1s", took)
		}
		if n := hanging.inFlight.Load(); n > 4 {
			t.Fatalf("%d of A's attempts in flight, want at most 4", n)
		}
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 15*time.Second, cond, "%s", what)
}
