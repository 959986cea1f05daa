package ports

import (
	"context"
	"time"
)

// Flash is something a dashboard page shows once, on the page a post redirects to: a new API
// key, an invitation link, recovery codes. Its payload is sealed at rest; it belongs to the
// session that made it and to one page (Kind), and is gone after its first read or at ExpiresAt.
type Flash struct {
	ID        string
	SessionID string
	Kind      string
	// Sealed is the payload as the application sealed it; the repository stores it as it is.
	Sealed    []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

// FlashRepository holds the one-time flashes.
type FlashRepository interface {
	// Put stores the flash.
	Put(ctx context.Context, f Flash) error
	// Take deletes and returns the flash with this ID, session and kind, unexpired at now, in
	// one step: of concurrent calls one gets it, the others domain.ErrNotFound.
	Take(ctx context.Context, id, sessionID, kind string, now time.Time) (Flash, error)
	// Purge deletes the flashes expired at now and says how many.
	Purge(ctx context.Context, now time.Time) (int64, error)
}
