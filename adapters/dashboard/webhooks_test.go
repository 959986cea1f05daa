package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/automation"
	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/ports"
)

// routingHarness is the dashboard with the webhook ports wired to real persistence; loopback
// endpoints are allowed, as FORMWARD_ALLOW_PRIVATE_DESTINATIONS does.
func routingHarness(t *testing.T, db *persistence.DB) (*harness, *persistence.DeliveryRepository) {
	t.Helper()
	cipher := persistencetest.Cipher()
	deliveries := persistence.NewDeliveryRepository(db, cipher)
	h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
		d.Webhooks = persistence.NewWebhookRepository(db, cipher)
		d.Deliveries = deliveries
		d.Replays = persistence.NewReplayRepository(db, cipher)
		d.URLs = delivery.URLChecker{AllowPrivate: true}
		d.Integrations = persistence.NewIntegrationRepository(db, cipher)
		d.Workflows = persistence.NewWorkflowRepository(db, cipher)
		d.Runs = persistence.NewRunRepository(db, cipher)
		mailer, err := email.New(email.Config{})
		if err != nil {
			t.Fatal(err)
		}
		d.Actions = map[string]ports.ActionRunner{mailer.Type(): mailer, automation.TypeWebhook: automation.NewWebhook(nil)}
	})
	return h, deliveries
}

// systemCtx acts as the system in the only workspace of the harness.
func systemCtx(t *testing.T, db *persistence.DB) (context.Context, string) {
	t.Helper()
	w, err := persistence.NewWorkspaceRepository(db).Oldest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return auth.WithPrincipal(context.Background(), auth.SystemPrincipal(w.ID())), w.ID()
}

var webhookLink = regexp.MustCompile(`/app/webhooks/(whk_[A-Za-z0-9]+)`)

