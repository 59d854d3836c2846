package store

import (
	"context"
	"fmt"
)

// ThreadHandoffs are the thread handoffs a brainstorm page shows: the one
// that started the thread and the latest one out of it, each with the
// title of the thread at its other end.
type ThreadHandoffs struct {
	// In started the thread; nil if nothing did. ParentTitle is the title
	// of the thread it came from, "" if that thread was deleted.
	In          *ThreadHandoff
	ParentTitle string
	// Out is the latest handoff out of the thread; nil if there is none.
	// ChildTitle is the title of the thread it started, "" if that thread
	// was deleted.
	Out        *ThreadHandoff
	ChildTitle string
}

// FindThreadHandoffsOf returns a thread's ThreadHandoffs, as
// FindThreadHandoffByChild, FindLastThreadHandoff and FindThreadByID for
// the other ends would, in one statement: the page reads them on every
// view.
func (db *DB) FindThreadHandoffsOf(ctx context.Context, threadID string) (ThreadHandoffs, error) {
	var out ThreadHandoffs
	rows, err := db.readRows(ctx,
		`SELECT `+threadHandoffColumns+`, 0, COALESCE(t.title, '')
		 FROM thread_handoffs h LEFT JOIN threads t ON t.id = h.parent_thread_id AND t.deleted_at IS NULL
		 WHERE h.child_thread_id = ?
		 UNION ALL
		 SELECT `+threadHandoffColumns+`, 1, COALESCE(t.title, '')
		 FROM thread_handoffs h LEFT JOIN threads t ON t.id = h.child_thread_id AND t.deleted_at IS NULL
		 WHERE h.id = (SELECT id FROM thread_handoffs WHERE parent_thread_id = ? ORDER BY created_at DESC, id DESC LIMIT 1)`,
		threadID, threadID)
	if err != nil {
		return out, fmt.Errorf("find thread handoffs of %s: %w", threadID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind int
		var title string
		h, err := scanThreadHandoff(rows, &kind, &title)
		if err != nil {
			return out, fmt.Errorf("find thread handoffs of %s: %w", threadID, err)
		}
		if kind == 0 {
			out.In, out.ParentTitle = h, title
		} else {
			out.Out, out.ChildTitle = h, title
		}
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("find thread handoffs of %s: %w", threadID, err)
	}
	return out, nil
}
