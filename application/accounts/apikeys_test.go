package accounts_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
)

func TestAuthenticate(t *testing.T) {
	h := apptest.New()
	ws, err := h.App.Commands.CreateWorkspace.Handle(ctx, workspaceapp.CreateWorkspace{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	admin := apptest.As(ws.ID(), apikey.ScopeAdmin)
	created, err := h.App.Commands.CreateAPIKey.Handle(admin, accounts.CreateAPIKey{Name: "CI", Scope: "read-write"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := h.App.Commands.CreateAPIKey.Handle(admin, accounts.CreateAPIKey{Name: "old", Scope: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.App.Commands.RevokeAPIKey.Handle(admin, accounts.RevokeAPIKey{ID: revoked.Key.ID()}); err != nil {
		t.Fatal(err)
	}
	if created.Key.CreatedBy() != (audit.Actor{Type: audit.ActorAPIKey, ID: "key_test", Name: "test key"}) {
		t.Errorf("created by %+v", created.Key.CreatedBy())
	}

	// The token is shown once; only the hash of its secret is stored.
	id, secret, err := apikey.ParseToken(created.Token)
	if err != nil || id != created.Key.ID() {
		t.Fatalf("token %q: %q %v", created.Token, id, err)
	}
	if string(h.Keys.Items[id].SecretHash()) != string(apikey.HashSecret(secret)) || strings.Contains(string(h.Keys.Items[id].SecretHash()), secret) {
		t.Fatal("stored key does not hold the hash of its secret")
	}

	p, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: created.Token})
	if err != nil {
		t.Fatalf("valid token: %v", err)
	}
	if p != (auth.Principal{KeyID: id, WorkspaceID: ws.ID(), Scope: apikey.ScopeReadWrite, Actor: audit.Actor{Type: audit.ActorAPIKey, ID: id, Name: "CI"}}) {
		t.Fatalf("principal = %+v", p)
	}
	// last_used_at is written on the first use, then at most once a minute.
	if _, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: created.Token}); err != nil {
		t.Fatal(err)
	}
	if len(h.Keys.Used) != 1 || !h.Keys.Used[0].Equal(apptest.Now) {
		t.Fatalf("marked used %v, want once at %v", h.Keys.Used, apptest.Now)
	}
	h.Clock.At = apptest.Now.Add(apikey.LastUsedEvery)
	if _, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: created.Token}); err != nil {
		t.Fatal(err)
	}
	if len(h.Keys.Used) != 2 {
		t.Fatalf("marked used %v, want a second time a minute later", h.Keys.Used)
	}

	last := "A"
	if strings.HasSuffix(secret, "A") {
		last = "B"
	}
	wrongSecret := secret[:len(secret)-1] + last
	tests := []struct{ name, token string }{
		{"empty", ""},
		{"malformed", "not-a-key"},
		{"bearer prefix kept", "Bearer " + created.Token},
		{"short secret", apikey.FormatToken(id, "short")},
		{"unknown key", apikey.FormatToken("key_9999", secret)},
		{"wrong secret", apikey.FormatToken(id, wrongSecret)},
		{"other key's secret", apikey.FormatToken(id, strings.Split(revoked.Token, ".")[1])},
		{"revoked", revoked.Token},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: tt.token})
			if !errors.Is(err, auth.ErrUnauthenticated) || p != (auth.Principal{}) {
				t.Fatalf("Authenticate(%q) = %+v, %v", tt.token, p, err)
			}
		})
	}

	// A storage failure is not reported as a bad key.
	h.Keys.GetErr = errors.New("db down")
	if _, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: created.Token}); err == nil || errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("storage failure: %v", err)
	}
}

func TestCreateAPIKeyErrors(t *testing.T) {
	h := apptest.New()
	_, err := h.App.Commands.CreateAPIKey.Handle(apptest.As("wsp_nope", apikey.ScopeAdmin), accounts.CreateAPIKey{Name: "k", Scope: "admin"})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Violations[0].Field != "workspace_id" {
		t.Fatalf("unknown workspace: %v", err)
	}
	ws, _ := h.App.Commands.CreateWorkspace.Handle(ctx, workspaceapp.CreateWorkspace{Name: "Acme"})
	admin := apptest.As(ws.ID(), apikey.ScopeAdmin)
	if _, err := h.App.Commands.CreateAPIKey.Handle(admin, accounts.CreateAPIKey{Name: "k", Scope: "root"}); !errors.As(err, &ve) {
		t.Fatalf("bad scope: %v", err)
	}
	if _, err := h.App.Commands.CreateAPIKey.Handle(admin, accounts.CreateAPIKey{Name: " ", Scope: "admin"}); !errors.As(err, &ve) {
		t.Fatalf("empty name: %v", err)
	}
	if len(h.Keys.Items) != 0 {
		t.Fatalf("stored %d keys", len(h.Keys.Items))
	}
}
