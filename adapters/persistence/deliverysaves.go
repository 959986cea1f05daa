package persistence

import (
	"context"
	"errors"
	"sync"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/webhook"
)

// Delivery saves are group-committed: the engine saves every attempt's outcome, and with many
// attempts at once one transaction (one fsync) per save would make the database the limit of
// how fast one healthy endpoint is served. A Save queues its delivery; if no save is being
// committed it commits everything queued in one transaction, then hands the lead to the first
// save queued meanwhile, so nobody commits for others for longer than one batch. Each caller
// still hears its own outcome only after the commit.

// deliverySaves is a repository's queue of saves waiting for a commit.
type deliverySaves struct {
	mu      sync.Mutex
	queue   []*pendingSave
	leading bool
}

// pendingSave is one queued save; done gets its outcome, or errLeadSaves when it is its turn to
// commit the queue.
type pendingSave struct {
	d    *webhook.Delivery
	done chan error
}

var errLeadSaves = errors.New("commit the queued delivery saves")

// Save stores the delivery's state after an attempt. It never recreates a deleted delivery:
// when the row is gone (its webhook was deleted) it returns domain.ErrNotFound. Concurrent
// saves share a transaction (see deliverySaves); a save that leads the batch writes it under
// its ctx stripped of cancellation and bounded by commitTimeout, so its caller stopping does
// not fail the others'.
func (r *DeliveryRepository) Save(ctx context.Context, d *webhook.Delivery) error {
	p := &pendingSave{d: d, done: make(chan error, 1)}
	s := &r.saves
	s.mu.Lock()
	s.queue = append(s.queue, p)
	lead := !s.leading
	s.leading = true
	s.mu.Unlock()
	if !lead {
		if err := <-p.done; err != errLeadSaves {
			return err
		}
	}
	s.mu.Lock()
	batch := s.queue
	s.queue = nil
	s.mu.Unlock()
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	r.commitSaves(bctx, batch)
	cancel()
	s.mu.Lock()
	if len(s.queue) > 0 {
		s.queue[0].done <- errLeadSaves
	} else {
		s.leading = false
	}
	s.mu.Unlock()
	return <-p.done
}

// commitSaves writes the batch in one transaction and tells each save its outcome: a missing
// row fails only its own save; any other failure fails them all, nothing being written.
func (r *DeliveryRepository) commitSaves(ctx context.Context, batch []*pendingSave) {
	missing := make([]bool, len(batch))
	write := func(db *gorm.DB) error {
		for i, p := range batch {
			err := saveDelivery(db, p.d)
			if errors.Is(err, domain.ErrNotFound) {
				missing[i] = true
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if len(batch) == 1 {
		err = r.db.write(ctx, write)
	} else {
		err = r.db.tx(ctx, write)
	}
	for i, p := range batch {
		switch {
		case err != nil:
			p.done <- err
		case missing[i]:
			p.done <- domain.ErrNotFound
		default:
			p.done <- nil
		}
	}
}
