package web_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/origin"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// clock is a settable clock for the spam rules' timing.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// harness is the public form over a real gin engine and a real SQLite database.
type harness struct {
	t       *testing.T
	handler http.Handler
	app     *application.Application
	db      *persistence.DB
	clock   *clock
	metrics *web.Metrics
	ws      string
	hasher  *crypto.IPHasher
	ip      string
}

func newHarness(t *testing.T, mod ...func(*web.Options)) *harness {
	t.Helper()
	return newHarnessWith(t, nil, submission.FileLimits{}, zap.NewNop(), mod...)
}

// newHarnessWith is newHarness with an object store for uploads (nil: none), file limits and
// a logger.
func newHarnessWith(t *testing.T, files ports.ObjectStore, limits submission.FileLimits, log *zap.Logger, mod ...func(*web.Options)) *harness {
	t.Helper()
	return newHarnessOn(t, persistencetest.SQLite(t, persistencetest.Cipher()), files, limits, log, mod...)
}

// newHarnessOn is newHarnessWith on a given database (persistencetest.Each runs both).
func newHarnessOn(t *testing.T, db *persistence.DB, files ports.ObjectStore, limits submission.FileLimits, log *zap.Logger, mod ...func(*web.Options)) *harness {
	t.Helper()
	cipher := persistencetest.Cipher()
	hasher := crypto.NewIPHasher([]byte("test ip secret"))
	clk := &clock{now: time.Now()}
	opts := web.Options{TokenKey: []byte("token key"), PoWKey: []byte("pow key"), PoWMaxNumber: 2000}
	for _, m := range mod {
		m(&opts)
	}
	var formLimits form.Limits // forms may name the captcha providers the page is given, as in bootstrap
	for p := range opts.Captchas {
		formLimits.CaptchaProviders = append(formLimits.CaptchaProviders, p)
	}
	app := application.New(application.Deps{
		Workspaces:  persistence.NewWorkspaceRepository(db),
		Keys:        persistence.NewAPIKeyRepository(db),
		Forms:       persistence.NewFormRepository(db, cipher),
		Submissions: persistence.NewSubmissionRepository(db, cipher, persistencetest.BlindIndex()),
		IDs:         system.NewIDs(),
		Clock:       clk,
		IPHasher:    hasher,
		Files:       files,
		Drafts:      persistence.NewDraftRepository(db, cipher, persistencetest.BlindIndex()),
	}, application.Settings{FileLimits: limits, FormLimits: formLimits})
	ws, err := app.Commands.CreateWorkspace.Handle(context.Background(), workspace.CreateWorkspace{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := web.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Deps{App: app, Clock: clk,
		Logger: log, Metrics: metrics}, opts)
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	h.Mount(r)
	return &harness{t: t, handler: r, app: app, db: db, clock: clk, metrics: metrics, ws: ws.ID(), hasher: hasher, ip: "203.0.113.7"}
}

// form creates a form with the given fields and settings in the status.
func (h *harness) form(status form.Status, settings *form.Settings, fields ...form.FieldSpec) *form.Form {
	h.t.Helper()
	ctx := context.Background()
	v, err := h.app.Commands.CreateForm.Handle(h.owner(ctx), forms.CreateForm{Draft: form.Draft{Name: "Contact", Fields: fields, Settings: settings}})
	if err != nil {
		h.t.Fatal(err)
	}
	if status != form.StatusDraft {
		st := string(status)
		v, err = h.app.Commands.UpdateForm.Handle(h.owner(ctx), forms.UpdateForm{ID: v.Form.ID(), Patch: form.Patch{Status: &st}})
		if err != nil {
			h.t.Fatal(err)
		}
	}
	return v.Form
}

// origins parses origins for a test's settings.
func origins(t *testing.T, raw ...string) []origin.Origin {
	t.Helper()
	out := make([]origin.Origin, len(raw))
	for i, r := range raw {
		o, err := origin.Parse(r)
		if err != nil {
			t.Fatalf("origin %q: %v", r, err)
		}
		out[i] = o
	}
	return out
}

// guarded turns every spam rule on: the defaults plus proof of work.
func guarded() *form.Settings {
	s := form.DefaultSettings()
	s.Spam.ProofOfWork = true
	return &s
}

// powOnly asks for proof of work and nothing else that needs a browser (no fill time).
func powOnly() *form.Settings {
	s := guarded()
	s.Spam.MinFillSeconds = 0
	return s
}

// lenient turns off the rules that need a browser: timing and proof of work.
func lenient() *form.Settings {
	s := form.DefaultSettings()
	s.Spam.MinFillSeconds = 0
	s.Spam.ProofOfWork = false
	return &s
}

func (h *harness) do(req *http.Request) *httptest.ResponseRecorder {
	h.t.Helper()
	if req.RemoteAddr == "192.0.2.1:1234" { // httptest's default
		req.RemoteAddr = h.ip + ":40000"
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec
}

func (h *harness) get(path string) *httptest.ResponseRecorder {
	return h.do(httptest.NewRequest("GET", path, nil))
}

func (h *harness) postForm(path string, v url.Values, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return h.do(req)
}

var (
	tokenRe     = regexp.MustCompile(`name="_token" value="([^"]+)"`)
	challengeRe = regexp.MustCompile(`data-pow="([^"]+)"`)
)

// page fetches the form and returns its render token and challenge (empty when off).
func (h *harness) page(f *form.Form, query string) (token string, challenge *web.Challenge) {
	h.t.Helper()
	rec := h.get("/f/" + f.ID() + query)
	if rec.Code != 200 {
		h.t.Fatalf("GET page: %d %s", rec.Code, rec.Body.String())
	}
	m := tokenRe.FindStringSubmatch(rec.Body.String())
	if m == nil {
		h.t.Fatal("no render token in the page")
	}
	token = html.UnescapeString(m[1])
	if c := challengeRe.FindStringSubmatch(rec.Body.String()); c != nil {
		var ch web.Challenge
		if err := json.Unmarshal([]byte(html.UnescapeString(c[1])), &ch); err != nil {
			h.t.Fatal(err)
		}
		challenge = &ch
	}
	return token, challenge
}

func (h *harness) spam(f *form.Form, reason string) float64 {
	return testutil.ToFloat64(h.metrics.Spam.WithLabelValues(f.ID(), reason))
}

func (h *harness) submissions(f *form.Form) []*submission.Submission {
	h.t.Helper()
	subs, _, err := h.app.Queries.ListSubmissions.Handle(h.owner(context.Background()), capture.ListSubmissions{FormID: f.ID(), Page: portsPage()})
	if err != nil {
		h.t.Fatal(err)
	}
	return subs
}

func body(rec *httptest.ResponseRecorder) string {
	b, _ := io.ReadAll(rec.Result().Body)
	return string(b)
}

// owner is ctx in which the workspace's owner acts: the management use cases check who acts.
func (h *harness) owner(ctx context.Context) context.Context {
	return auth.WithPrincipal(ctx, auth.SystemPrincipal(h.ws))
}
