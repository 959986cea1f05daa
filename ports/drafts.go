package ports

import (
	"context"
	"time"

	"github.com/formward/formward/domain/draft"
)

// DraftRepository keeps respondents' drafts (settings.partial), their answers sealed with
// the workspace's data key and findable by the blind index of the addresses they hold.
type DraftRepository interface {
	// Save stores a new draft or the new state of a stored one.
	Save(ctx context.Context, d *draft.Draft) error
	// Get returns a draft with its answers, or domain.ErrNotFound.
	Get(ctx context.Context, id string) (*draft.Draft, error)
	// List returns a page of a form's drafts not submitted, newest first, without answers.
	List(ctx context.Context, workspaceID, formID string, page Page) ([]*draft.Draft, error)
	// CountByPage counts a form's open drafts (not submitted, not expired at now) by the page
	// they reached.
	CountByPage(ctx context.Context, workspaceID, formID string, now time.Time) (map[int]int, error)
	// DeleteExpired deletes up to limit drafts expired before now, and submitted drafts kept
	// past it, returning how many it deleted.
	DeleteExpired(ctx context.Context, now time.Time, limit int) (int64, error)
	// DeleteByEmail deletes every draft of the workspace that holds the address whose blind
	// index is hash, returning how many.
	DeleteByEmail(ctx context.Context, workspaceID string, hash []byte) (int64, error)
}

// MailQueue sends a message after the request that asked for it was answered (the account
// mail outbox, retried); nil when no mail can be sent.
type MailQueue interface {
	Queue(ctx context.Context, m Mail) error
}
