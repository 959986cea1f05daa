package persistence

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// FormRepository stores forms. Form definitions are plain JSON; the events an update emits
// go to the outbox sealed, in the same transaction.
type FormRepository struct {
	db     *DB
	cipher ports.Cipher
}

var _ ports.FormRepository = (*FormRepository)(nil)

// NewFormRepository returns the form repository; cipher seals the outbox payloads of updates.
func NewFormRepository(db *DB, cipher ports.Cipher) *FormRepository {
	return &FormRepository{db: db, cipher: cipher}
}

// Create stores f; an existing ID gives domain.ErrConflict.
func (r *FormRepository) Create(ctx context.Context, f *form.Form, events ...audit.Event) error {
	row, err := formFromDomain(f)
	if err != nil {
		return err
	}
	if row.Settings, err = encodeSettings(ctx, r.cipher, f); err != nil {
		return err
	}
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return mapErr("create form", err)
		}
		if err := writeFormVersion(tx, row, actorOf(events)); err != nil {
			return err
		}
		return writeAudit(tx, events)
	})
}

// FindByRef returns the workspace's form with this ref, or domain.ErrNotFound (also when only
// another workspace has a form with it).
func (r *FormRepository) FindByRef(ctx context.Context, workspaceID, ref string) (*form.Form, error) {
	var row formRow
	if err := r.db.read(ctx).Where("workspace_id = ? AND ref = ?", workspaceID, ref).Take(&row).Error; err != nil {
		return nil, mapErr("find form by ref", err)
	}
	return r.formToDomain(ctx, row)
}

// List returns up to page.Limit forms of the workspace, newest first (created_at, id), strictly
// after page.After, optionally of one status.
func (r *FormRepository) List(ctx context.Context, workspaceID string, status *form.Status, page ports.Page) ([]*form.Form, error) {
	q := r.db.read(ctx).Where("workspace_id = ?", workspaceID)
	if status != nil {
		q = q.Where("status = ?", string(*status))
	}
	rows, err := newestFirst[formRow](q, page, "created_at", "forms")
	if err != nil {
		return nil, err
	}
	return allToDomain(ctx, rows, r.formToDomain)
}

// Update loads and locks the form, runs change, and stores the form and the effects change
// returns (see ports.Effects) in one transaction. When change fails nothing is written and its error is returned
// as is. On PostgreSQL the row lock is FOR NO KEY UPDATE: it serialises updates of the form
// without blocking submissions, whose foreign key check takes FOR KEY SHARE on the same row.
// On SQLite the write transaction (BEGIN IMMEDIATE) already serialises writers.
func (r *FormRepository) Update(ctx context.Context, workspaceID, id string, change func(*form.Form) (ports.Effects, error)) (*form.Form, error) {
	// The data key is created before the lock: inside the transaction it would need a second
	// writer on SQLite.
	if err := r.cipher.EnsureKey(ctx, workspaceID); err != nil {
		return nil, fmt.Errorf("update form: %w", err)
	}
	// The version row names who changed the fields: the actor of the change's audit events.
	var actor *audit.Actor
	var before int
	recorded := func(f *form.Form) (ports.Effects, error) {
		before = f.Version()
		fx, err := change(f)
		actor = actorOf(fx.Audit)
		return fx, err
	}
	return updateLocked(ctx, r.db, r.cipher, lockNoKeyUpdate, "form", r.formToDomain, recorded, func(tx *gorm.DB, f *form.Form) error {
		next, err := formFromDomain(f)
		if err != nil {
			return err
		}
		if next.Settings, err = encodeSettings(ctx, r.cipher, f); err != nil {
			return err
		}
		if err := tx.Exec("UPDATE forms SET ref = ?, name = ?, description = ?, status = ?, fields = ?, settings = ?, removed_fields = ?, version = ?, updated_at = ? WHERE workspace_id = ? AND id = ?",
			next.Ref, next.Name, next.Description, next.Status, next.Fields, next.Settings, next.RemovedFields, next.Version, next.UpdatedAt, workspaceID, id).Error; err != nil {
			return mapErr("update form", err)
		}
		if next.Version == before {
			return nil
		}
		return writeFormVersion(tx, next, actor)
	}, "workspace_id = ? AND id = ?", workspaceID, id)
}

