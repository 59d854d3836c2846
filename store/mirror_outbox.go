package store

import (
	"context"
	"fmt"
	"time"
)

// MirrorItem is an accepted thread handoff waiting in the outbox for the
// PostgreSQL mirror, with how often copying it has failed so far.
type MirrorItem struct {
	Handoff   *ThreadHandoff
	Attempts  int
	LastError string
	QueuedAt  time.Time
}

// FindMirrorOutbox returns up to limit handoffs waiting for the mirror,
// oldest first.
func (db *DB) FindMirrorOutbox(ctx context.Context, limit int) ([]*MirrorItem, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+threadHandoffColumns+`, o.attempts, o.last_error, o.created_at
		 FROM mirror_outbox o JOIN thread_handoffs h ON h.id = o.handoff_id
		 ORDER BY o.created_at, o.handoff_id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("find mirror outbox: %w", err)
	}
	defer rows.Close()
	var out []*MirrorItem
	for rows.Next() {
		var it MirrorItem
		var queued string
		if it.Handoff, err = scanThreadHandoff(rows, &it.Attempts, &it.LastError, &queued); err != nil {
			return nil, fmt.Errorf("find mirror outbox: %w", err)
		}
		it.QueuedAt = parseTime(queued)
		out = append(out, &it)
	}
	return out, rows.Err()
}

// CountMirrorOutbox returns how many handoffs wait for the mirror.
func (db *DB) CountMirrorOutbox(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM mirror_outbox`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count mirror outbox: %w", err)
	}
	return n, nil
}

// DeleteMirrorOutbox removes a handoff from the outbox once the mirror has
// it. Removing one that is not there is not an error: two drains may race.
func (db *DB) DeleteMirrorOutbox(ctx context.Context, handoffID string) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM mirror_outbox WHERE handoff_id = ?`, handoffID); err != nil {
		return fmt.Errorf("delete mirror outbox %s: %w", handoffID, err)
	}
	return nil
}

// NoteMirrorFailure records a failed attempt to copy a handoff to the
// mirror; it stays in the outbox for the next try.
func (db *DB) NoteMirrorFailure(ctx context.Context, handoffID, reason string) error {
	if _, err := db.write.ExecContext(ctx,
		`UPDATE mirror_outbox SET attempts = attempts + 1, last_error = ? WHERE handoff_id = ?`, reason, handoffID); err != nil {
		return fmt.Errorf("note mirror failure %s: %w", handoffID, err)
	}
	return nil
}

// QueueForMirror queues an accepted handoff for the mirror again, as when
// the mirror's table was lost. One that is queued already stays as it is.
// Returns ErrNotFound for an unknown handoff.
func (db *DB) QueueForMirror(ctx context.Context, handoffID string) error {
	_, err := db.write.ExecContext(ctx,
		`INSERT INTO mirror_outbox (handoff_id, created_at) VALUES (?, ?) ON CONFLICT (handoff_id) DO NOTHING`,
		handoffID, formatTime(db.now()))
	if violationOf(err) == foreignKeyViolation {
		return fmt.Errorf("thread handoff %s: %w", handoffID, ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("queue %s for the mirror: %w", handoffID, err)
	}
	return nil
}
