package store

import (
	"context"
	"fmt"
)

// ReopenHandoff makes a frozen handoff a draft again, so that people can
// change course; its snapshots and plans stay as they were. If version is
// not zero it must be the handoff's current version (else ErrConflict).
// Returns ErrNotFound for an unknown handoff.
func (db *DB) ReopenHandoff(ctx context.Context, id string, version int) (Change, error) {
	ch := Change{ID: id}
	err := db.inTx(ctx, func(tx *txn) (err error) {
		ch.Version, err = touchHandoff(ctx, tx, id, version, db.now())
		return err
	})
	if err != nil {
		return Change{}, fmt.Errorf("reopen handoff %s: %w", id, err)
	}
	return ch, nil
}
