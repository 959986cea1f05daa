// Package porttest states, as runnable subtests, what the application's use cases rely on from
// the repository ports. Every implementation runs the same contracts: the persistence adapters
// on SQLite and PostgreSQL, and the in-memory fakes the application's tests use
// (application/apptest). When an adapter and a contract disagree, the adapter is the truth.
package porttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Repos is one set of repositories over one store. The contracts create their own rows with
// unique IDs, so one store may serve every contract; they run one after the other.
type Repos struct {
	Workspaces  ports.WorkspaceRepository
	Keys        ports.APIKeyRepository
	Forms       ports.FormRepository
	Submissions ports.SubmissionRepository
	Users       ports.UserRepository
	Memberships ports.MembershipRepository
	Sessions    ports.SessionRepository
	Tokens      ports.UserTokenRepository
	Flashes     ports.FlashRepository
	// Audit is the log every repository's change writes its audit events to.
	Audit        ports.AuditLog
	Throttle     ports.SignInThrottle
	AccountMail  ports.AccountMailOutbox
	DataKeys     ports.DataKeyRepository
	Webhooks     ports.WebhookRepository
	Deliveries   ports.DeliveryRepository
	Workflows    ports.WorkflowRepository
	Integrations ports.IntegrationRepository
	Runs         ports.RunRepository
	Columns      ports.ResponseColumnsRepository
}

// Run runs every contract as a subtest against the repositories open returns.
func Run(t *testing.T, open func(t *testing.T) Repos) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, Repos)
	}{
		{"Workspaces", workspaces},
		{"APIKeys", apiKeys},
		{"Forms", forms},
		{"Submissions", submissions},
		{"CaptureGuards", captureGuards},
		{"Users", users},
		{"Memberships", memberships},
		{"Sessions", sessions},
		{"UserTokens", userTokens},
		{"Flashes", flashes},
		{"AuditLog", auditLog},
		{"SignInThrottle", signInThrottle},
		{"AccountMail", accountMail},
		{"DataKeys", dataKeys},
		{"Webhooks", webhooks},
		{"Deliveries", deliveries},
		{"Workflows", workflows},
		{"Integrations", integrations},
		{"Runs", runs},
		{"ResponseColumns", responseColumns},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

var (
	runID = func() string {
		var b [4]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
	seq atomic.Int64
)

// newID returns a unique ID with the prefix; later IDs sort after earlier ones.
func newID(prefix string) string { return fmt.Sprintf("%s_%s%08d", prefix, runID, seq.Add(1)) }

// base is a fixed, millisecond-aligned time (stores keep milliseconds).
var base = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

// errChange is what a refused change returns.
var errChange = errors.New("change refused")

var ctx = context.Background()

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func newWorkspace(t *testing.T, r Repos) *workspace.Workspace {
	t.Helper()
	w, err := workspace.New(newID("wsp"), "Acme", workspace.PlanBusiness, base)
	noErr(t, err)
	noErr(t, r.Workspaces.Create(ctx, w))
	return w
}

func newForm(t *testing.T, r Repos, workspaceID string, at time.Time) *form.Form {
	t.Helper()
	f, err := form.New(newID("frm"), workspaceID, form.Draft{
		Name:   "Contact",
		Fields: []form.FieldSpec{{Label: "Name", Type: "text"}, {Label: "Email", Type: "email"}},
	}, func() string { return newID("fld") }, form.DefaultLimits, at)
	noErr(t, err)
	noErr(t, r.Forms.Create(ctx, f))
	return f
}

func auditEvent(t *testing.T, workspaceID string, action audit.Action, at time.Time) audit.Event {
	t.Helper()
	e, err := audit.New(newID("aud"), workspaceID, action, audit.System, &audit.Target{Type: "test", ID: newID("tgt")}, "", nil, at)
	noErr(t, err)
	return e
}

// wantAudit fails unless the workspace's audit log holds exactly the events with these IDs.
func wantAudit(t *testing.T, r Repos, workspaceID string, ids ...string) {
	t.Helper()
	got, err := r.Audit.List(ctx, workspaceID, ports.AuditQuery{Page: ports.Page{Limit: 100}})
	noErr(t, err)
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, e := range got {
		if !want[e.ID] {
			t.Fatalf("audit log of %s holds %s (%s), want only %v", workspaceID, e.ID, e.Action, ids)
		}
		delete(want, e.ID)
	}
	if len(want) != 0 {
		t.Fatalf("audit log of %s misses %v", workspaceID, want)
	}
}

func ids[T interface{ ID() string }](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID()
	}
	return out
}

func sameIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}
