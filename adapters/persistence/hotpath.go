package persistence

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/form"
)

// Every API request authenticates and every capture loads its form, so these two reads skip
// gorm's callback chain and run as statements prepared once per connection by database/sql.
// The profile of the capture benchmark showed gorm's query building and reflection costing
// more than SQLite's own work for these point lookups.
const (
	hotKeyQuery  = `SELECT id, workspace_id, name, scope, secret_hash, created_at, revoked_at FROM api_keys WHERE id = ?`
	hotFormQuery = `SELECT id, workspace_id, name, description, status, fields, settings, created_at, updated_at FROM forms WHERE workspace_id = ? AND id = ?`
	// hotPublicFormQuery is the public form's lookup: the form ID alone, as the respondent's URL has it.
	hotPublicFormQuery = `SELECT id, workspace_id, name, description, status, fields, settings, created_at, updated_at FROM forms WHERE id = ?`
)

type hotStatements struct {
	once       sync.Once
	err        error
	key        *sql.Stmt
	form       *sql.Stmt
	publicForm *sql.Stmt
}

func (d *DB) hot(ctx context.Context) (*hotStatements, error) {
	h := &d.hotStmts
	h.once.Do(func() {
		if h.key, h.err = d.sqlDB.PrepareContext(ctx, d.rebind(hotKeyQuery)); h.err != nil {
			return
		}
		if h.form, h.err = d.sqlDB.PrepareContext(ctx, d.rebind(hotFormQuery)); h.err != nil {
			return
		}
		h.publicForm, h.err = d.sqlDB.PrepareContext(ctx, d.rebind(hotPublicFormQuery))
	})
	if h.err != nil {
		return nil, fmt.Errorf("prepare hot-path statements: %w", h.err)
	}
	return h, nil
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
	if d.hotStmts.key != nil {
		_ = d.hotStmts.key.Close()
	}
	if d.hotStmts.form != nil {
		_ = d.hotStmts.form.Close()
	}
	if d.hotStmts.publicForm != nil {
		_ = d.hotStmts.publicForm.Close()
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
	err = h.key.QueryRowContext(ctx, id).Scan(&row.ID, &row.WorkspaceID, &row.Name, &row.Scope, &row.SecretHash, &row.CreatedAt, &row.RevokedAt)
	if err != nil {
		return nil, mapErr("get api key", err)
	}
	return row.toDomain(), nil
}

// Get returns the form of the workspace. Parsed field lists are reused while the stored
// definition is byte-for-byte the same, so a popular form is not decoded on every capture.
func (r *FormRepository) Get(ctx context.Context, workspaceID, id string) (*form.Form, error) {
	h, err := r.db.hot(ctx)
	if err != nil {
		return nil, err
	}
	var row formRow
	err = h.form.QueryRowContext(ctx, workspaceID, id).Scan(&row.ID, &row.WorkspaceID, &row.Name, &row.Description,
		&row.Status, &row.Fields, &row.Settings, &row.CreatedAt, &row.UpdatedAt)
	if err != nil {
		return nil, mapErr("get form", err)
	}
	return r.formToDomain(ctx, row)
}

// Find returns the form with this ID in any workspace, for the public form URL, or domain.ErrNotFound.
func (r *FormRepository) Find(ctx context.Context, id string) (*form.Form, error) {
	h, err := r.db.hot(ctx)
	if err != nil {
		return nil, err
	}
	var row formRow
	err = h.publicForm.QueryRowContext(ctx, id).Scan(&row.ID, &row.WorkspaceID, &row.Name, &row.Description,
		&row.Status, &row.Fields, &row.Settings, &row.CreatedAt, &row.UpdatedAt)
	if err != nil {
		return nil, mapErr("find form", err)
	}
	return r.formToDomain(ctx, row)
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
