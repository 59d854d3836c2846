package store

import (
	"context"
	"strconv"
	"strings"
)

// threadPageQuery reads a thread (threadColumns and a count of 0), then its
// handoff as "id|activity_rev" ("" when it has none), then the columns in
// extra.
func threadPageQuery(extra string) string {
	return `SELECT ` + threadColumns + `, 0,
	        COALESCE((SELECT h.id || '|' || h.activity_rev FROM handoffs h WHERE h.thread_id = threads.id), '')` + extra + `
	 FROM threads WHERE id = ? AND deleted_at IS NULL`
}

var (
	// threadWithHandoff reads a thread and its handoff's revision.
	threadWithHandoff = threadPageQuery(``)
	// threadWithReadyState reads them and the rest of the thread's
	// ReadyState: pins, and the last extraction's status and error.
	threadWithReadyState = threadPageQuery(`,
	        (SELECT COUNT(*) FROM decisions d JOIN handoffs h ON h.id = d.handoff_id
	          WHERE h.thread_id = threads.id AND d.pinned_message_id IS NOT NULL),
	        COALESCE((SELECT r.status FROM extraction_runs r JOIN handoffs h ON h.id = r.handoff_id
	          WHERE h.thread_id = threads.id ORDER BY r.started_at DESC, r.id DESC LIMIT 1), ''),
	        COALESCE((SELECT r.error FROM extraction_runs r JOIN handoffs h ON h.id = r.handoff_id
	          WHERE h.thread_id = threads.id ORDER BY r.started_at DESC, r.id DESC LIMIT 1), '')`)
)

// FindThreadWithReadyState returns a thread, as FindThreadByID does, with
// its ReadyState, as FindReadyState does: the brainstorm page needs both on
// every view. The ready state (pins, the last extraction) is kept under
// its handoff's activity_rev, read with the thread, and read again, in the
// same statement as the thread, only when the handoff changed since.
func (db *DB) FindThreadWithReadyState(ctx context.Context, id string) (*Thread, ReadyState, error) {
	var handoff string
	t, err := scanThread(scanWith{db.readRow(ctx, threadWithHandoff, id), []any{&handoff}})
	if err != nil {
		return nil, ReadyState{}, findErr(err, "thread %s", id)
	}
	handoffID, rev := splitHandoffRev(handoff)
	if handoffID == "" {
		return t, ReadyState{}, nil
	}
	if r, ok := db.ready.get(handoffID, rev); ok {
		return t, r, nil
	}

	var r ReadyState
	t, err = scanThread(scanWith{db.readRow(ctx, threadWithReadyState, id), []any{&handoff, &r.Pins, &r.LastRunStatus, &r.LastRunError}})
	if err != nil {
		return nil, ReadyState{}, findErr(err, "thread %s", id)
	}
	// Read with the state, this revision is the one to keep it under.
	if r.HandoffID, rev = splitHandoffRev(handoff); r.HandoffID != "" {
		db.ready.put(r.HandoffID, rev, r)
	}
	return t, r, nil
}

// splitHandoffRev splits a handoff's "id|activity_rev"; rev is -1, which
// no kept value has, when it cannot be read.
func splitHandoffRev(s string) (id string, rev int64) {
	id, revText, _ := strings.Cut(s, "|")
	rev, err := strconv.ParseInt(revText, 10, 64)
	if err != nil {
		return id, -1
	}
	return id, rev
}

// scanWith is a scanner that reads extra columns after what its caller
// asks for.
type scanWith struct {
	s     scanner
	extra []any
}

func (w scanWith) Scan(dest ...any) error { return w.s.Scan(append(dest, w.extra...)...) }
