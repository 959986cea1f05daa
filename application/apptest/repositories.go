package apptest

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// NewestFirst returns up to page.Limit of items, newest first by (created, ID), strictly after
// page.After, as the stores' keyset pages are.
func NewestFirst[T any](items []T, page ports.Page, position func(T) ports.Position) []T {
	out := make([]T, 0, len(items))
	for _, it := range items {
		p := position(it)
		if a := page.After; a == nil || p.CreatedAt.Before(a.CreatedAt) || p.CreatedAt.Equal(a.CreatedAt) && p.ID < a.ID {
			out = append(out, it)
		}
	}
	slices.SortStableFunc(out, func(a, b T) int {
		pa, pb := position(a), position(b)
		return cmp.Or(pb.CreatedAt.Compare(pa.CreatedAt), cmp.Compare(pb.ID, pa.ID))
	})
	return out[:min(len(out), page.Limit)]
}

// rows are a repository's rows in the order they were added, with the domain events their
// changes committed (the outbox) and the log their audit events go to.
type rows[T any] struct {
	mu     sync.Mutex
	Items  []T
	Events []event.Event
	Audit  *Audit
}

func (r *rows[T]) add(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Items = append(r.Items, v)
}

// update stores what change makes of c (a copy, as Get returned it with err) in place of the
// row match finds, with its effects; nothing when change fails.
func (r *rows[T]) update(ctx context.Context, c T, err error, match func(T) bool, change func(T) (ports.Effects, error)) (T, error) {
	var none T
	if err != nil {
		return none, err
	}
	fx, err := change(c)
	if err != nil {
		return none, err
	}
	r.mu.Lock()
	if i := slices.IndexFunc(r.Items, match); i >= 0 {
		r.Items[i] = c
	}
	r.Events = append(r.Events, fx.Events...)
	r.mu.Unlock()
	return c, r.Audit.Append(ctx, fx.Audit...)
}

// remove deletes the row match finds, with the audit events; domain.ErrNotFound when none.
func (r *rows[T]) remove(ctx context.Context, match func(T) bool, events []audit.Event) error {
	r.mu.Lock()
	i := slices.IndexFunc(r.Items, match)
	if i < 0 {
		r.mu.Unlock()
		return domain.ErrNotFound
	}
	r.Items = slices.Delete(r.Items, i, i+1)
	r.mu.Unlock()
	return r.Audit.Append(ctx, events...)
}

// Workspaces is the workspace repository in memory.
type Workspaces struct{ rows[*workspace.Workspace] }

func (r *Workspaces) Create(_ context.Context, w *workspace.Workspace) error {
	r.add(w)
	return nil
}

func (r *Workspaces) Get(_ context.Context, id string) (*workspace.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.Items {
		if w.ID() == id {
			return workspace.UnmarshalFromDatabase(w.Record()), nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *Workspaces) List(context.Context) ([]*workspace.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.Items), nil
}

func (r *Workspaces) Oldest(context.Context) (*workspace.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.Items) == 0 {
		return nil, domain.ErrNotFound
	}
	return r.Items[0], nil
}

func (r *Workspaces) Update(ctx context.Context, id string, change func(*workspace.Workspace) (ports.Effects, error)) (*workspace.Workspace, error) {
	w, err := r.Get(ctx, id)
	return r.update(ctx, w, err, func(w *workspace.Workspace) bool { return w.ID() == id }, change)
}

// Keys is the API key repository in memory.
type Keys struct {
	mu    sync.Mutex
	Items map[string]*apikey.Key
	// GetErr, when set, is Get's answer, as a database that is down gives.
	GetErr error
	// Used holds the times MarkUsed recorded.
	Used  []time.Time
	Audit *Audit
}

func (r *Keys) Create(ctx context.Context, k *apikey.Key, events ...audit.Event) error {
	r.mu.Lock()
	if r.Items == nil {
		r.Items = map[string]*apikey.Key{}
	}
	r.Items[k.ID()] = k
	r.mu.Unlock()
	return r.Audit.Append(ctx, events...)
}