var _ ports.FormVersionRepository = (*FormRepository)(nil)

// ListVersions returns the versions of the workspace's form, newest first.
func (r *FormRepository) ListVersions(ctx context.Context, workspaceID, formID string, before, limit int) ([]ports.FormVersion, error) {
	var rows []formVersionRow
	err := r.db.read(ctx).Raw(`SELECT v.form_id, v.version, v.fields, v.created_by, v.created_at FROM form_versions v
		JOIN forms f ON f.id = v.form_id WHERE f.workspace_id = ? AND v.form_id = ? AND (? = 0 OR v.version < ?)
		ORDER BY v.version DESC LIMIT ?`, workspaceID, formID, before, before, limit).Scan(&rows).Error
	if err != nil {
		return nil, mapErr("list form versions", err)
	}
	if len(rows) == 0 && before == 0 {
		return nil, domain.ErrNotFound
	}
	out := make([]ports.FormVersion, 0, len(rows))
	for _, row := range rows {
		v, err := row.toPort()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// GetVersion returns one version of the workspace's form, or domain.ErrNotFound.
func (r *FormRepository) GetVersion(ctx context.Context, workspaceID, formID string, version int) (ports.FormVersion, error) {
	var rows []formVersionRow
	err := r.db.read(ctx).Raw(`SELECT v.form_id, v.version, v.fields, v.created_by, v.created_at FROM form_versions v
		JOIN forms f ON f.id = v.form_id WHERE f.workspace_id = ? AND v.form_id = ? AND v.version = ?`, workspaceID, formID, version).Scan(&rows).Error
	if err != nil {
		return ports.FormVersion{}, mapErr("get form version", err)
	}
	if len(rows) == 0 {
		return ports.FormVersion{}, domain.ErrNotFound
	}
	return rows[0].toPort()
}

func (row formVersionRow) toPort() (ports.FormVersion, error) {
	fields, err := decodeFields(row.FormID, row.Fields)
	if err != nil {
		return ports.FormVersion{}, err
	}
	v := ports.FormVersion{Version: row.Version, Fields: fields, CreatedAt: fromMillis(row.CreatedAt)}
	if row.CreatedBy != "" {
		var a actorJSON
		if err := jsoncodec.Unmarshal([]byte(row.CreatedBy), &a); err != nil {
			return ports.FormVersion{}, fmt.Errorf("decode author of form %s version %d: %w", row.FormID, row.Version, err)
		}
		v.CreatedBy = &audit.Actor{Type: a.Type, ID: a.ID, Name: a.Name}
	}
	return v, nil
}

// formVersionRow is one immutable version of a form's fields.
type formVersionRow struct {
	FormID  string `gorm:"column:form_id;primaryKey"`
	Version int    `gorm:"column:version;primaryKey"`
	Fields  string `gorm:"column:fields"`
	// CreatedBy is the actor as JSON ({"type","id","name"}); empty when unknown.
	CreatedBy string `gorm:"column:created_by"`
	CreatedAt int64  `gorm:"column:created_at"`
}

func (formVersionRow) TableName() string { return "form_versions" }

// actorJSON is the stored shape of a version's author.
type actorJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// actorOf is the actor of the first audit event, or nil.
func actorOf(events []audit.Event) *audit.Actor {
	if len(events) == 0 {
		return nil
	}
	a := events[0].Actor
	return &a
}

// writeFormVersion stores the form row's fields as its version, in the caller's transaction.
func writeFormVersion(tx *gorm.DB, row formRow, actor *audit.Actor) error {
	by := ""
	if actor != nil {
		b, err := jsoncodec.Marshal(actorJSON{Type: actor.Type, ID: actor.ID, Name: actor.Name})
		if err != nil {
			return fmt.Errorf("encode form version author: %w", err)
		}
		by = string(b)
	}
	v := formVersionRow{FormID: row.ID, Version: row.Version, Fields: row.Fields, CreatedBy: by, CreatedAt: row.UpdatedAt}
	return mapErr("create form version", tx.Create(&v).Error)
}

// Delete removes the form, its submissions (with the stored responses of the requests that
// created them), its counters, its workflows and the webhooks bound to it, and records the
// tombstones of the form and of each of its submissions, in one transaction, or returns
// domain.ErrNotFound. Locking the form row first waits for capture
// transactions that hold its key (PostgreSQL); submissions they wrote then go with it, with
// their tombstones.
func (r *FormRepository) Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error {
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		if tx.Dialector.Name() == DialectPostgres {
			// Lock the form first: capture transactions holding its key finish, later ones
			// wait, so every submission that the deletion removes gets its tombstone.
			if err := tx.Exec("SELECT id FROM forms WHERE workspace_id = ? AND id = ? FOR UPDATE", workspaceID, id).Error; err != nil {
				return mapErr("lock form", err)
			}
		}
		now := time.Now()
		if err := writeSubmissionTombstones(tx, workspaceID, id, now); err != nil {
			return err
		}
		if err := forgetFormEvents(tx, workspaceID, id, now); err != nil {
			return err
		}
		if err := changedRow("delete form", tx.Exec("DELETE FROM forms WHERE workspace_id = ? AND id = ?", workspaceID, id)); err != nil {
			return err
		}
		// The foreign keys cascade; these make it explicit and independent of that.
		if err := tx.Exec("DELETE FROM submissions WHERE workspace_id = ? AND form_id = ?", workspaceID, id).Error; err != nil {
			return mapErr("delete form submissions", err)
		}
		if err := tx.Exec("DELETE FROM webhooks WHERE workspace_id = ? AND form_id = ?", workspaceID, id).Error; err != nil {
			return mapErr("delete form webhooks", err)
		}
		if err := tx.Exec("DELETE FROM workflows WHERE workspace_id = ? AND form_id = ?", workspaceID, id).Error; err != nil {
			return mapErr("delete form workflows", err)
		}
		if err := tx.Exec("DELETE FROM form_versions WHERE form_id = ?", id).Error; err != nil {
			return mapErr("delete form versions", err)
		}
		if err := tx.Exec("DELETE FROM drafts WHERE workspace_id = ? AND form_id = ?", workspaceID, id).Error; err != nil {
			return mapErr("delete form's drafts", err)
		}
		if err := tx.Exec("DELETE FROM form_counters WHERE form_id = ?", id).Error; err != nil {
			return mapErr("delete form counters", err)
		}
		if err := forgetOrphanedResponses(tx, workspaceID); err != nil {
			return err
		}
		if err := writeTombstones(tx, []ports.Tombstone{{Kind: ports.TombstoneForm, ID: id, WorkspaceID: workspaceID, DeletedAt: now}}); err != nil {
			return err
		}
		return writeAudit(tx, events)
	})
}

