package persistence

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/ports"
)

// Outbox is the relay's view of the outbox table.
//
// On PostgreSQL seq is taken when a row is inserted, not when it commits, so with concurrent
// writers a row may become visible after a higher seq was already read. Pending only returns
// unpublished rows, so a relay that reads from afterSeq 0 (or from the lowest seq it has not
// seen published) never misses one; a relay that only moves afterSeq forward may skip rows.
type Outbox struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.Outbox = (*Outbox)(nil)

// NewOutbox returns the outbox reader; cipher opens the sealed event payloads.
func NewOutbox(db *DB, cipher ports.Cipher) *Outbox { return &Outbox{db: db, cipher: cipher} }

// Pending returns up to limit unpublished events with seq > afterSeq, in seq order.
func (o *Outbox) Pending(ctx context.Context, afterSeq int64, limit int) ([]ports.OutboxRecord, error) {
	if limit <= 0 {
		return nil, nil
	}
	handed := &o.db.committed
	handed.wanted.Store(true)
	var rows []outboxRow
	err := o.db.read(ctx).Select("seq, id, type, workspace_id, form_id, created_at, traceparent, form_version, submission_id").
		Where("published_at IS NULL AND seq > ?", afterSeq).
		Order("seq").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, mapErr("read outbox", err)
	}
	plains := make([][]byte, len(rows))
	var missing []int64
	for i, r := range rows {
		if p, ok := handed.take(r.ID); ok {
			plains[i] = p
		} else {
			missing = append(missing, r.Seq)
		}
	}
	if len(missing) > 0 {
		if err := o.readPayloads(ctx, rows, missing); err != nil {
			return nil, err
		}
	}
	return o.decode(ctx, rows, plains)
}

// readPayloads fills in the sealed payloads of the rows whose seq is listed.
func (o *Outbox) readPayloads(ctx context.Context, rows []outboxRow, seqs []int64) error {
	payload := make(map[int64][]byte, len(seqs))
	for chunk := range slices.Chunk(seqs, 500) {
		var got []outboxRow
		if err := o.db.read(ctx).Select("seq, payload").Where("seq IN ?", chunk).Find(&got).Error; err != nil {
			return mapErr("read outbox", err)
		}
		for _, g := range got {
			payload[g.Seq] = g.Payload
		}
	}
	for i := range rows {
		if p, ok := payload[rows[i].Seq]; ok {
			rows[i].Payload = p
		}
	}
	return nil
}

// records opens and decodes outbox rows.
func (o *Outbox) records(ctx context.Context, rows []outboxRow) ([]ports.OutboxRecord, error) {
	return o.decode(ctx, rows, nil)
}

// decode turns outbox rows into records: plains[i], when set, is row i's payload already open
// (handed over by the committer); the others are opened here.
func (o *Outbox) decode(ctx context.Context, rows []outboxRow, plains [][]byte) ([]ports.OutboxRecord, error) {
	out := make([]ports.OutboxRecord, 0, len(rows))
	for i, r := range rows {
		var (
			e   event.Event
			err error
		)
		if plains != nil && plains[i] != nil {
			e, err = decodeEvent(r, plains[i])
		} else {
			e, err = openEvent(ctx, o.cipher, r)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ports.OutboxRecord{Seq: r.Seq, Event: e})
	}
	return out, nil
}

// openEvent opens and decodes one outbox row into its event.
func openEvent(ctx context.Context, c ports.Cipher, r outboxRow) (event.Event, error) {
	plain, err := c.Open(ctx, r.WorkspaceID, r.Payload, outboxAAD(r.ID))
	if err != nil {
		return event.Event{}, fmt.Errorf("open outbox event %s: %w", r.ID, err)
	}
	return decodeEvent(r, plain)
}

