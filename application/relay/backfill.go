package relay

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// BackfillAll is the scope of a backfill of every form of every workspace.
const BackfillAll = "all"

// BackfillEvents publishes one submission.snapshot per stored submission, for consumers that
// join late (`formward events backfill`): form after form, each form's submissions oldest first,
// keyed by form like live events. An interrupted backfill of the same topic and scope resumes
// after the last batch the broker acknowledged.
type BackfillEvents struct {
	// FormID is the form to backfill, or BackfillAll.
	FormID string
	// Topic names the destination, for resuming.
	Topic string
	To    ports.EventPublisher
	// Restart abandons an unfinished backfill of the same topic and scope and starts over.
	Restart bool
	// Wait, when set, is called before each batch of n events (a throttle).
	Wait func(ctx context.Context, n int) error
	// Progress, when set, hears after each acknowledged batch.
	Progress func(BackfillProgress)
}

// BackfillProgress is how far a backfill got.
type BackfillProgress struct {
	ID        string
	Resumed   bool
	FormID    string
	Published int64
}

// BackfillEventsHandler backfills events.
type BackfillEventsHandler struct {
	workspaces ports.WorkspaceRepository
	forms      ports.FormRepository
	scanner    ports.SubmissionScanner
	store      ports.BackfillStore
	ids        ports.IDs
	clock      ports.Clock
}

// NewBackfillEventsHandler makes the command.
func NewBackfillEventsHandler(workspaces ports.WorkspaceRepository, forms ports.FormRepository, scanner ports.SubmissionScanner,
	store ports.BackfillStore, ids ports.IDs, clock ports.Clock) BackfillEventsHandler {
	return BackfillEventsHandler{workspaces: workspaces, forms: forms, scanner: scanner, store: store, ids: ids, clock: clock}
}

// Handle publishes the snapshots and returns how far it got; on an error, a later run of the
// same topic and scope resumes there.
func (h BackfillEventsHandler) Handle(ctx context.Context, cmd BackfillEvents) (BackfillProgress, error) {
	forms, err := h.formsOf(ctx, cmd.FormID)
	if err != nil {
		return BackfillProgress{}, err
	}
	b, err := h.store.Running(ctx, cmd.Topic, cmd.FormID)
	if err != nil {
		return BackfillProgress{}, err
	}
	resumed := b != nil
	if b != nil && cmd.Restart {
		if err := h.store.Finish(ctx, b.ID, false, h.clock.Now()); err != nil {
			return BackfillProgress{}, err
		}
		b, resumed = nil, false
	}
	if b == nil {
		b = &ports.Backfill{ID: h.ids.New("bfl"), Topic: cmd.Topic, Scope: cmd.FormID, StartedAt: h.clock.Now()}
		if err := h.store.Start(ctx, b); err != nil {
			return BackfillProgress{}, err
		}
	}
	p := BackfillProgress{ID: b.ID, Resumed: resumed, FormID: b.FormID, Published: b.Published}
	for _, f := range forms {
		if b.FormID != "" && f.ID() < b.FormID {
			continue // published before the interruption
		}
		after := b.After
		if f.ID() != b.FormID {
			after = nil
		}
		if err := h.backfillForm(ctx, cmd, b, f, after, &p); err != nil {
			return p, err
		}
	}
	return p, h.store.Finish(ctx, b.ID, true, h.clock.Now())
}

// formsOf is the form of a backfill, or every form of every workspace, in ID order (the order
// a resumed backfill skips what it published).
func (h BackfillEventsHandler) formsOf(ctx context.Context, formID string) ([]*form.Form, error) {
	if formID != BackfillAll {
		f, err := h.forms.Find(ctx, formID)
		if errors.Is(err, domain.ErrNotFound) {
			return nil, fmt.Errorf("form %s: no such form (a deleted form has no submissions left to backfill): %w", formID, err)
		}
		if err != nil {
			return nil, err
		}
		return []*form.Form{f}, nil
	}
	wss, err := h.workspaces.List(ctx)
	if err != nil {
		return nil, err
	}
	var all []*form.Form
	for _, w := range wss {
		page := ports.Page{Limit: 500}
		for {
			fs, err := h.forms.List(ctx, w.ID(), nil, page)
			if err != nil {
				return nil, err
			}
			all = append(all, fs...)
			if len(fs) < page.Limit {
				break
			}
			last := fs[len(fs)-1]
			page.After = &ports.Position{CreatedAt: last.CreatedAt(), ID: last.ID()}
		}
	}
	slices.SortFunc(all, func(a, b *form.Form) int { return strings.Compare(a.ID(), b.ID()) })
	return all, nil
}

// backfillForm publishes the snapshots of one form's submissions after after, a batch at a
// time, recording progress once the broker acknowledged each.
func (h BackfillEventsHandler) backfillForm(ctx context.Context, cmd BackfillEvents, b *ports.Backfill, f *form.Form, after *ports.Position,
	p *BackfillProgress) error {
	for {
		subs, err := h.scanner.ListOldestFirst(ctx, f.WorkspaceID(), f.ID(), ports.OldestFirst{Limit: ReplayBatch, After: after})
		if err != nil {
			return err
		}
		if len(subs) == 0 {
			return nil
		}
		if cmd.Wait != nil {
			if err := cmd.Wait(ctx, len(subs)); err != nil {
				return err
			}
		}
		now := h.clock.Now()
		events := make([]event.Event, len(subs))
		for i, s := range subs {
			events[i] = event.ForSubmission(snapshotID(b.ID, s.ID()), event.SubmissionSnapshot, s, now)
		}
		if err := cmd.To.Publish(ctx, events); err != nil {
			return err
		}
		last := subs[len(subs)-1]
		after = &ports.Position{CreatedAt: last.SubmittedAt(), ID: last.ID()}
		b.FormID, b.After, b.Published = f.ID(), after, b.Published+int64(len(subs))
		if err := h.store.Save(ctx, b, h.clock.Now()); err != nil {
			return err
		}
		p.FormID, p.Published = f.ID(), b.Published
		if cmd.Progress != nil {
			cmd.Progress(*p)
		}
		if len(subs) < ReplayBatch {
			return nil
		}
	}
}

// crockford is the alphabet of Formward's IDs.
var crockford = base32.NewEncoding("0123456789ABCDEFGHJKMNPQRSTVWXYZ").WithPadding(base32.NoPadding)

// snapshotID is the event ID of a submission's snapshot in one backfill: the same when a
// resumed backfill publishes it again (a batch sent but not acknowledged), so consumers dedupe
// it; another backfill gives another.
func snapshotID(backfillID, submissionID string) string {
	sum := sha256.Sum256([]byte(backfillID + "/" + submissionID))
	return ports.PrefixEvent + "_" + crockford.EncodeToString(sum[:18])
}

// publish hands the records' events to the transport in one acknowledged call.
func publish(ctx context.Context, to ports.EventPublisher, recs []ports.OutboxRecord) error {
	if len(recs) == 0 {
		return nil
	}
	events := make([]event.Event, len(recs))
	for i, r := range recs {
		events[i] = r.Event
	}
	return to.Publish(ctx, events)
}
