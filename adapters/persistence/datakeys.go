package persistence

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// DataKeyRepository stores workspace data keys, wrapped by a master key.
type DataKeyRepository struct{ db *DB }

var _ ports.DataKeyRepository = (*DataKeyRepository)(nil)

// NewDataKeyRepository returns the data key repository.
func NewDataKeyRepository(db *DB) *DataKeyRepository { return &DataKeyRepository{db: db} }

// Current returns the newest data key of the workspace, or domain.ErrNotFound.
func (r *DataKeyRepository) Current(ctx context.Context, workspaceID string) (ports.WrappedKey, error) {
	return current(r.db.read(ctx), workspaceID)
}

func current(db *gorm.DB, workspaceID string) (ports.WrappedKey, error) {
	var row dataKeyRow
	err := db.Where("workspace_id = ?", workspaceID).Order("created_at DESC, id DESC").Limit(1).Take(&row).Error
	if err != nil {
		return ports.WrappedKey{}, mapErr("current data key", err)
	}
	return row.toPort(), nil
}

// Get returns one data key by ID, or domain.ErrNotFound.
func (r *DataKeyRepository) Get(ctx context.Context, id string) (ports.WrappedKey, error) {
	var row dataKeyRow
	if err := r.db.read(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return ports.WrappedKey{}, mapErr("get data key", err)
	}
	return row.toPort(), nil
}

// Insert stores the first data key of a workspace. When the workspace already has a key
// (another request or process won the race) nothing is inserted and that current key is
// returned instead, so every caller ends up sealing with the same key. The check and the insert
// are one transaction, serialised per workspace (BEGIN IMMEDIATE on SQLite, a transaction
// advisory lock on PostgreSQL). Inserting an ID that exists gives domain.ErrConflict.
//
// It deliberately does not take this process's SQLite write slot: a Cipher may call it while
// a repository holds the slot, and then SQLite's busy timeout bounds the wait instead of a
// deadlock.
func (r *DataKeyRepository) Insert(ctx context.Context, k ports.WrappedKey) (ports.WrappedKey, error) {
	var out ports.WrappedKey
	err := r.db.gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if r.db.dialect == DialectPostgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "data_keys/"+k.WorkspaceID).Error; err != nil {
				return mapErr("lock data keys", err)
			}
		}
		existing, err := current(tx, k.WorkspaceID)
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		row := dataKeyFromPort(k)
		if err := tx.Create(&row).Error; err != nil {
			return mapErr("insert data key", err)
		}
		out = row.toPort()
		return nil
	})
	return out, err
}

// All lists every data key, oldest first, for master key rotation.
func (r *DataKeyRepository) All(ctx context.Context) ([]ports.WrappedKey, error) {
	var rows []dataKeyRow
	if err := r.db.read(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, mapErr("list data keys", err)
	}
	out := make([]ports.WrappedKey, len(rows))
	for i, row := range rows {
		out[i] = row.toPort()
	}
	return out, nil
}

// OnePerMasterKey returns one data key for each master key that wraps stored data keys (the
// one with the smallest ID), for the check every process makes at start: one key per master
// key proves that key, so the check costs as many unwraps as there are master keys in use,
// however many workspaces there are.
func (r *DataKeyRepository) OnePerMasterKey(ctx context.Context) ([]ports.WrappedKey, error) {
	var rows []dataKeyRow
	err := r.db.read(ctx).Where("id IN (SELECT MIN(id) FROM data_keys GROUP BY master_key_id)").Order("master_key_id").Find(&rows).Error
	if err != nil {
		return nil, mapErr("list master keys in use", err)
	}
	out := make([]ports.WrappedKey, len(rows))
	for i, row := range rows {
		out[i] = row.toPort()
	}
	return out, nil
}

// Rewrap replaces a key's wrapping after master key rotation; unknown IDs give domain.ErrNotFound.
func (r *DataKeyRepository) Rewrap(ctx context.Context, id, masterKeyID string, wrapped []byte) error {
	return r.db.write(ctx, func(db *gorm.DB) error {
		return changedRow("rewrap data key", db.Exec("UPDATE data_keys SET master_key_id = ?, wrapped = ? WHERE id = ?", masterKeyID, wrapped, id))
	})
}

type dataKeyRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	MasterKeyID string `gorm:"column:master_key_id"`
	Wrapped     []byte `gorm:"column:wrapped"`
	CreatedAt   int64  `gorm:"column:created_at"`
}

func (dataKeyRow) TableName() string { return "data_keys" }

func dataKeyFromPort(k ports.WrappedKey) dataKeyRow {
	return dataKeyRow{ID: k.ID, WorkspaceID: k.WorkspaceID, MasterKeyID: k.MasterKeyID, Wrapped: k.Wrapped, CreatedAt: toMillis(k.CreatedAt)}
}

func (r dataKeyRow) toPort() ports.WrappedKey {
	return ports.WrappedKey{ID: r.ID, WorkspaceID: r.WorkspaceID, MasterKeyID: r.MasterKeyID, Wrapped: r.Wrapped, CreatedAt: fromMillis(r.CreatedAt)}
}
