package apptest

import (
	"context"
	"sync"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// Runs is the run repository in memory; ClaimDue takes due runs in the order they were
// added, within the claim's shares (ClaimFairly).
type Runs struct {
	mu    sync.Mutex
	items map[string]*workflow.Run
	order []string
	// AddErr, when set, is AddAll's answer, as a database that is down gives.
	AddErr error
}

func (s *Runs) AddAll(_ context.Context, rs []*workflow.Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.AddErr != nil {
		return s.AddErr
	}
next:
	for _, r := range rs {
		for _, o := range s.items {
			if o.WorkflowID() == r.WorkflowID() && o.EventID() == r.EventID() && o.Kind() == r.Kind() && o.FormID() == r.FormID() {
				continue next
			}
		}
		s.items[r.ID()] = r
		s.order = append(s.order, r.ID())
	}
	return nil
}

func (s *Runs) Get(_ context.Context, ws, id string) (*workflow.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.items[id]
	if !ok || r.WorkspaceID() != ws {
		return nil, domain.ErrNotFound
	}
	return cloneRun(r), nil
}

func (s *Runs) List(_ context.Context, ws, workflowID string, page ports.Page) ([]*workflow.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*workflow.Run
	for i := len(s.order) - 1; i >= 0 && len(out) < page.Limit; i-- {
		if r := s.items[s.order[i]]; r.WorkspaceID() == ws && r.WorkflowID() == workflowID {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Runs) ListNotifications(_ context.Context, ws, formID string, page ports.Page) ([]*workflow.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*workflow.Run
	for i := len(s.order) - 1; i >= 0 && len(out) < page.Limit; i-- {
		if r := s.items[s.order[i]]; r.WorkspaceID() == ws && r.FormID() == formID && r.Kind().IsNotification() {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Runs) ClaimDue(_ context.Context, c ports.Claim) ([]*workflow.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []*workflow.Run
	for _, id := range s.order {
		if r := s.items[id]; r.NextAttemptAt() != nil && !r.NextAttemptAt().After(c.Now) {
			due = append(due, r)
		}
	}
	var out []*workflow.Run
	for _, i := range ClaimFairly(c, len(due), func(i int) (string, string) { return due[i].WorkspaceID(), "" }) {
		due[i].Postpone(c.Now.Add(c.Lease))
		out = append(out, cloneRun(due[i]))
	}
	return out, nil
}

func (s *Runs) Save(_ context.Context, r *workflow.Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.items[r.ID()]; !ok {
		return domain.ErrNotFound
	}
	s.items[r.ID()] = cloneRun(r)
	return nil
}

func (s *Runs) Update(_ context.Context, ws, id string, change func(*workflow.Run) (ports.Effects, error)) (*workflow.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, ok := s.items[id]
	if !ok || stored.WorkspaceID() != ws {
		return nil, domain.ErrNotFound
	}
	r := cloneRun(stored)
	if _, err := change(r); err != nil {
		return nil, err
	}
	s.items[id] = cloneRun(r)
	return r, nil
}

// cloneRun copies a run as a database round trip would, so the engine and the store never share one.
func cloneRun(r *workflow.Run) *workflow.Run {
	return workflow.UnmarshalRunFromDatabase(r.ID(), r.WorkspaceID(), r.Kind(), r.WorkflowID(), r.FormID(), r.SubmissionID(), r.EventID(),
		r.EventType(), r.OccurredAt(), r.Fields(), r.Status(), r.Actions(), r.NextAttemptAt(), r.CreatedAt(), r.UpdatedAt(), r.FinishedAt())
}

// All returns the stored runs in the order they were added.
func (s *Runs) All() []*workflow.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*workflow.Run, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.items[id])
	}
	return out
}
