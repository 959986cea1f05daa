package persistence

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// Every API request authenticates and every capture loads its form, so these two reads skip
// gorm's callback chain and run as statements prepared once per connection by database/sql.
// The profile of the capture benchmark showed gorm's query building and reflection costing
// more than SQLite's own work for these point lookups.
const (
	// hotKeyQuery reads the whole key: without last_used_at the key would always look unused and
	// every request would write it (MarkUsed is meant for once a minute per key).
	hotKeyQuery = `SELECT id, workspace_id, name, scope, secret_hash, created_by_type, created_by_id, created_by_name, created_at, last_used_at, revoked_at FROM api_keys WHERE id = ?`
	// hotKeyFormQuery is hotKeyQuery and the form's row in one round trip, for a request about one
	// form (ports.ReadAhead): the form of the key's own workspace, NULLs when there is none.
	hotKeyFormQuery = `SELECT k.id, k.workspace_id, k.name, k.scope, k.secret_hash, k.created_by_type, k.created_by_id, k.created_by_name, k.created_at, k.last_used_at, k.revoked_at,
 f.id, f.workspace_id, f.name, f.description, f.status, f.fields, f.settings, f.removed_fields, f.version, f.ref, f.created_at, f.updated_at
 FROM api_keys k LEFT JOIN forms f ON f.id = ? AND f.workspace_id = k.workspace_id WHERE k.id = ?`
	// hotFormEpochQuery reads SQLite's count of forms writes (formcache.go).
	hotFormEpochQuery = `SELECT n FROM form_epoch WHERE id = 1`
	// hotPublicFormQuery reads a form by its ID alone, as the respondent's URL has it (IDs are
	// unique across workspaces: Get checks the row's workspace).
	hotPublicFormQuery = `SELECT id, workspace_id, name, description, status, fields, settings, removed_fields, version, ref, created_at, updated_at FROM forms WHERE id = ?`
)

// hotStatements are prepared on first use and kept once all are prepared. A failed prepare
// is not remembered: the next request tries again, so one failure (the database briefly away,
// or migrations not yet applied) never disables the hot path until a restart. Preparing runs
// under the request's context values but not its cancellation, so a client that hung up first
// cannot fail the statements every later request shares.
type hotStatements struct {
	mu    sync.Mutex
	ready atomic.Pointer[preparedHot]
}

type preparedHot struct {
	formEpoch  *sql.Stmt // SQLite only (formcache.go)
	key        *sql.Stmt
	keyForm    *sql.Stmt
	publicForm *sql.Stmt
}

