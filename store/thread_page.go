package store

import (
	"context"
	"strconv"
	"strings"
)

// FindThreadWithReadyState returns a thread, as FindThreadByID does, with
// its ReadyState, as FindReadyState does: the brainstorm page needs both on
// every view. The ready state (pins, the last extraction) is kept under
// its handoff's activity_rev, read with the thread, and read again, in the
// same statement as the thread, only when the handoff changed since.
func (db *DB) FindThreadWithReadyState(ctx context.Context, id string) (*Thread, ReadyState, error) {
	var handoff string // the handoff's id and activity_rev, "id|rev", or ""
	t, err := scanThread(scanWith{db.readRow(ctx,
		`SELECT `+threadColumns+`, 0,
		        COALESCE((SELECT h.id || '|' || h.activity_rev FROM handoffs h WHERE h.thread_id = threads.id), '')
		 FROM threads WHERE id = ? AND deleted_at IS NULL`, id), []any{&handoff}})
	if err != nil {
		return nil, ReadyState{}, findErr(err, "thread %s", id)
	}
	if handoff == "" {
		return t, ReadyState{}, nil
	}
	handoffID, rev, _ := strings.Cut(handoff, "|")
	if n, err := strconv.ParseInt(rev, 10, 64); err == nil {
		if r, ok := db.ready.get(handoffID, n); ok {
			return t, r, nil
		}
	}
	return db.findThreadWithReadyState(ctx, id)
}

// findThreadWithReadyState reads a thread with its ReadyState in one
// statement, and keeps the ready state under the handoff's activity_rev
// read with it.
func (db *DB) findThreadWithReadyState(ctx context.Context, id string) (*Thread, ReadyState, error) {
	var (
		r   ReadyState
		rev int64
	)
	t, err := scanThread(scanWith{db.readRow(ctx,
		`SELECT `+threadColumns+`, 0,
		        COALESCE((SELECT h.id FROM handoffs h WHERE h.thread_id = threads.id), ''),
		        COALESCE((SELECT h.activity_rev FROM handoffs h WHERE h.thread_id = threads.id), -1),
		        (SELECT COUNT(*) FROM decisions d JOIN handoffs h ON h.id = d.handoff_id
		          WHERE h.thread_id = threads.id AND d.pinned_message_id IS NOT NULL),
		        COALESCE((SELECT r.status FROM extraction_runs r JOIN handoffs h ON h.id = r.handoff_id
		          WHERE h.thread_id = threads.id ORDER BY r.started_at DESC, r.id DESC LIMIT 1), ''),
		        COALESCE((SELECT r.error FROM extraction_runs r JOIN handoffs h ON h.id = r.handoff_id
		          WHERE h.thread_id = threads.id ORDER BY r.started_at DESC, r.id DESC LIMIT 1), '')
		 FROM threads WHERE id = ? AND deleted_at IS NULL`, id),
		[]any{&r.HandoffID, &rev, &r.Pins, &r.LastRunStatus, &r.LastRunError}})
	if err != nil {
		return nil, ReadyState{}, findErr(err, "thread %s", id)
	}
	if r.HandoffID != "" {
		db.ready.put(r.HandoffID, rev, r)
	}
	return t, r, nil
}

// scanWith is a scanner that reads extra columns after what its caller
// asks for.
type scanWith struct {
	s     scanner
	extra []any
}

func (w scanWith) Scan(dest ...any) error { return w.s.Scan(append(dest, w.extra...)...) }