// SubmissionCounts sums the counter shards of each form of the workspace. Every requested ID
// is in the result; forms without submissions (or of another workspace) count 0.
func (r *FormRepository) SubmissionCounts(ctx context.Context, workspaceID string, formIDs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(formIDs))
	for _, id := range formIDs {
		out[id] = 0
	}
	if len(formIDs) == 0 {
		return out, nil
	}
	type countRow struct {
		FormID string `gorm:"column:form_id"`
		N      int64  `gorm:"column:n"`
	}
	var rows []countRow
	for chunk := range slices.Chunk(formIDs, 500) {
		err := r.db.read(ctx).Raw(`SELECT c.form_id AS form_id, CAST(SUM(c.n) AS BIGINT) AS n
			FROM form_counters c JOIN forms f ON f.id = c.form_id
			WHERE f.workspace_id = ? AND c.form_id IN ?
			GROUP BY c.form_id`, workspaceID, chunk).Scan(&rows).Error
		if err != nil {
			return nil, mapErr("count submissions", err)
		}
		for _, row := range rows {
			out[row.FormID] = row.N
		}
	}
	return out, nil
}

// LastSubmissionTimes reads the newest submitted_at of each form of the workspace with one
// query per 500 forms: a correlated subquery per form that the (form_id, submitted_at DESC)
// index answers with one lookup, so a form with a million submissions costs what an empty one
// does (a MAX with GROUP BY would read every index entry of the forms).
func (r *FormRepository) LastSubmissionTimes(ctx context.Context, workspaceID string, formIDs []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(formIDs))
	if len(formIDs) == 0 {
		return out, nil
	}
	type lastRow struct {
		FormID string `gorm:"column:form_id"`
		Last   *int64 `gorm:"column:last_at"`
	}
	for chunk := range slices.Chunk(formIDs, 500) {
		var rows []lastRow
		err := r.db.read(ctx).Raw(`SELECT f.id AS form_id,
			(SELECT s.submitted_at FROM submissions s WHERE s.form_id = f.id ORDER BY s.submitted_at DESC LIMIT 1) AS last_at
			FROM forms f WHERE f.workspace_id = ? AND f.id IN ?`, workspaceID, chunk).Scan(&rows).Error
		if err != nil {
			return nil, mapErr("read last submission times", err)
		}
		for _, row := range rows {
			if row.Last != nil {
				out[row.FormID] = fromMillis(*row.Last)
			}
		}
	}
	return out, nil
}

