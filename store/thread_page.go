package store

import (
	"context"
)

// FindThreadWithReadyState returns a thread, as FindThreadByID does, with
// its ReadyState, as FindReadyState does, in one statement: the brainstorm
// page needs both on every view.
func (db *DB) FindThreadWithReadyState(ctx context.Context, id string) (*Thread, ReadyState, error) {
	var r ReadyState
	t, err := scanThread(scanWith{db.readRow(ctx,
		`SELECT `+threadColumns+`, 0,
		        COALESCE((SELECT h.id FROM handoffs h WHERE h.thread_id = threads.id), ''),
		        (SELECT COUNT(*) FROM decisions d JOIN handoffs h ON h.id = d.handoff_id
		          WHERE h.thread_id = threads.id AND d.pinned_message_id IS NOT NULL),
		        COALESCE((SELECT r.status FROM extraction_runs r JOIN handoffs h ON h.id = r.handoff_id
		          WHERE h.thread_id = threads.id ORDER BY r.started_at DESC, r.id DESC LIMIT 1), ''),
		        COALESCE((SELECT r.error FROM extraction_runs r JOIN handoffs h ON h.id = r.handoff_id
		          WHERE h.thread_id = threads.id ORDER BY r.started_at DESC, r.id DESC LIMIT 1), '')
		 FROM threads WHERE id = ? AND deleted_at IS NULL`, id),
		[]any{&r.HandoffID, &r.Pins, &r.LastRunStatus, &r.LastRunError}})
	if err != nil {
		return nil, ReadyState{}, findErr(err, "thread %s", id)
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