// decodeEvent decodes one outbox row whose payload is open (plain).
func decodeEvent(r outboxRow, plain []byte) (event.Event, error) {
	var data map[string]any
	if err := jsoncodec.Unmarshal(plain, &data); err != nil {
		return event.Event{}, fmt.Errorf("decode outbox event %s: %w", r.ID, err)
	}
	return event.Event{
		ID: r.ID, Type: event.Type(r.Type), WorkspaceID: r.WorkspaceID, FormID: r.FormID,
		OccurredAt: fromMillis(r.CreatedAt), Data: data, TraceParent: emptyIfNull(r.TraceParent),
		FormVersion: zeroIfNull(r.FormVersion), SubmissionID: emptyIfNull(r.SubmissionID),
	}, nil
}

// storedEvents reads the workspace's events named by ids from the outbox, by their unique id.
// An event whose payload was emptied (forgetEvents) or whose row was purged is not in the map.
func storedEvents(ctx context.Context, db *gorm.DB, c ports.Cipher, workspaceID string, ids []string) (map[string]event.Event, error) {
	out := make(map[string]event.Event, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		var rows []outboxRow
		if err := db.Where("id IN ? AND workspace_id = ? AND length(payload) > 0", chunk, workspaceID).Find(&rows).Error; err != nil {
			return nil, mapErr("read events of deliveries", err)
		}
		for _, r := range rows {
			e, err := openEvent(ctx, c, r)
			if err != nil {
				return nil, err
			}
			out[e.ID] = e
		}
	}
	return out, nil
}

// MarkPublished records the broker's acknowledgement; rows already marked keep their time.
//
// Its commit does not wait for the disk (DB.redoableTx): a mark lost in a crash only publishes
// the rows again, which the relay's at-least-once contract allows (consumers dedupe on the
// event ID), and the next capture's durable commit makes it durable anyway. The embedded relay
// marks after nearly every group commit, so a durable mark was a second fsync per capture
// batch, holding SQLite's writer meanwhile.
func (o *Outbox) MarkPublished(ctx context.Context, seqs []int64, at time.Time) error {
	if len(seqs) == 0 {
		return nil
	}
	return o.db.redoableTx(ctx, func(db *gorm.DB) error {
		for chunk := range slices.Chunk(seqs, 500) {
			err := db.Exec("UPDATE outbox SET published_at = ? WHERE published_at IS NULL AND seq IN ?", toMillis(at), chunk).Error
			if err != nil {
				return mapErr("mark outbox published", err)
			}
		}
		return nil
	})
}

// PurgePublished deletes rows published before the given time and returns how many. A row a
// pending webhook delivery still names stays: the delivery's body is rebuilt from it at each
// attempt (see DeliveryRepository); it goes in the first purge after the delivery ends.
//
// SQLite lists the pending deliveries' events once (through the partial index of pending
// deliveries); PostgreSQL anti-joins them (NOT IN over a list larger than work_mem would be
// probed row by row).
func (o *Outbox) PurgePublished(ctx context.Context, before time.Time) (int64, error) {
	pending := "id NOT IN (SELECT event_id FROM deliveries WHERE status = 'pending')"
	if o.db.Dialect() == DialectPostgres {
		pending = "NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = outbox.id AND d.status = 'pending')"
	}
	return o.db.execCount(ctx, "purge outbox", "DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < ? AND "+pending, toMillis(before))
}

// sealedEvent is an outbox row ready to insert: the event's Data is JSON, sealed.
type sealedEvent struct {
	id, typ, workspaceID, formID string
	payload                      []byte
	plain                        []byte // payload's plain JSON, handed to this process's relay after the commit
	createdAt                    int64
	traceParent                  *string // the W3C trace context of the writing request, or NULL
	formVersion                  *int    // the submission's form version, or NULL
	submissionID                 *string // the submission the event is about, or NULL
}

