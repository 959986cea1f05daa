package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// A secret the dashboard shows once (a new API key, an invitation link, recovery codes) is not
// drawn by the post that made it: the post keeps it in a one-time flash and answers 303, and the
// page it redirects to takes the flash. The flash is sealed at rest under the accounts data key,
// bound to the session that made it and to one page, and deleted by its first read; an unread
// flash expires after FlashValidity and the retention job purges it. So a reload of either the
// post or the page repeats nothing and shows the secret no second time.

// FlashValidity is how long an unread flash can still be taken.
const FlashValidity = 5 * time.Minute

// maxFlashPayload bounds what one flash holds.
const maxFlashPayload = 16 << 10

// flashAAD binds a sealed payload to its flash, session and page, so it cannot be moved.
func flashAAD(id, sessionID, kind string) []byte {
	return []byte("flash:" + id + ":" + sessionID + ":" + kind)
}

// KeepFlash keeps Payload for the next page of the signed-in session that shows Kind.
type KeepFlash struct {
	Kind    string
	Payload []byte
}

// KeepFlashHandler keeps one-time flashes.
type KeepFlashHandler struct {
	flashes ports.FlashRepository
	cipher  ports.Cipher
	ids     ports.IDs
	clock   ports.Clock
}

// NewKeepFlashHandler makes the command.
func NewKeepFlashHandler(flashes ports.FlashRepository, cipher ports.Cipher, ids ports.IDs, clock ports.Clock) KeepFlashHandler {
	return KeepFlashHandler{flashes: flashes, cipher: cipher, ids: ids, clock: clock}
}

// Handle seals the payload and keeps it for FlashValidity; it returns the flash's ID, which the
// page asks for (it is no secret: only the session that kept it can take it).
func (h KeepFlashHandler) Handle(ctx context.Context, cmd KeepFlash) (string, error) {
	p, err := signedInUser(ctx)
	if err != nil {
		return "", err
	}
	if cmd.Kind == "" || len(cmd.Kind) > 64 {
		return "", domain.Validation("kind", "invalid", "a flash needs a kind of at most 64 characters")
	}
	if len(cmd.Payload) == 0 || len(cmd.Payload) > maxFlashPayload {
		return "", domain.Validation("payload", "invalid", fmt.Sprintf("a flash holds 1 to %d bytes", maxFlashPayload))
	}
	id := h.ids.New(ports.PrefixFlash)
	sealed, err := h.cipher.Seal(ctx, accountsKeyScope, cmd.Payload, flashAAD(id, p.SessionID, cmd.Kind))
	if err != nil {
		return "", fmt.Errorf("seal flash: %w", err)
	}
	now := h.clock.Now()
	err = h.flashes.Put(ctx, ports.Flash{ID: id, SessionID: p.SessionID, Kind: cmd.Kind, Sealed: sealed,
		CreatedAt: now, ExpiresAt: now.Add(FlashValidity)})
	if err != nil {
		return "", fmt.Errorf("keep flash: %w", err)
	}
	return id, nil
}

// TakeFlash takes the flash ID of the signed-in session's page Kind.
type TakeFlash struct {
	ID   string
	Kind string
}

// TakeFlashHandler takes one-time flashes.
type TakeFlashHandler struct {
	flashes ports.FlashRepository
	cipher  ports.Cipher
	clock   ports.Clock
}

// NewTakeFlashHandler makes the command.
func NewTakeFlashHandler(flashes ports.FlashRepository, cipher ports.Cipher, clock ports.Clock) TakeFlashHandler {
	return TakeFlashHandler{flashes: flashes, cipher: cipher, clock: clock}
}

// Handle deletes the flash and returns its payload; domain.ErrNotFound when it was taken
// already, expired, or belongs to another session or page. Of concurrent calls one gets it.
func (h TakeFlashHandler) Handle(ctx context.Context, cmd TakeFlash) ([]byte, error) {
	p, err := signedInUser(ctx)
	if err != nil {
		return nil, err
	}
	if cmd.ID == "" || cmd.Kind == "" {
		return nil, domain.ErrNotFound
	}
	f, err := h.flashes.Take(ctx, cmd.ID, p.SessionID, cmd.Kind, h.clock.Now())
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("take flash: %w", err)
	}
	plain, err := h.cipher.Open(ctx, accountsKeyScope, f.Sealed, flashAAD(f.ID, f.SessionID, f.Kind))
	if err != nil {
		return nil, fmt.Errorf("open flash: %w", err)
	}
	return plain, nil
}
