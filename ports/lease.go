package ports

import "context"

// Lease lets one process at a time act as the outbox relay, which keeps each form's events in order
// when several relay processes run.
type Lease interface {
	// Acquire blocks until this process holds the lease, or returns ctx's error when ctx ends
	// first. release gives the lease up; it is safe to call more than once.
	Acquire(ctx context.Context) (release func(), err error)
}
