package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain/audit"
)

// TestProfileRename: the profile page's name form renames the signed-in person (the page and
// the shell show the new name, the form is filled with it), an invalid name comes back with a
// message next to the field and changes nothing, and a signed-out post goes to sign-in.
func TestProfileRename(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		p := b.get("/app/settings/profile").expect(t, http.StatusOK)
		if !strings.Contains(p.body, `action="/app/settings/profile/name"`) || !strings.Contains(p.body, `value="Ada Lovelace"`) {
			t.Fatalf("no name form filled with the current name: %s", p.body)
		}

		b.post("/app/settings/profile/name", url.Values{"name": {"  Augusta Ada King  "}}).redirectsTo(t, "/app/settings/profile")
		p = b.get("/app/settings/profile").expect(t, http.StatusOK)
		if !strings.Contains(text(p.body), "Name saved.") || !strings.Contains(p.body, `value="Augusta Ada King"`) {
			t.Fatalf("the profile does not show the new name and the notice: %s", text(p.body))
		}
		if !strings.Contains(b.get("/app/forms").expect(t, http.StatusOK).body, "Augusta Ada King") {
			t.Fatal("the shell does not show the new name")
		}

		long := strings.Repeat("x", 201)
		p = b.post("/app/settings/profile/name", url.Values{"name": {long}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `id="f-name" name="name" type="text" autocomplete="name" maxlength="200" value="`+long+`" aria-invalid="true"`) {
			t.Fatalf("the rejected name is not drawn again as invalid: %s", p.body)
		}
		if !strings.Contains(text(p.body), "200 characters") {
			t.Fatalf("no message next to the name: %s", text(p.body))
		}
		p = b.post("/app/settings/profile/name", url.Values{"name": {"Ada\x00"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(b.get("/app/settings/profile").expect(t, http.StatusOK).body, `value="Augusta Ada King"`) {
			t.Fatal("a rejected name changed the stored one")
		}

		h.browser().post("/app/settings/profile/name", url.Values{"name": {"Mallory"}}).redirectsTo(t, "/app/login")
		// The use case itself fails closed: no principal, or one that is not a signed-in person.
		for _, ctx := range []context.Context{context.Background(),
			auth.WithPrincipal(context.Background(), auth.Principal{Actor: audit.Actor{Type: audit.ActorAPIKey, ID: "key_1"}})} {
			if _, err := h.app.Commands.UpdateProfile.Handle(ctx, accounts.UpdateProfile{Name: new("Mallory")}); !errors.Is(err, auth.ErrForbidden) {
				t.Fatalf("UpdateProfile without a signed-in user: %v, want ErrForbidden", err)
			}
		}
	})
}