type formRow struct {
	ID          string  `gorm:"column:id;primaryKey"`
	WorkspaceID string  `gorm:"column:workspace_id"`
	Ref         *string `gorm:"column:ref"`
	Name        string  `gorm:"column:name"`
	Description *string `gorm:"column:description"`
	Status      string  `gorm:"column:status"`
	Fields      string  `gorm:"column:fields"`
	Settings    string  `gorm:"column:settings"`
	// RemovedFields is the JSON list of the fields removed from the form; empty means none.
	RemovedFields string `gorm:"column:removed_fields"`
	Version       int    `gorm:"column:version"`
	CreatedAt     int64  `gorm:"column:created_at"`
	UpdatedAt     int64  `gorm:"column:updated_at"`
}

func (formRow) TableName() string { return "forms" }

// fieldJSON is a field's stored shape. Form definitions are not secret and stay readable.
type fieldJSON struct {
	ID          string      `json:"id"`
	Label       string      `json:"label"`
	Type        string      `json:"type"`
	Required    bool        `json:"required,omitempty"`
	Options     []string    `json:"options,omitempty"`
	Placeholder *string     `json:"placeholder,omitempty"`
	Help        *string     `json:"help,omitempty"`
	Accept      []string    `json:"accept,omitempty"`
	MaxFileSize int64       `json:"max_file_size,omitempty"`
	Key         string      `json:"key,omitempty"`
	Hidden      bool        `json:"hidden,omitempty"`
	Page        int         `json:"page,omitempty"`
	ShowIf      *showIfJSON `json:"show_if,omitempty"`
	// Translations are the field's text in the form's other languages (formlanguages.go).
	Translations map[string]fieldTranslationJSON `json:"translations,omitempty"`
	Scores       []float64                       `json:"scores,omitempty"`
}

// showIfJSON is a field's stored display rule.
type showIfJSON struct {
	Any        bool                 `json:"any,omitempty"`
	Conditions []fieldConditionJSON `json:"conditions"`
}

