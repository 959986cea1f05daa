package backup

import (
	"context"
	"time"

	"github.com/formward/formward/ports"
)

// Shipper copies the tombstones the database recorded to the log beside the backups, then
// removes them from the database. A tombstone leaves the database only after the log has it
// durably; a crash in between copies it twice, which is harmless (re-applying is idempotent).
type Shipper struct {
	repo ports.TombstoneRepository
	log  ports.Tombstones
}

// NewShipper copies from repo to log.
func NewShipper(repo ports.TombstoneRepository, log ports.Tombstones) *Shipper {
	return &Shipper{repo: repo, log: log}
}

const shipBatch = 5000

// Ship copies every pending tombstone and returns how many it copied.
func (s *Shipper) Ship(ctx context.Context) (int, error) {
	total := 0
	for {
		pending, err := s.repo.Pending(ctx, shipBatch)
		if err != nil || len(pending) == 0 {
			return total, err
		}
		ts := make([]ports.Tombstone, len(pending))
		seqs := make([]int64, len(pending))
		for i, p := range pending {
			ts[i], seqs[i] = p.Tombstone, p.Seq
		}
		if err := s.log.Append(ctx, ts); err != nil {
			return total, err
		}
		if err := s.repo.Shipped(ctx, seqs); err != nil {
			return total, err
		}
		total += len(pending)
		if len(pending) < shipBatch {
			return total, nil
		}
	}
}

// shipGap is the least time between two ships woken by commits. A retention pass records a
// batch of tombstones several times a second; shipping each at once cost the database a
// write transaction (and the log an fsync) per batch, while a gap lets one ship carry many.
// Tombstones wait in the database meanwhile, so nothing is lost.
const shipGap = time.Second

// Run ships whenever recorded signals a commit that recorded tombstones (at most once per
// shipGap), and every interval in any case, until ctx ends; failures go to failed and are
// retried at the next tick (the tombstones stay in the database meanwhile).
func (s *Shipper) Run(ctx context.Context, interval time.Duration, recorded <-chan struct{}, failed func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		began := time.Now()
		if _, err := s.Ship(ctx); err != nil && ctx.Err() == nil {
			failed(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			continue
		case <-recorded:
		}
		if wait := shipGap - time.Since(began); wait > 0 {
			gap := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				gap.Stop()
				return
			case <-gap.C:
			}
		}
	}
}
