package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// FindLatestSnapshot returns the newest snapshot of a handoff of the
// workspace (the default one when empty), or, when handoffID is empty, the
// newest snapshot of any of its handoffs. Returns ErrNotFound if there is
// none: no such handoff in the workspace, or nothing frozen yet.
func (db *DB) FindLatestSnapshot(ctx context.Context, workspaceID, handoffID string) (*Snapshot, error) {
	q := `SELECT s.id, s.handoff_id, s.payload, s.sha256, s.created_at
		FROM snapshots s JOIN handoffs h ON h.id = s.handoff_id
		WHERE h.workspace_id = ?`
	args := []any{db.workspace(workspaceID)}
	if handoffID != "" {
		q, args = q+` AND h.id = ?`, append(args, handoffID)
	}
	sn, err := scanSnapshot(db.read.QueryRowContext(ctx, q+` ORDER BY s.created_at DESC, s.id DESC LIMIT 1`, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("latest snapshot: %w", ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find latest snapshot: %w", err)
	}
	return sn, nil
}

// ResolveWorkspace returns workspaceID, or the default workspace's ID when it is
// empty: the workspace a call with that ID works in.
func (db *DB) ResolveWorkspace(workspaceID string) string { return db.workspace(workspaceID) }
