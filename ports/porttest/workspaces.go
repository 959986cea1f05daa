package porttest

import (
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// workspaces: a created workspace is found by ID and listed; Update stores the change with its
// audit events, or nothing when change fails.
func workspaces(t *testing.T, r Repos) {
	_, err := r.Workspaces.Get(ctx, newID("wsp"))
	wantErr(t, err, domain.ErrNotFound)

	w := newWorkspace(t, r)
	got, err := r.Workspaces.Get(ctx, w.ID())
	noErr(t, err)
	if got.ID() != w.ID() || got.Name() != "Acme" || got.Plan() != workspace.PlanBusiness {
		t.Fatalf("got %+v", got.Record())
	}
	all, err := r.Workspaces.List(ctx)
	noErr(t, err)
	if !contains(ids(all), w.ID()) {
		t.Fatalf("list %v misses %s", ids(all), w.ID())
	}
	oldest, err := r.Workspaces.Oldest(ctx)
	noErr(t, err)
	if oldest.CreatedAt().After(w.CreatedAt()) {
		t.Fatalf("oldest created %v, after %v", oldest.CreatedAt(), w.CreatedAt())
	}

	renamed := "Acme Ltd"
	ev := auditEvent(t, w.ID(), audit.WorkspaceUpdated, base)
	updated, err := r.Workspaces.Update(ctx, w.ID(), func(w *workspace.Workspace) (ports.Effects, error) {
		_, err := w.Change(workspace.Settings{Name: &renamed}, base.Add(time.Minute))
		return ports.Effects{Audit: []audit.Event{ev}}, err
	})
	noErr(t, err)
	if updated.Name() != renamed {
		t.Fatalf("update returned %q", updated.Name())
	}
	refused := "Refused"
	_, err = r.Workspaces.Update(ctx, w.ID(), func(w *workspace.Workspace) (ports.Effects, error) {
		_, _ = w.Change(workspace.Settings{Name: &refused}, base.Add(time.Hour))
		return ports.Effects{Audit: []audit.Event{auditEvent(t, w.ID(), audit.WorkspaceUpdated, base)}}, errChange
	})
	wantErr(t, err, errChange)
	got, err = r.Workspaces.Get(ctx, w.ID())
	noErr(t, err)
	if got.Name() != renamed {
		t.Fatalf("stored name %q, want %q", got.Name(), renamed)
	}
	wantAudit(t, r, w.ID(), ev.ID)

	_, err = r.Workspaces.Update(ctx, newID("wsp"), func(*workspace.Workspace) (ports.Effects, error) {
		t.Fatal("change called for a missing workspace")
		return ports.Effects{}, nil
	})
	wantErr(t, err, domain.ErrNotFound)
}

// apiKeys: keys are listed per workspace (all with ""), revoked within their workspace, and
// found by ID whether revoked or not.
func apiKeys(t *testing.T, r Repos) {
	w1, w2 := newWorkspace(t, r), newWorkspace(t, r)
	newKey := func(ws string, scope apikey.Scope, at time.Time) *apikey.Key {
		k, err := apikey.New(newID("key"), ws, "ci", scope, apikey.HashSecret(newID("secret")), audit.System, at)
		noErr(t, err)
		return k
	}
	k1, k2 := newKey(w1.ID(), apikey.ScopeAdmin, base), newKey(w2.ID(), apikey.ScopeReadOnly, base.Add(time.Second))
	created := auditEvent(t, w1.ID(), audit.APIKeyCreated, base)
	noErr(t, r.Keys.Create(ctx, k1, created))
	noErr(t, r.Keys.Create(ctx, k2))
	wantAudit(t, r, w1.ID(), created.ID)

	_, err := r.Keys.Get(ctx, newID("key"))
	wantErr(t, err, domain.ErrNotFound)
	got, err := r.Keys.Get(ctx, k1.ID())
	noErr(t, err)
	if got.WorkspaceID() != w1.ID() || got.Scope() != apikey.ScopeAdmin || string(got.SecretHash()) != string(k1.SecretHash()) || !got.Active() {
		t.Fatalf("got %s in %s, scope %s, active %v", got.ID(), got.WorkspaceID(), got.Scope(), got.Active())
	}

	list, err := r.Keys.List(ctx, w1.ID())
	noErr(t, err)
	sameIDs(t, "keys of w1", ids(list), k1.ID())
	list, err = r.Keys.List(ctx, "")
	noErr(t, err)
	if all := ids(list); !contains(all, k1.ID()) || !contains(all, k2.ID()) {
		t.Fatalf("all keys %v miss %s or %s", all, k1.ID(), k2.ID())
	}

	used := base.Add(time.Hour)
	noErr(t, r.Keys.MarkUsed(ctx, k1.ID(), used))
	got, err = r.Keys.Get(ctx, k1.ID())
	noErr(t, err)
	if got.LastUsedAt() == nil || !got.LastUsedAt().Equal(used) {
		t.Fatalf("last used %v, want %v", got.LastUsedAt(), used)
	}

	wantErr(t, r.Keys.Revoke(ctx, w2.ID(), k1.ID(), base), domain.ErrNotFound)
	wantErr(t, r.Keys.Revoke(ctx, w1.ID(), newID("key"), base), domain.ErrNotFound)
	revokedAt := base.Add(2 * time.Hour)
	revoked := auditEvent(t, w1.ID(), audit.APIKeyRevoked, revokedAt)
	noErr(t, r.Keys.Revoke(ctx, w1.ID(), k1.ID(), revokedAt, revoked))
	noErr(t, r.Keys.Revoke(ctx, "", k2.ID(), revokedAt))
	for _, k := range []*apikey.Key{k1, k2} {
		got, err = r.Keys.Get(ctx, k.ID())
		noErr(t, err)
		if got.Active() || got.RevokedAt() == nil || !got.RevokedAt().Equal(revokedAt) {
			t.Fatalf("key %s after revoke: active %v, revoked at %v", k.ID(), got.Active(), got.RevokedAt())
		}
	}
	wantAudit(t, r, w1.ID(), created.ID, revoked.ID)
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
