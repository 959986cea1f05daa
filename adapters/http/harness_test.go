package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/formward/formward/adapters/analytics"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/delivery/deliverytest"
	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/http/openapi"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/workspace"
)

// harness is the real router over a real database, with keys of every scope in two workspaces.
type harness struct {
	t         *testing.T
	handler   http.Handler
	app       *application.Application
	db        *persistence.DB
	validator *openapi.Validator
	logs      *observer.ObservedLogs
	wsA, wsB  string
	keys      map[string]string // admin, read-write, read-only, revoked, other (admin of B)
	keyIDs    map[string]string
	// deliveries lets tests store deliveries directly, as the worker would.
	deliveries *persistence.DeliveryRepository
	// undocumented skips the OpenAPI check for requests to paths that do not exist.
	undocumented bool
	// activity counts the form stats in memory (written on Flush).
	activity *analytics.Counter
}

// newHarness builds the harness; adjust, when given, changes the application's ports first.
func newHarness(t *testing.T, db *persistence.DB, opts httpapi.Options, adjust ...func(*application.Deps)) *harness {
	t.Helper()
	ctx := context.Background()
	ids := system.NewIDs()
	clock := system.Clock{}
	cipher := persistencetest.Cipher()
	deliveries := persistence.NewDeliveryRepository(db, cipher)
	submissions := persistence.NewSubmissionRepository(db, cipher, persistencetest.BlindIndex())
	stats := persistence.NewFormStatsRepository(db)
	activity := analytics.New(stats, zap.NewNop(), 24*time.Hour)
	deps := application.Deps{
		Workspaces:   persistence.NewWorkspaceRepository(db),
		Keys:         persistence.NewAPIKeyRepository(db),
		Forms:        persistence.NewFormRepository(db, cipher),
		Submissions:  submissions,
		Scanner:      submissions,
		Stats:        stats,
		Activity:     activity,
		IDs:          ids,
		Clock:        clock,
		IPHasher:     crypto.NewIPHasher([]byte("test ip secret")),
		Webhooks:     persistence.NewWebhookRepository(db, cipher),
		Deliveries:   deliveries,
		Replays:      persistence.NewReplayRepository(db, cipher),
		Workflows:    persistence.NewWorkflowRepository(db, cipher),
		Integrations: persistence.NewIntegrationRepository(db, cipher),
		Retention:    persistence.NewRetentionStore(db, cipher),
		Privacy:      persistence.NewPrivacyIndex(db, cipher, persistencetest.BlindIndex()),
		BlindIndex:   persistencetest.BlindIndex(),
		Drafts:       persistence.NewDraftRepository(db, cipher, persistencetest.BlindIndex()),
		// The real action adapters are tested in their own packages; these check configs only.
		Actions: fakeRunners(),
		// No network here: hostnames resolve through a fixed table.
		URLs: delivery.URLChecker{Resolver: deliverytest.Resolver{
			"hooks.example.com":    {"93.184.216.34"},
			"internal.example.com": {"10.20.30.40"},
		}},
		Users:       persistence.NewUserRepository(db),
		Memberships: persistence.NewMembershipRepository(db),
		Invitations: persistence.NewInvitationRepository(db),
		Sessions:    persistence.NewSessionRepository(db),
		Tokens:      persistence.NewUserTokenRepository(db),
		Audit:       persistence.NewAuditLog(db),
		Throttle:    persistence.NewSignInThrottle(db),
		Usage:       persistence.NewUsageReader(db),
		// Cheap parameters: these tests are about the API, not the hash.
		Passwords: crypto.NewPasswordHasherWithParams(crypto.Argon2Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}),
	}
	for _, f := range adjust {
		f(&deps)
	}
	app := application.New(deps, application.Settings{PublicURL: testPublicURL})
	core, logs := observer.New(zap.DebugLevel)
	if opts.SigningKey == nil {
		opts.SigningKey = []byte("cursor key for tests")
	}
	h := &harness{t: t, app: app, db: db, logs: logs, keys: map[string]string{}, keyIDs: map[string]string{}, deliveries: deliveries,
		activity: activity}
	h.handler = httpapi.NewRouter(httpapi.Deps{
		App: app, Idempotency: persistence.NewIdempotencyStore(db, cipher), Clock: clock, Logger: zap.New(core),
		Ready: db.Ping,
	}, opts)
	v, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	h.validator = v
	a, err := app.Commands.CreateWorkspace.Handle(ctx, workspace.CreateWorkspace{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := app.Commands.CreateWorkspace.Handle(ctx, workspace.CreateWorkspace{Name: "B"})
	if err != nil {
		t.Fatal(err)
	}
	h.wsA, h.wsB = a.ID(), b.ID()
	for name, spec := range map[string][2]string{
		"admin": {h.wsA, "admin"}, "read-write": {h.wsA, "read-write"}, "read-only": {h.wsA, "read-only"},
		"revoked": {h.wsA, "admin"}, "other": {h.wsB, "admin"},
	} {
		k, err := app.Commands.CreateAPIKey.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(spec[0])), accounts.CreateAPIKey{Name: name, Scope: spec[1]})
		if err != nil {
			t.Fatal(err)
		}
		h.keys[name], h.keyIDs[name] = k.Token, k.Key.ID()
	}
	if err := app.Commands.RevokeAPIKey.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(h.wsA)), accounts.RevokeAPIKey{ID: h.keyIDs["revoked"]}); err != nil {
		t.Fatal(err)
	}
	return h
}

type response struct {
	*httptest.ResponseRecorder
	json map[string]any
}

func (r response) errorCode() string {
	e, _ := r.json["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// do sends a request through the router; every response is checked against the OpenAPI document.
func (h *harness) do(method, path, key string, body any, headers ...string) response {
	h.t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	res := response{ResponseRecorder: rec}
	if rec.Body.Len() > 0 {
		_ = json.Unmarshal(rec.Body.Bytes(), &res.json)
	}
	if rel, ok := strings.CutPrefix(req.URL.Path, "/v1"); ok && !h.undocumented {
		if err := h.validator.ValidateResponse(method, rel, rec.Code, rec.Body.Bytes()); err != nil {
			h.t.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %s", method, path, rec.Code, err, rec.Body.String())
		}
	}
	return res
}

func (h *harness) expect(r response, status int, code string) {
	h.t.Helper()
	if r.Code != status {
		h.t.Fatalf("status %d, want %d; body %s", r.Code, status, r.Body.String())
	}
	if code != "" && r.errorCode() != code {
		h.t.Fatalf("error code %q, want %q; body %s", r.errorCode(), code, r.Body.String())
	}
}

// createForm makes a form in workspace A with the given fields and returns its JSON.
func (h *harness) createForm(fields ...map[string]any) map[string]any {
	h.t.Helper()
	if fields == nil {
		fields = []map[string]any{}
	}
	r := h.do("POST", "/v1/forms", h.keys["admin"], map[string]any{"name": "Contact", "fields": fields})
	h.expect(r, 201, "")
	return r.json
}

func fieldIDs(f map[string]any) []string {
	var ids []string
	for _, fl := range f["fields"].([]any) {
		ids = append(ids, fl.(map[string]any)["id"].(string))
	}
	return ids
}

// eachHarness runs test on SQLite and on PostgreSQL, each with a harness of default options.
func eachHarness(t *testing.T, test func(t *testing.T, h *harness)) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) { test(t, newHarness(t, db, httpapi.Options{})) })
}
