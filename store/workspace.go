package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Workspace groups threads and the memory they build up.
type Workspace struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

func (db *DB) ensureDefaultWorkspace(ctx context.Context) (string, error) {
	id := newID()
	var got string
	err := db.inTx(ctx, func(tx *txn) error {
		err := tx.QueryRowContext(ctx, `SELECT id FROM workspaces ORDER BY created_at LIMIT 1`).Scan(&got)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		got = id
		_, err = tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)`,
			id, "Default", formatTime(db.now()))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("default workspace: %w", err)
	}
	return got, nil
}

// FindWorkspaceByID returns a workspace, or ErrNotFound.
func (db *DB) FindWorkspaceByID(ctx context.Context, id string) (*Workspace, error) {
	var w Workspace
	var created string
	err := db.read.QueryRowContext(ctx, `SELECT id, name, created_at FROM workspaces WHERE id = ?`, id).
		Scan(&w.ID, &w.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("workspace %s: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find workspace %s: %w", id, err)
	}
	w.CreatedAt = parseTime(created)
	return &w, nil
}