func (d *DB) hot(ctx context.Context) (*preparedHot, error) {
	if p := d.hotStmts.ready.Load(); p != nil {
		return p, nil
	}
	h := &d.hotStmts
	h.mu.Lock()
	defer h.mu.Unlock()
	if p := h.ready.Load(); p != nil {
		return p, nil
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	p := &preparedHot{}
	var err error
	for _, s := range []struct {
		dst   **sql.Stmt
		query string
	}{{&p.key, hotKeyQuery}, {&p.keyForm, hotKeyFormQuery}, {&p.publicForm, hotPublicFormQuery}, {&p.formEpoch, hotFormEpochQuery}} {
		if s.query == hotFormEpochQuery && d.dialect != DialectSQLite {
			continue
		}
		if *s.dst, err = d.sqlDB.PrepareContext(pctx, d.rebind(s.query)); err != nil {
			p.close()
			return nil, fmt.Errorf("prepare hot-path statements: %w", err)
		}
	}
	h.ready.Store(p)
	return p, nil
}

func (p *preparedHot) close() {
	for _, st := range []*sql.Stmt{p.key, p.keyForm, p.publicForm, p.formEpoch} {
		if st != nil {
			_ = st.Close()
		}
	}
}

// rebind turns ? placeholders into PostgreSQL's $n.
func (d *DB) rebind(q string) string {
	if d.dialect != DialectPostgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (d *DB) closeHot() {
	d.hotStmts.mu.Lock()
	defer d.hotStmts.mu.Unlock()
	if p := d.hotStmts.ready.Swap(nil); p != nil {
		p.close()
	}
}

// Get returns the key by ID, revoked or not. It reads the row on every call, so a revocation
// by another process counts from the next request.
func (r *APIKeyRepository) Get(ctx context.Context, id string) (*apikey.Key, error) {
	h, err := r.db.hot(ctx)
	if err != nil {
		return nil, err
	}
	var row apiKeyRow
	keyCols := []any{&row.ID, &row.WorkspaceID, &row.Name, &row.Scope, &row.SecretHash, &row.CreatedByType, &row.CreatedByID,
		&row.CreatedByName, &row.CreatedAt, &row.LastUsedAt, &row.RevokedAt}
	ra := ports.ReadAheadFrom(ctx)
	if ra == nil || ra.FormID == "" || !utf8.ValidString(ra.FormID) || strings.IndexByte(ra.FormID, 0) >= 0 {
		if err := h.key.QueryRowContext(ctx, id).Scan(keyCols...); err != nil {
			return nil, mapErr("get api key", err)
		}
		return row.toDomain(), nil
	}
	var f nullFormRow
	if err := h.keyForm.QueryRowContext(ctx, ra.FormID, id).Scan(append(keyCols, f.columns()...)...); err != nil {
		return nil, mapErr("get api key", err)
	}
	if fr, ok := f.row(); ok {
		ra.Form = fr
	}
	return row.toDomain(), nil
}

// nullFormRow is a formRow read through a LEFT JOIN: every column may be NULL.
type nullFormRow struct {
	id, workspaceID, name, status, fields, settings, removedFields sql.NullString
	description, ref                                               sql.NullString
	version, createdAt, updatedAt                                  sql.NullInt64
}

func (f *nullFormRow) columns() []any {
	return []any{&f.id, &f.workspaceID, &f.name, &f.description, &f.status, &f.fields, &f.settings, &f.removedFields, &f.version, &f.ref, &f.createdAt, &f.updatedAt}
}

func (f *nullFormRow) row() (formRow, bool) {
	if !f.id.Valid {
		return formRow{}, false
	}
	r := formRow{ID: f.id.String, WorkspaceID: f.workspaceID.String, Name: f.name.String, Status: f.status.String, Fields: f.fields.String,
		Settings: f.settings.String, RemovedFields: f.removedFields.String, Version: int(f.version.Int64), CreatedAt: f.createdAt.Int64, UpdatedAt: f.updatedAt.Int64}
	if f.description.Valid {
		r.Description = &f.description.String
	}
	if f.ref.Valid {
		r.Ref = &f.ref.String
	}
	return r, true
}

// Get returns the form of the workspace. Parsed field lists are reused while the stored
// definition is byte-for-byte the same, so a popular form is not decoded on every capture.
func (r *FormRepository) Get(ctx context.Context, workspaceID, id string) (*form.Form, error) {
	h, err := r.db.hot(ctx)
	if err != nil {
		return nil, err
	}
	if ra := ports.ReadAheadFrom(ctx); ra != nil {
		// read with the caller's key (APIKeyRepository.Get), for this workspace: used once
		if row, ok := ra.Form.(formRow); ok && row.ID == id && row.WorkspaceID == workspaceID {
			ra.Form = nil
			return r.formToDomain(ctx, row)
		}
	}
	row, err := r.row(ctx, h, "get form", id)
	if err != nil {
		return nil, err
	}
	if row.WorkspaceID != workspaceID {
		return nil, mapErr("get form", sql.ErrNoRows)
	}
	return r.formToDomain(ctx, row)
}

// Find returns the form with this ID in any workspace, for the public form URL, or domain.ErrNotFound.
func (r *FormRepository) Find(ctx context.Context, id string) (*form.Form, error) {
	h, err := r.db.hot(ctx)
	if err != nil {
		return nil, err
	}
	row, err := r.row(ctx, h, "find form", id)
	if err != nil {
		return nil, err
	}
	return r.formToDomain(ctx, row)
}

// row reads the forms row with this ID (a failure mapped as what): on SQLite from the rows kept
// under form_epoch while no forms row was written since (formcache.go).
func (r *FormRepository) row(ctx context.Context, h *preparedHot, what, id string) (formRow, error) {
	epoch, keep, err := r.db.formEpoch(ctx, h)
	if err != nil {
		return formRow{}, err
	}
	if keep {
		if row, ok := r.db.forms.get(id, epoch); ok {
			return row, nil
		}
	}
	var row formRow
	err = h.publicForm.QueryRowContext(ctx, id).Scan(&row.ID, &row.WorkspaceID, &row.Name, &row.Description,
		&row.Status, &row.Fields, &row.Settings, &row.RemovedFields, &row.Version, &row.Ref, &row.CreatedAt, &row.UpdatedAt)
	if err != nil {
		return formRow{}, mapErr(what, err)
	}
	if keep {
		r.db.forms.put(row, epoch)
	}
	return row, nil
}

// fieldsCache maps a form ID to its last decoded field list and the stored text it came from.
// It is only an optimisation: a different stored text is always decoded again.
type fieldsCache struct {
	mu sync.RWMutex
	m  map[string]cachedFields
}

type cachedFields struct {
	raw    string
	fields []form.Field
}

const maxCachedForms = 10000

func (c *fieldsCache) get(formID, raw string) ([]form.Field, error) {
	c.mu.RLock()
	hit, ok := c.m[formID]
	c.mu.RUnlock()
	if ok && hit.raw == raw {
		return hit.fields, nil
	}
	fields, err := decodeFields(formID, raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedForms {
		c.m = make(map[string]cachedFields)
	}
	c.m[formID] = cachedFields{raw: raw, fields: fields}
	c.mu.Unlock()
	return fields, nil
}
