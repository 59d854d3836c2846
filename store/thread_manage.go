package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ThreadUpdate is the input of UpdateThread: only the fields that are set
// change.
type ThreadUpdate struct {
	Title    *string
	Archived *bool
}

// Validate normalises the title and checks its length; a title of only
// spaces is refused rather than replaced, since renaming is deliberate.
func (in *ThreadUpdate) Validate() error {
	if in.Title == nil {
		return nil
	}
	title := strings.Join(strings.Fields(*in.Title), " ")
	if title == "" {
		return Errorf(EINVALID, "The title is empty. Give the brainstorm a name.")
	}
	if n := utf8.RuneCountInString(title); n > MaxTitleLen {
		return Errorf(EINVALID, "The title is %d characters long; keep it to %d.", n, MaxTitleLen)
	}
	in.Title = &title
	return nil
}

// UpdateThread renames, archives or unarchives a thread and returns it.
// Archiving hides it from the list of brainstorms; nothing is removed.
// Returns ErrInvalid for a bad title and ErrNotFound for an unknown (or
// deleted) thread.
func (db *DB) UpdateThread(ctx context.Context, id string, in ThreadUpdate) (*Thread, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	err := db.inTx(ctx, func(tx *txn) error {
		var exists int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM threads WHERE id = ? AND deleted_at IS NULL`, id).Scan(&exists)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("thread %s: %w", id, ErrNotFound)
		} else if err != nil {
			return err
		}
		if in.Title != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE threads SET title = ? WHERE id = ?`, *in.Title, id); err != nil {
				return err
			}
		}
		if in.Archived != nil {
			// Archiving keeps the time it was first archived.
			if _, err := tx.ExecContext(ctx,
				`UPDATE threads SET archived_at = CASE WHEN ? <> 0 THEN COALESCE(archived_at, ?) END WHERE id = ?`,
				*in.Archived, formatTime(db.now()), id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update thread %s: %w", id, err)
	}
	return db.FindThreadByID(ctx, id)
}

// DeleteThread deletes a thread with its messages and drafts (its handoff's
// decisions, files, risks and extraction runs). If the handoff was ever
// frozen, its snapshots and the plans written from them stay: the thread
// then remains as a tombstone (DeletedAt set, no messages), so that they can
// say they came from a deleted brainstorm. Returns ErrNotFound for an
// unknown or already deleted thread.
func (db *DB) DeleteThread(ctx context.Context, id string) error {
	err := db.inTx(ctx, func(tx *txn) error {
		var frozen bool
		err := tx.QueryRowContext(ctx,
			`SELECT EXISTS (SELECT 1 FROM snapshots s JOIN handoffs h ON h.id = s.handoff_id WHERE h.thread_id = t.id)
			 FROM threads t WHERE t.id = ? AND t.deleted_at IS NULL`, id).Scan(&frozen)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("thread %s: %w", id, ErrNotFound)
		} else if err != nil {
			return err
		}
		if !frozen {
			// Messages, the handoff and its items go with the thread (ON DELETE CASCADE).
			_, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE id = ?`, id)
			return err
		}
		for _, q := range []string{
			`DELETE FROM decisions WHERE handoff_id IN (SELECT id FROM handoffs WHERE thread_id = ?)`,
			`DELETE FROM file_refs WHERE handoff_id IN (SELECT id FROM handoffs WHERE thread_id = ?)`,
			`DELETE FROM risks WHERE handoff_id IN (SELECT id FROM handoffs WHERE thread_id = ?)`,
			`DELETE FROM extraction_runs WHERE handoff_id IN (SELECT id FROM handoffs WHERE thread_id = ?)`,
			`UPDATE handoffs SET status = 'frozen', summary = '' WHERE thread_id = ?`,
			`DELETE FROM messages WHERE thread_id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE threads SET deleted_at = ? WHERE id = ?`, formatTime(db.now()), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete thread %s: %w", id, err)
	}
	return nil
}

// FindThreadByIDIncludingDeleted is FindThreadByID that also returns a
// deleted thread's tombstone (DeletedAt set), for the snapshots and plans
// that outlive it.
func (db *DB) FindThreadByIDIncludingDeleted(ctx context.Context, id string) (*Thread, error) {
	t, err := scanThread(db.readRow(ctx, `SELECT `+threadColumns+`, 0 FROM threads WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("thread %s: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find thread %s: %w", id, err)
	}
	return t, nil
}
