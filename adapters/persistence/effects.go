package persistence

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/formward/formward/ports"
)

// errNoOutbox refuses domain events from a repository that has no cipher to seal them with:
// accounts and workspaces emit audit events only.
var errNoOutbox = errors.New("this repository writes no domain events")

// writeEffects commits what a change caused in the change's transaction: its domain events
// sealed into the outbox, its audit events into the audit log. what names the aggregate in
// errors; c is nil for repositories without an outbox.
func writeEffects(ctx context.Context, tx *gorm.DB, c ports.Cipher, what string, fx ports.Effects) error {
	if len(fx.Events) > 0 {
		if c == nil {
			return fmt.Errorf("write %s events: %w", what, errNoOutbox)
		}
		sealed := make([]sealedEvent, 0, len(fx.Events))
		for _, e := range fx.Events {
			se, err := sealEvent(ctx, c, e)
			if err != nil {
				return err
			}
			sealed = append(sealed, se)
		}
		if err := insertEvents(tx, sealed); err != nil {
			return mapErr("write "+what+" events", err)
		}
	}
	return writeAudit(tx, fx.Audit)
}
