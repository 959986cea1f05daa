package accounts_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/formward/formward/application/accounts"
	authapp "github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
)

// TestFlashIsSealedAndTakenOnceBySessionAndKind: a flash is kept sealed, taken once by the
// session and page that kept it, refused to API keys and unread after FlashValidity.
func TestFlashIsSealedAndTakenOnceBySessionAndKind(t *testing.T) {
	h, _, _ := adaAtAcme(t)
	first := asSession(t, h, signIn(t, h, "ada@example.com", goodPassword).Token)
	second := asSession(t, h, signIn(t, h, "ada@example.com", goodPassword).Token)
	secret := []byte(`{"Token":"fwk_live_secret_value"}`)

	id, err := h.App.Commands.KeepFlash.Handle(first, accounts.KeepFlash{Kind: "api_key", Payload: secret})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Flashes.Items) != 1 || bytes.Contains(h.Flashes.Items[0].Sealed, []byte("fwk_live_secret_value")) {
		t.Fatalf("the flash is not sealed: %q", h.Flashes.Items)
	}
	if _, err := h.App.Commands.TakeFlash.Handle(second, accounts.TakeFlash{ID: id, Kind: "api_key"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another session took the flash: %v", err)
	}
	if _, err := h.App.Commands.TakeFlash.Handle(first, accounts.TakeFlash{ID: id, Kind: "invitation"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another page took the flash: %v", err)
	}
	got, err := h.App.Commands.TakeFlash.Handle(first, accounts.TakeFlash{ID: id, Kind: "api_key"})
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("took %q, %v", got, err)
	}
	if _, err := h.App.Commands.TakeFlash.Handle(first, accounts.TakeFlash{ID: id, Kind: "api_key"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("taken twice: %v", err)
	}

	// Expired: not taken.
	id, err = h.App.Commands.KeepFlash.Handle(first, accounts.KeepFlash{Kind: "api_key", Payload: secret})
	if err != nil {
		t.Fatal(err)
	}
	h.Clock.At = h.Clock.At.Add(accounts.FlashValidity)
	if _, err := h.App.Commands.TakeFlash.Handle(first, accounts.TakeFlash{ID: id, Kind: "api_key"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("an expired flash was taken: %v", err)
	}

	// A sealed payload moved to another flash does not open.
	a, _ := h.App.Commands.KeepFlash.Handle(first, accounts.KeepFlash{Kind: "api_key", Payload: secret})
	b, _ := h.App.Commands.KeepFlash.Handle(first, accounts.KeepFlash{Kind: "api_key", Payload: []byte("other")})
	for i := range h.Flashes.Items {
		if h.Flashes.Items[i].ID == b {
			for _, f := range h.Flashes.Items {
				if f.ID == a {
					h.Flashes.Items[i].Sealed = f.Sealed
				}
			}
		}
	}
	if _, err := h.App.Commands.TakeFlash.Handle(first, accounts.TakeFlash{ID: b, Kind: "api_key"}); err == nil || errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a payload moved to another flash opened: %v", err)
	}

	// Only a signed-in session keeps or takes flashes, and a flash holds something.
	if _, err := h.App.Commands.KeepFlash.Handle(ctx, accounts.KeepFlash{Kind: "api_key", Payload: secret}); !errors.Is(err, authapp.ErrForbidden) {
		t.Fatalf("an API key kept a flash: %v", err)
	}
	if _, err := h.App.Commands.TakeFlash.Handle(ctx, accounts.TakeFlash{ID: a, Kind: "api_key"}); !errors.Is(err, authapp.ErrForbidden) {
		t.Fatalf("an API key took a flash: %v", err)
	}
	var invalid *domain.ValidationError
	if _, err := h.App.Commands.KeepFlash.Handle(first, accounts.KeepFlash{Kind: "api_key"}); !errors.As(err, &invalid) {
		t.Fatalf("an empty flash: %v", err)
	}
}