func sealEvent(ctx context.Context, c ports.Cipher, e event.Event) (sealedEvent, error) {
	plain, err := jsoncodec.Marshal(e.Data)
	if err != nil {
		return sealedEvent{}, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	sealed, err := c.Seal(ctx, e.WorkspaceID, plain, outboxAAD(e.ID))
	if err != nil {
		return sealedEvent{}, fmt.Errorf("seal event %s: %w", e.ID, err)
	}
	return sealedEvent{id: e.ID, typ: string(e.Type), workspaceID: e.WorkspaceID, formID: e.FormID,
		payload: sealed, plain: plain, createdAt: toMillis(e.OccurredAt), traceParent: eventTraceParent(ctx, e), formVersion: nullIfZero(e.FormVersion), submissionID: nullIfEmpty(e.SubmissionID)}, nil
}

// insertEvents writes sealed events with one multi-row INSERT, in the order given.
func insertEvents(tx *gorm.DB, events []sealedEvent) error {
	if len(events) == 0 {
		return nil
	}
	q, args := eventsInsert(events)
	return tx.Exec(q, args...).Error
}

// eventsInsert is the multi-row INSERT of sealed events (at least one), in the order given.
func eventsInsert(events []sealedEvent) (string, []any) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO outbox (id, type, workspace_id, form_id, payload, created_at, traceparent, form_version, submission_id) VALUES ")
	args := make([]any, 0, len(events)*9)
	for i, e := range events {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(?,?,?,?,?,?,?,?,?)")
		args = append(args, e.id, e.typ, e.workspaceID, e.formID, e.payload, e.createdAt, e.traceParent, e.formVersion, e.submissionID)
	}
	return sb.String(), args
}

func outboxAAD(eventID string) []byte { return []byte("outbox/" + eventID) }

type outboxRow struct {
	Seq         int64  `gorm:"column:seq;primaryKey"`
	ID          string `gorm:"column:id"`
	Type        string `gorm:"column:type"`
	WorkspaceID string `gorm:"column:workspace_id"`
	FormID      string `gorm:"column:form_id"`
	Payload     []byte `gorm:"column:payload"`
	CreatedAt   int64  `gorm:"column:created_at"`
	PublishedAt *int64 `gorm:"column:published_at"`

	TraceParent  *string `gorm:"column:traceparent"` // W3C trace context, NULL when not traced
	FormVersion  *int    `gorm:"column:form_version"`
	SubmissionID *string `gorm:"column:submission_id"`
}

func (outboxRow) TableName() string { return "outbox" }

// nullIfZero is NULL for 0 (an event without a form version).
func nullIfZero(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}

func zeroIfNull(v *int) int {
	if v == nil {
		return 0
	}
	return *v
}

// forgetEvents empties, in the caller's transaction, the payload of the workspace's outbox
// events about the submissions named (ids; list is their jsonIDs, see idList), and marks the
// unpublished ones published: a deleted submission's answers leave the outbox with it, and its
// events are never sent, nor kept for a replay. On SQLite a probe of the index skips the update
// when no event names a submission in the range (the retention job's old submissions).
func forgetEvents(tx *gorm.DB, workspaceID string, ids []string, list string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	if tx.Dialector.Name() == DialectSQLite {
		var found []int
		if err := tx.Raw("SELECT 1 FROM outbox WHERE submission_id BETWEEN ? AND ? LIMIT 1", slices.Min(ids), slices.Max(ids)).Scan(&found).Error; err != nil {
			return mapErr("find events of submissions", err)
		}
		if len(found) == 0 {
			return nil
		}
	}
	return mapErr("forget events of submissions", tx.Exec("UPDATE outbox SET payload = ?, published_at = COALESCE(published_at, ?) WHERE workspace_id = ? AND submission_id IN ("+idList(tx)+")",
		[]byte{}, toMillis(now), workspaceID, list).Error)
}

// forgetFormEvents is forgetEvents for every submission of a form (a form's deletion).
func forgetFormEvents(tx *gorm.DB, workspaceID, formID string, now time.Time) error {
	return mapErr("forget events of form submissions", tx.Exec("UPDATE outbox SET payload = ?, published_at = COALESCE(published_at, ?) WHERE workspace_id = ? AND form_id = ? AND submission_id IS NOT NULL",
		[]byte{}, toMillis(now), workspaceID, formID).Error)
}