func (r *Keys) Get(_ context.Context, id string) (*apikey.Key, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.GetErr != nil {
		return nil, r.GetErr
	}
	k, ok := r.Items[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return k, nil
}

func (r *Keys) List(_ context.Context, workspaceID string) ([]*apikey.Key, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*apikey.Key
	for _, k := range r.Items {
		if workspaceID == "" || k.WorkspaceID() == workspaceID {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b *apikey.Key) int { return cmp.Compare(a.ID(), b.ID()) })
	return out, nil
}

func (r *Keys) Revoke(ctx context.Context, workspaceID, id string, at time.Time, events ...audit.Event) error {
	r.mu.Lock()
	k, ok := r.Items[id]
	if !ok || workspaceID != "" && k.WorkspaceID() != workspaceID {
		r.mu.Unlock()
		return domain.ErrNotFound
	}
	r.Items[id] = apikey.UnmarshalFromDatabase(k.ID(), k.WorkspaceID(), k.Name(), k.Scope(), k.SecretHash(), k.CreatedBy(), k.CreatedAt(), k.LastUsedAt(), &at)
	r.mu.Unlock()
	return r.Audit.Append(ctx, events...)
}

func (r *Keys) MarkUsed(_ context.Context, id string, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.Items[id]
	r.Items[id] = apikey.UnmarshalFromDatabase(k.ID(), k.WorkspaceID(), k.Name(), k.Scope(), k.SecretHash(), k.CreatedBy(), k.CreatedAt(), &at, k.RevokedAt())
	r.Used = append(r.Used, at)
	return nil
}

// Forms is the form repository in memory (Items in creation order); its submissions are
// those of Submissions.
type Forms struct {
	rows[*form.Form]
	// ListPages are the pages List was asked for.
	ListPages   []ports.Page
	Submissions *Submissions
}

func (r *Forms) Create(ctx context.Context, f *form.Form, events ...audit.Event) error {
	r.add(f)
	return r.Audit.Append(ctx, events...)
}

func (r *Forms) find(workspaceID, id string) (int, error) {
	for i, f := range r.Items {
		if f.ID() == id && (workspaceID == "" || f.WorkspaceID() == workspaceID) {
			return i, nil
		}
	}
	return -1, domain.ErrNotFound
}

func (r *Forms) Get(_ context.Context, workspaceID, id string) (*form.Form, error) {
	if workspaceID == "" {
		return nil, domain.ErrNotFound
	}
	return r.copyOf(workspaceID, id)
}

func (r *Forms) FindByRef(_ context.Context, workspaceID, ref string) (*form.Form, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.Items {
		if f.WorkspaceID() == workspaceID && f.Ref() != nil && *f.Ref() == ref {
			c := *f
			return &c, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *Forms) Find(_ context.Context, id string) (*form.Form, error) { return r.copyOf("", id) }

func (r *Forms) copyOf(workspaceID, id string) (*form.Form, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, err := r.find(workspaceID, id)
	if err != nil {
		return nil, err
	}
	c := *r.Items[i]
	return &c, nil
}

func (r *Forms) List(_ context.Context, workspaceID string, status *form.Status, page ports.Page) ([]*form.Form, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ListPages = append(r.ListPages, page)
	var of []*form.Form
	for _, f := range r.Items {
		if f.WorkspaceID() == workspaceID && (status == nil || f.Status() == *status) {
			of = append(of, f)
		}
	}
	return NewestFirst(of, page, func(f *form.Form) ports.Position { return ports.Position{CreatedAt: f.CreatedAt(), ID: f.ID()} }), nil
}

func (r *Forms) Update(ctx context.Context, workspaceID, id string, change func(*form.Form) (ports.Effects, error)) (*form.Form, error) {
	c, err := r.Get(ctx, workspaceID, id)
	return r.update(ctx, c, err, func(f *form.Form) bool { return f.ID() == id }, change)
}

func (r *Forms) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	if err := r.remove(ctx, func(f *form.Form) bool { return f.ID() == id && f.WorkspaceID() == workspaceID }, events); err != nil {
		return err
	}
	r.Submissions.deleteWhere(func(s *submission.Submission) bool { return s.FormID() == id })
	return nil
}

// ListVersions knows the current version of the form only.
func (r *Forms) ListVersions(ctx context.Context, workspaceID, id string, before, _ int) ([]ports.FormVersion, error) {
	f, err := r.Get(ctx, workspaceID, id)
	if err != nil {
		return nil, err
	}
	if before > 0 && f.Version() >= before {
		return nil, nil
	}
	return []ports.FormVersion{{Version: f.Version(), Fields: f.Fields(), CreatedAt: f.UpdatedAt()}}, nil
}

// GetVersion knows the current version of the form only.
func (r *Forms) GetVersion(ctx context.Context, workspaceID, id string, version int) (ports.FormVersion, error) {
	vs, err := r.ListVersions(ctx, workspaceID, id, 0, 1)
	if err != nil {
		return ports.FormVersion{}, err
	}
	if vs[0].Version != version {
		return ports.FormVersion{}, domain.ErrNotFound
	}
	return vs[0], nil
}

func (r *Forms) LastSubmissionTimes(_ context.Context, workspaceID string, ids []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, s := range r.Submissions.of(workspaceID, ids) {
		if at := s.SubmittedAt(); at.After(out[s.FormID()]) {
			out[s.FormID()] = at
		}
	}
	return out, nil
}

func (r *Forms) SubmissionCounts(_ context.Context, workspaceID string, ids []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, id := range ids {
		out[id] = 0
	}
	for _, s := range r.Submissions.of(workspaceID, ids) {
		out[s.FormID()]++
	}
	return out, nil
}

// Submissions is the submission repository in memory (Items in the order added).
type Submissions struct {
	rows[*submission.Submission]
	// Queries are the queries List was asked.
	Queries []ports.SubmissionQuery
	// Spent are the render token nonces spent.
	Spent map[string]bool
	// emails are the one-per-email keys taken, as form|key.
	emails map[string]bool
}

func (r *Submissions) Add(_ context.Context, s *submission.Submission, e event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(s, e)
	return nil
}

func (r *Submissions) add(s *submission.Submission, e event.Event) {
	r.Items = append(r.Items, s)
	r.Events = append(r.Events, e)
}

func (r *Submissions) AddSpendingToken(ctx context.Context, s *submission.Submission, e event.Event, tok ports.SpentToken) error {
	return r.AddGuarded(ctx, s, e, ports.CaptureGuards{Token: &tok})
}

// AddGuarded applies the guards as the database does inside its transaction: the token, the
// email key, then the form's limit (every stored submission of the form counts).
func (r *Submissions) AddGuarded(_ context.Context, s *submission.Submission, e event.Event, g ports.CaptureGuards) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g.Token != nil && r.Spent[g.Token.Nonce] {
		return ports.ErrTokenUsed
	}
	emailKey := s.FormID() + "|" + g.EmailKey
	if g.EmailKey != "" && r.emails[emailKey] {
		return ports.ErrEmailUsed
	}
	if g.MaxSubmissions > 0 {
		var n int64
		for _, it := range r.Items {
			if it.FormID() == s.FormID() {
				n++
			}
		}
		if n >= g.MaxSubmissions {
			return domain.ErrFormClosed
		}
	}
	if g.Token != nil {
		if r.Spent == nil {
			r.Spent = map[string]bool{}
		}
		r.Spent[g.Token.Nonce] = true
	}
	if g.EmailKey != "" {
		if r.emails == nil {
			r.emails = map[string]bool{}
		}
		r.emails[emailKey] = true
	}
	r.add(s, e)
	return nil
}

func (r *Submissions) find(workspaceID, formID, id string) (int, error) {
	for i, s := range r.Items {
		if s.ID() == id && s.FormID() == formID && s.WorkspaceID() == workspaceID {
			return i, nil
		}
	}
	return -1, domain.ErrNotFound
}

func (r *Submissions) Get(_ context.Context, workspaceID, formID, id string) (*submission.Submission, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, err := r.find(workspaceID, formID, id)
	if err != nil {
		return nil, err
	}
	c := *r.Items[i]
	return &c, nil
}

func (r *Submissions) Find(_ context.Context, workspaceID, id string) (*submission.Submission, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.Items {
		if s.ID() == id && s.WorkspaceID() == workspaceID {
			c := *s
			return &c, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *Submissions) List(_ context.Context, workspaceID, formID string, q ports.SubmissionQuery) ([]*submission.Submission, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Queries = append(r.Queries, q)
	var of []*submission.Submission
	for _, s := range r.Items {
		at := s.SubmittedAt()
		if s.WorkspaceID() == workspaceID && s.FormID() == formID &&
			(q.CreatedAfter == nil || at.After(*q.CreatedAfter)) && (q.CreatedBefore == nil || at.Before(*q.CreatedBefore)) {
			of = append(of, s)
		}
	}
	return NewestFirst(of, q.Page, func(s *submission.Submission) ports.Position {
		return ports.Position{CreatedAt: s.SubmittedAt(), ID: s.ID()}
	}), nil
}

func (r *Submissions) Update(ctx context.Context, workspaceID, formID, id string, change func(*submission.Submission) (ports.Effects, error)) (*submission.Submission, error) {
	c, err := r.Get(ctx, workspaceID, formID, id)
	return r.update(ctx, c, err, func(s *submission.Submission) bool { return s.ID() == id }, change)
}

func (r *Submissions) Delete(ctx context.Context, workspaceID, formID, id string, events ...audit.Event) error {
	return r.remove(ctx, func(s *submission.Submission) bool {
		return s.ID() == id && s.FormID() == formID && s.WorkspaceID() == workspaceID
	}, events)
}

// of returns the stored submissions of the workspace's forms with these IDs.
func (r *Submissions) of(workspaceID string, formIDs []string) []*submission.Submission {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*submission.Submission
	for _, s := range r.Items {
		if s.WorkspaceID() == workspaceID && slices.Contains(formIDs, s.FormID()) {
			out = append(out, s)
		}
	}
	return out
}

func (r *Submissions) deleteWhere(match func(*submission.Submission) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Items = slices.DeleteFunc(r.Items, match)
}