// TestWebhookPages: create with inline validation errors, edit, the list, a test event in the
// delivery log, retry of a failed delivery, delete after confirmation; on both databases.
func TestWebhookPages(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h, deliveries := routingHarness(t, db)
		b := h.owner()
		b.get("/app/webhooks").expect(t, http.StatusOK)
		b.get("/app/webhooks/new").expect(t, http.StatusOK)

		bad := b.post("/app/webhooks", url.Values{"url": {"http://127.0.0.1:9/in"}}).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="f-url-error">[^<]+</span>`).MatchString(bad.body) || !regexp.MustCompile(`id="events-error">[^<]+</span>`).MatchString(bad.body) ||
			!strings.Contains(bad.body, `value="http://127.0.0.1:9/in"`) {
			t.Fatalf("no inline errors next to the URL and the events: %s", text(bad.body))
		}

		created := b.post("/app/webhooks", url.Values{"url": {"https://127.0.0.1:9/in"}, "events": {"submission.created", "form.published"},
			"secret": {"whsec-test"}}).redirectsTo(t, "/app/webhooks/whk_")
		id := webhookLink.FindStringSubmatch(created.Header.Get("Location"))[1]
		page := b.get("/app/webhooks/"+id).expect(t, http.StatusOK)
		if !strings.Contains(page.body, "Webhook created.") || !strings.Contains(page.body, "A secret is set.") || strings.Contains(page.body, "whsec-test") {
			t.Fatalf("webhook page after create: %s", text(page.body))
		}
		list := b.get("/app/webhooks").expect(t, http.StatusOK)
		if !strings.Contains(list.body, "https://127.0.0.1:9/in") || !strings.Contains(list.body, "form.published") || !strings.Contains(list.body, "No deliveries yet") {
			t.Fatalf("list: %s", text(list.body))
		}

		b.post("/app/webhooks/"+id, url.Values{"url": {"https://127.0.0.1:9/changed"}, "events": {"submission.updated"}}).redirectsTo(t, "/app/webhooks/"+id)
		sctx, _ := systemCtx(t, db)
		w, err := h.app.Queries.GetWebhook.Handle(sctx, webhooks.GetWebhook{ID: id})
		if err != nil || w.URL() != "https://127.0.0.1:9/changed" || len(w.Events()) != 1 || w.Events()[0] != event.SubmissionUpdated || !w.SecretSet() {
			t.Fatalf("after edit: %v %v", w, err)
		}
		b.post("/app/webhooks/"+id, url.Values{"url": {"https://127.0.0.1:9/changed"}}).expect(t, http.StatusUnprocessableEntity)

		// The enabled switch, from the webhook's page and from the list.
		page = b.get("/app/webhooks/"+id).expect(t, http.StatusOK)
		if !strings.Contains(page.body, `action="/app/webhooks/`+id+`/enabled"`) || !strings.Contains(page.body, `name="enabled" value="0"`) {
			t.Fatalf("no Disable button: %s", text(page.body))
		}
		b.post("/app/webhooks/"+id+"/enabled", url.Values{"enabled": {"0"}}).redirectsTo(t, "/app/webhooks/"+id)
		if w, err := h.app.Queries.GetWebhook.Handle(sctx, webhooks.GetWebhook{ID: id}); err != nil || w.Enabled() {
			t.Fatalf("after Disable: %v %v", w, err)
		}
		page = b.get("/app/webhooks/"+id).expect(t, http.StatusOK)
		if !strings.Contains(page.body, "Webhook disabled.") || !strings.Contains(page.body, "skipped, not sent later") || !strings.Contains(page.body, `name="enabled" value="1"`) {
			t.Fatalf("disabled webhook page: %s", text(page.body))
		}
		list = b.get("/app/webhooks").expect(t, http.StatusOK)
		if !strings.Contains(list.body, ">Disabled</span>") || !strings.Contains(list.body, `Enable<span class="visually-hidden"> the webhook to https://127.0.0.1:9/changed</span>`) {
			t.Fatalf("list of a disabled webhook: %s", text(list.body))
		}
		b.post("/app/webhooks/"+id+"/enabled", url.Values{"enabled": {"1"}, "from": {"list"}}).redirectsTo(t, "/app/webhooks")
		if w, err := h.app.Queries.GetWebhook.Handle(sctx, webhooks.GetWebhook{ID: id}); err != nil || !w.Enabled() ||
			w.URL() != "https://127.0.0.1:9/changed" || !w.SecretSet() {
			t.Fatalf("after Enable: %v %v", w, err)
		}

		b.post("/app/webhooks/"+id+"/test", nil).redirectsTo(t, "/app/webhooks/"+id)
		page = b.get("/app/webhooks/"+id).expect(t, http.StatusOK)
		if !strings.Contains(page.body, "webhook.test") || !strings.Contains(page.body, "Not attempted yet") {
			t.Fatalf("the test event is not in the delivery log: %s", text(page.body))
		}

		// A delivery whose five attempts failed: its attempts and a Retry button.
		failed := webhook.NewDelivery("dlv_failedone", w, event.Event{ID: "evt_failedone", Type: event.SubmissionUpdated, WorkspaceID: w.WorkspaceID(), FormID: "frm_x"},
			[]byte(`{}`), time.Now().Add(-time.Hour))
		for range 5 {
			failed.Record(webhook.Outcome{StatusCode: 500, Duration: 12 * time.Millisecond, Err: errors.New("the endpoint answered 500")}, time.Now(), retry.Default())
		}
		if err := deliveries.AddAll(context.Background(), []*webhook.Delivery{failed}); err != nil {
			t.Fatal(err)
		}
		page = b.get("/app/webhooks/"+id).expect(t, http.StatusOK)
		if !strings.Contains(page.body, "the endpoint answered 500") || !strings.Contains(page.body, "12 ms") ||
			!strings.Contains(page.body, "/deliveries/dlv_failedone/retry") {
			t.Fatalf("failed delivery: %s", text(page.body))
		}
		b.post("/app/webhooks/"+id+"/deliveries/dlv_failedone/retry", nil).redirectsTo(t, "/app/webhooks/"+id)
		got, err := deliveries.Get(context.Background(), w.WorkspaceID(), id, "dlv_failedone")
		if err != nil || got.Status() != webhook.StatusPending || got.NextAttemptNumber() != 1 {
			t.Fatalf("after retry: %v %v", got, err)
		}

		b.get("/app/webhooks/"+id+"/delete").expect(t, http.StatusOK)
		b.post("/app/webhooks/"+id+"/delete", nil).redirectsTo(t, "/app/webhooks")
		b.get("/app/webhooks/"+id).expect(t, http.StatusNotFound)
	})
}