type fieldConditionJSON struct {
	FieldID  string `json:"field_id"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
	Kind     string `json:"kind"`
}

func showIfToJSON(r *form.ShowIf) *showIfJSON {
	if r == nil {
		return nil
	}
	out := &showIfJSON{Any: r.Any, Conditions: make([]fieldConditionJSON, len(r.Conditions))}
	for i, c := range r.Conditions {
		out.Conditions[i] = fieldConditionJSON(c)
	}
	return out
}

func showIfFromJSON(r *showIfJSON) *form.ShowIf {
	if r == nil {
		return nil
	}
	out := &form.ShowIf{Any: r.Any, Conditions: make([]form.Condition, len(r.Conditions))}
	for i, c := range r.Conditions {
		out.Conditions[i] = form.Condition(c)
	}
	return out
}

func formFromDomain(f *form.Form) (formRow, error) {
	fields := f.Fields()
	out := make([]fieldJSON, len(fields))
	for i, fl := range fields {
		out[i] = fieldJSON{ID: fl.ID, Label: fl.Label, Type: string(fl.Type), Required: fl.Required, Options: fl.Options, Placeholder: fl.Placeholder, Help: fl.Help,
			Accept: fl.Accept, MaxFileSize: fl.MaxFileBytes, Key: fl.Key, Hidden: fl.Hidden, Page: fl.Page, ShowIf: showIfToJSON(fl.ShowIf), Scores: fl.Scores}
		out[i].Translations = fieldTranslationsToJSON(fl.Translations)
	}
	b, err := jsoncodec.Marshal(out)
	if err != nil {
		return formRow{}, fmt.Errorf("encode form fields: %w", err)
	}
	removed, err := encodeRemovedFields(f.RemovedFields())
	if err != nil {
		return formRow{}, err
	}
	return formRow{ID: f.ID(), WorkspaceID: f.WorkspaceID(), Ref: f.Ref(), Name: f.Name(), Description: f.Description(),
		Status: string(f.Status()), Fields: string(b), RemovedFields: removed, Version: f.Version(), CreatedAt: toMillis(f.CreatedAt()), UpdatedAt: toMillis(f.UpdatedAt())}, nil
}

// removedFieldJSON is a removed field's stored shape; like the fields, it is not secret.
type removedFieldJSON struct {
	ID        string `json:"id"`
	Key       string `json:"key,omitempty"`
	Label     string `json:"label"`
	Type      string `json:"type"`
	RemovedAt int64  `json:"removed_at"`
}

// encodeRemovedFields stores the removed fields as JSON; none is the empty string (the column's
// default), so a form that never lost a field costs nothing to read.
func encodeRemovedFields(removed []form.RemovedField) (string, error) {
	if len(removed) == 0 {
		return "", nil
	}
	out := make([]removedFieldJSON, len(removed))
	for i, r := range removed {
		out[i] = removedFieldJSON{ID: r.ID, Key: r.Key, Label: r.Label, Type: string(r.Type), RemovedAt: toMillis(r.RemovedAt)}
	}
	b, err := jsoncodec.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode removed fields: %w", err)
	}
	return string(b), nil
}

func decodeRemovedFields(formID, raw string) ([]form.RemovedField, error) {
	if raw == "" {
		return nil, nil
	}
	var stored []removedFieldJSON
	if err := jsoncodec.Unmarshal([]byte(raw), &stored); err != nil {
		return nil, fmt.Errorf("decode removed fields of form %s: %w", formID, err)
	}
	out := make([]form.RemovedField, len(stored))
	for i, s := range stored {
		out[i] = form.RemovedField{ID: s.ID, Key: s.Key, Label: s.Label, Type: form.FieldType(s.Type), RemovedAt: fromMillis(s.RemovedAt)}
	}
	return out, nil
}

func decodeFields(formID, raw string) ([]form.Field, error) {
	var stored []fieldJSON
	if err := jsoncodec.Unmarshal([]byte(raw), &stored); err != nil {
		return nil, fmt.Errorf("decode fields of form %s: %w", formID, err)
	}
	fields := make([]form.Field, len(stored))
	for i, s := range stored {
		fields[i] = form.Field{ID: s.ID, Label: s.Label, Type: form.FieldType(s.Type), Required: s.Required, Options: s.Options, Placeholder: s.Placeholder, Help: s.Help,
			Accept: s.Accept, MaxFileBytes: s.MaxFileSize, Key: s.Key, Hidden: s.Hidden, Page: s.Page, ShowIf: showIfFromJSON(s.ShowIf), Scores: s.Scores}
		fields[i].Translations = fieldTranslationsFromJSON(s.Translations)
	}
	return fields, nil
}
