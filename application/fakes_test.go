package application_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/formward/formward/domain/audit"
	"sort"
	"sync"
	"time"

	"github.com/formward/formward/application"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// In-memory fakes of the ports: a fixed clock, sequential IDs, maps for the repositories.

type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

type seqIDs struct {
	mu sync.Mutex
	n  int
}

func (s *seqIDs) New(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("%s_%04d", prefix, s.n)
}

type hmacHasher struct {
	key   []byte
	mu    sync.Mutex
	calls []string
}

func (h *hmacHasher) Hash(ip string) string {
	h.mu.Lock()
	h.calls = append(h.calls, ip)
	h.mu.Unlock()
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(ip))
	return hex.EncodeToString(m.Sum(nil))
}

type memWorkspaces struct {
	items []*workspace.Workspace
}

func (r *memWorkspaces) Create(_ context.Context, w *workspace.Workspace) error {
	r.items = append(r.items, w)
	return nil
}

func (r *memWorkspaces) Get(_ context.Context, id string) (*workspace.Workspace, error) {
	for _, w := range r.items {
		if w.ID() == id {
			return w, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *memWorkspaces) List(context.Context) ([]*workspace.Workspace, error) { return r.items, nil }

func (r *memWorkspaces) Oldest(context.Context) (*workspace.Workspace, error) {
	if len(r.items) == 0 {
		return nil, domain.ErrNotFound
	}
	return r.items[0], nil
}

func (r *memWorkspaces) Update(ctx context.Context, id string, change func(*workspace.Workspace) (ports.Effects, error)) (*workspace.Workspace, error) {
	w, err := r.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, err := change(w); err != nil {
		return nil, err
	}
	return w, nil
}

type memKeys struct {
	items  map[string]*apikey.Key
	getErr error
	// used holds the times MarkUsed recorded.
	used []time.Time
}

func (r *memKeys) Create(_ context.Context, k *apikey.Key, _ ...audit.Event) error {
	if r.items == nil {
		r.items = map[string]*apikey.Key{}
	}
	r.items[k.ID()] = k
	return nil
}

func (r *memKeys) Get(_ context.Context, id string) (*apikey.Key, error) {
	if r.getErr != nil {
		return nil, r.getErr
	}
	k, ok := r.items[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return k, nil
}

func (r *memKeys) List(_ context.Context, workspaceID string) ([]*apikey.Key, error) {
	var out []*apikey.Key
	for _, k := range r.items {
		if workspaceID == "" || k.WorkspaceID() == workspaceID {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out, nil
}

func (r *memKeys) Revoke(_ context.Context, workspaceID, id string, at time.Time, _ ...audit.Event) error {
	k, ok := r.items[id]
	if !ok || workspaceID != "" && k.WorkspaceID() != workspaceID {
		return domain.ErrNotFound
	}
	k.Revoke(at)
	return nil
}

func (r *memKeys) MarkUsed(_ context.Context, id string, at time.Time) error {
	k := r.items[id]
	r.items[id] = apikey.UnmarshalFromDatabase(k.ID(), k.WorkspaceID(), k.Name(), k.Scope(), k.SecretHash(), k.CreatedBy(), k.CreatedAt(), &at, k.RevokedAt())
	r.used = append(r.used, at)
	return nil
}

type memForms struct {
	audits    []audit.Event
	items     []*form.Form // in creation order
	counts    map[string]int64
	last      map[string]time.Time // LastSubmissionTimes answers
	events    []event.Event
	listPages []ports.Page
}

func (r *memForms) Create(_ context.Context, f *form.Form) error {
	r.items = append(r.items, f)
	return nil
}

func (r *memForms) find(workspaceID, id string) (int, error) {
	for i, f := range r.items {
		if f.ID() == id && f.WorkspaceID() == workspaceID {
			return i, nil
		}
	}
	return -1, domain.ErrNotFound
}

func (r *memForms) Get(_ context.Context, workspaceID, id string) (*form.Form, error) {
	i, err := r.find(workspaceID, id)
	if err != nil {
		return nil, err
	}
	c := *r.items[i]
	return &c, nil
}

func (r *memForms) Find(_ context.Context, id string) (*form.Form, error) {
	for _, f := range r.items {
		if f.ID() == id {
			c := *f
			return &c, nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *memForms) List(_ context.Context, workspaceID string, status *form.Status, page ports.Page) ([]*form.Form, error) {
	r.listPages = append(r.listPages, page)
	var out []*form.Form
	for i := len(r.items) - 1; i >= 0 && len(out) < page.Limit; i-- {
		f := r.items[i]
		if f.WorkspaceID() != workspaceID || (status != nil && f.Status() != *status) {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

func (r *memForms) Update(_ context.Context, workspaceID, id string, change func(*form.Form) (ports.Effects, error)) (*form.Form, error) {
	i, err := r.find(workspaceID, id)
	if err != nil {
		return nil, err
	}
	c := *r.items[i]
	fx, err := change(&c)
	if err != nil {
		return nil, err
	}
	r.items[i] = &c
	r.events = append(r.events, fx.Events...)
	r.audits = append(r.audits, fx.Audit...)
	return &c, nil
}

func (r *memForms) Delete(_ context.Context, workspaceID, id string, audits ...audit.Event) error {
	i, err := r.find(workspaceID, id)
	if err != nil {
		return err
	}
	r.items = append(r.items[:i], r.items[i+1:]...)
	r.audits = append(r.audits, audits...)
	return nil
}

func (r *memForms) LastSubmissionTimes(_ context.Context, _ string, ids []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, id := range ids {
		if at, ok := r.last[id]; ok {
			out[id] = at
		}
	}
	return out, nil
}

func (r *memForms) SubmissionCounts(_ context.Context, _ string, ids []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, id := range ids {
		if n, ok := r.counts[id]; ok {
			out[id] = n
		}
	}
	return out, nil
}

type memSubmissions struct {
	items   []*submission.Submission
	events  []event.Event
	queries []ports.SubmissionQuery
	spent   map[string]bool
	emails  map[string]bool // one-per-email keys, see closing_fakes_test.go
	audits  []audit.Event
}

func (r *memSubmissions) Add(_ context.Context, s *submission.Submission, e event.Event) error {
	r.items = append(r.items, s)
	r.events = append(r.events, e)
	return nil
}

func (r *memSubmissions) AddSpendingToken(ctx context.Context, s *submission.Submission, e event.Event, tok ports.SpentToken) error {
	if r.spent[tok.Nonce] {
		return ports.ErrTokenUsed
	}
	if r.spent == nil {
		r.spent = map[string]bool{}
	}
	r.spent[tok.Nonce] = true
	return r.Add(ctx, s, e)
}

func (r *memSubmissions) find(workspaceID, formID, id string) (int, error) {
	for i, s := range r.items {
		if s.ID() == id && s.FormID() == formID && s.WorkspaceID() == workspaceID {
			return i, nil
		}
	}
	return -1, domain.ErrNotFound
}

func (r *memSubmissions) Get(_ context.Context, workspaceID, formID, id string) (*submission.Submission, error) {
	i, err := r.find(workspaceID, formID, id)
	if err != nil {
		return nil, err
	}
	return r.items[i], nil
}

func (r *memSubmissions) List(_ context.Context, workspaceID, formID string, q ports.SubmissionQuery) ([]*submission.Submission, error) {
	r.queries = append(r.queries, q)
	var out []*submission.Submission
	for i := len(r.items) - 1; i >= 0 && len(out) < q.Page.Limit; i-- {
		s := r.items[i]
		if s.WorkspaceID() == workspaceID && s.FormID() == formID {
			out = append(out, s)
		}
	}
	return out, nil
}

func (r *memSubmissions) Update(_ context.Context, workspaceID, formID, id string, change func(*submission.Submission) (ports.Effects, error)) (*submission.Submission, error) {
	i, err := r.find(workspaceID, formID, id)
	if err != nil {
		return nil, err
	}
	c := *r.items[i]
	fx, err := change(&c)
	if err != nil {
		return nil, err
	}
	r.items[i] = &c
	r.events = append(r.events, fx.Events...)
	r.audits = append(r.audits, fx.Audit...)
	return &c, nil
}

func (r *memSubmissions) Delete(_ context.Context, workspaceID, formID, id string, audits ...audit.Event) error {
	i, err := r.find(workspaceID, formID, id)
	if err != nil {
		return err
	}
	r.items = append(r.items[:i], r.items[i+1:]...)
	r.audits = append(r.audits, audits...)
	return nil
}

// harness is one application wired to fresh fakes.
type harness struct {
	app         *application.Application
	clock       *fixedClock
	ids         *seqIDs
	hasher      *hmacHasher
	workspaces  *memWorkspaces
	keys        *memKeys
	forms       *memForms
	submissions *memSubmissions
}

var testNow = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func newHarness() *harness {
	h := &harness{
		clock:       &fixedClock{now: testNow},
		ids:         &seqIDs{},
		hasher:      &hmacHasher{key: []byte("server secret")},
		workspaces:  &memWorkspaces{},
		keys:        &memKeys{},
		forms:       &memForms{counts: map[string]int64{}},
		submissions: &memSubmissions{},
	}
	h.app = application.New(application.Deps{
		Workspaces: h.workspaces, Keys: h.keys, Forms: h.forms, Submissions: h.submissions,
		IDs: h.ids, Clock: h.clock, IPHasher: h.hasher,
	}, application.Settings{})
	return h
}

// Compile-time checks that the fakes satisfy the ports.
var (
	_ ports.Clock                = (*fixedClock)(nil)
	_ ports.IDs                  = (*seqIDs)(nil)
	_ ports.IPHasher             = (*hmacHasher)(nil)
	_ ports.WorkspaceRepository  = (*memWorkspaces)(nil)
	_ ports.APIKeyRepository     = (*memKeys)(nil)
	_ ports.FormRepository       = (*memForms)(nil)
	_ ports.SubmissionRepository = (*memSubmissions)(nil)
)