// TestWebhookViewer: a viewer reads the list and the log but has no controls, and every change
// is refused by the use cases.
func TestWebhookViewer(t *testing.T) {
	db := persistencetest.SQLite(t, nil)
	h, deliveries := routingHarness(t, db)
	owner := h.owner()
	created := owner.post("/app/webhooks", url.Values{"url": {"https://127.0.0.1:9/in"}, "events": {"submission.created"}}).redirectsTo(t, "/app/webhooks/whk_")
	id := webhookLink.FindStringSubmatch(created.Header.Get("Location"))[1]
	owner.post("/app/webhooks/"+id+"/test", nil).redirectsTo(t, "/app/webhooks/"+id)
	viewer := h.member(owner, "viewer@example.org", "viewer")
	_, wsID := systemCtx(t, db)

	list := viewer.get("/app/webhooks").expect(t, http.StatusOK)
	if strings.Contains(list.body, "/app/webhooks/new") || !strings.Contains(list.body, "https://127.0.0.1:9/in") {
		t.Fatalf("viewer list: %s", text(list.body))
	}
	page := viewer.get("/app/webhooks/"+id).expect(t, http.StatusOK)
	if strings.Contains(page.body, `action="/app/webhooks/`+id+`"`) || strings.Contains(page.body, "Send a test event") || !strings.Contains(page.body, "webhook.test") {
		t.Fatalf("viewer page: %s", text(page.body))
	}
	viewer.post("/app/webhooks", url.Values{"url": {"https://127.0.0.1:9/v"}, "events": {"submission.created"}}).expect(t, http.StatusForbidden)
	viewer.post("/app/webhooks/"+id, url.Values{"url": {"https://127.0.0.1:9/v"}, "events": {"submission.created"}}).expect(t, http.StatusForbidden)
	viewer.post("/app/webhooks/"+id+"/test", nil).expect(t, http.StatusForbidden)
	if strings.Contains(list.body, "/enabled") || strings.Contains(page.body, "/enabled") {
		t.Fatal("the viewer sees the enabled switch")
	}
	viewer.post("/app/webhooks/"+id+"/enabled", url.Values{"enabled": {"0"}}).expect(t, http.StatusForbidden)
	viewer.get("/app/webhooks/"+id+"/delete").expect(t, http.StatusForbidden)
	viewer.post("/app/webhooks/"+id+"/delete", nil).expect(t, http.StatusForbidden)
	ds, err := deliveries.List(context.Background(), wsID, id, ports.Page{Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries after the viewer's attempts: %d %v", len(ds), err)
	}
	viewer.post("/app/webhooks/"+id+"/deliveries/"+ds[0].ID()+"/retry", nil).expect(t, http.StatusForbidden)
	owner.get("/app/webhooks/"+id).expect(t, http.StatusOK)
}

// TestWebhookReplayForm: the owner replays since a time read in their zone, sees the job's
// progress, cannot start a second while it is queued, and is told what is wrong with a range;
// a viewer sees the progress and no form.
func TestWebhookReplayForm(t *testing.T) {
	db := persistencetest.SQLite(t, nil)
	h, _ := routingHarness(t, db)
	owner := h.owner()
	created := owner.post("/app/webhooks", url.Values{"url": {"https://127.0.0.1:9/in"}, "events": {"submission.created"}}).redirectsTo(t, "/app/webhooks/whk_")
	id := webhookLink.FindStringSubmatch(created.Header.Get("Location"))[1]
	page := owner.get("/app/webhooks/"+id).expect(t, http.StatusOK)
	if !strings.Contains(page.body, `action="/app/webhooks/`+id+`/replay"`) || !strings.Contains(page.body, `name="since" type="datetime-local" value="`) {
		t.Fatalf("no replay form: %s", text(page.body))
	}

	bad := owner.post("/app/webhooks/"+id+"/replay", url.Values{"since": {time.Now().UTC().Add(-10 * 24 * time.Hour).Format("2006-01-02T15:04")}}).expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(text(bad.body), "before the oldest retained event") || !strings.Contains(bad.body, `id="f-since" name="since" type="datetime-local" value="`+time.Now().UTC().Add(-10*24*time.Hour).Format("2006-01-02T15:04")+`"`) {
		t.Fatalf("a range before the retention: %s", text(bad.body))
	}
	owner.post("/app/webhooks/"+id+"/replay", url.Values{"since": {"tomorrow"}}).expect(t, http.StatusUnprocessableEntity)

	since := time.Now().UTC().Add(-2 * time.Hour).Format("2006-01-02T15:04")
	owner.post("/app/webhooks/"+id+"/replay", url.Values{"since": {since}}).redirectsTo(t, "/app/webhooks/"+id)
	page = owner.get("/app/webhooks/"+id).expect(t, http.StatusOK)
	if !strings.Contains(page.body, "Replay started") || !strings.Contains(page.body, ">Queued<") || !strings.Contains(page.body, "0 of 0 events sent") ||
		!strings.Contains(page.body, "A replay is under way") {
		t.Fatalf("after starting a replay: %s", text(page.body))
	}
	owner.post("/app/webhooks/"+id+"/replay", url.Values{"since": {since}}).redirectsTo(t, "/app/webhooks/"+id)
	if p := owner.get("/app/webhooks/"+id).expect(t, http.StatusOK); !strings.Contains(p.body, "already queued or running") {
		t.Fatalf("a second replay: %s", text(p.body))
	}

	viewer := h.member(owner, "viewer@example.org", "viewer")
	vp := viewer.get("/app/webhooks/"+id).expect(t, http.StatusOK)
	if strings.Contains(vp.body, "/replay\"") || !strings.Contains(vp.body, ">Queued<") {
		t.Fatalf("viewer page: %s", text(vp.body))
	}
	viewer.post("/app/webhooks/"+id+"/replay", url.Values{"since": {since}}).expect(t, http.StatusForbidden)
}
