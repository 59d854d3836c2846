package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// ActivityKind says what happened to a handoff.
type ActivityKind string

// Activity kinds. Extracted, edited, frozen and planned are read from the
// tables that record them; the others are logged as they happen.
const (
	ActivityExtracted        ActivityKind = "extracted"
	ActivityEdited           ActivityKind = "edited"
	ActivityFrozen           ActivityKind = "frozen"
	ActivityPlanned          ActivityKind = "planned"
	ActivityCommented        ActivityKind = "commented"
	ActivityResolved         ActivityKind = "resolved"
	ActivityReopened         ActivityKind = "reopened"
	ActivityApproved         ActivityKind = "approved"
	ActivityReviewed         ActivityKind = "reviewed" // approved with comments
	ActivityChangesRequested ActivityKind = "changes_requested"
	ActivityReviewRequested  ActivityKind = "review_requested"
	ActivityShared           ActivityKind = "shared"
)

// Activity is one entry of a handoff's timeline. Actor.Name is empty where
// the store does not know who did it (until accounts record authorship of
// edits, freezes and plans).
type Activity struct {
	Kind   ActivityKind
	Actor  Actor
	Detail string // what it was about: "D2", "Plan v3", a path
	At     time.Time
}

func addActivity(ctx context.Context, tx *txn, handoffID string, kind ActivityKind, by Actor, detail string, at time.Time) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO activity (id, handoff_id, kind, actor_user_id, actor_name, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		newID(), handoffID, kind, nullString(by.UserID), by.Name, detail, formatTime(at))
	return err
}

// FindActivity returns a handoff's timeline, newest first, at most limit
// entries (50 when limit is zero): successful extractions, edited items,
// freezes and plans from their own tables, comments, reviews and links
// from the activity log. limit is written into the SQL (limitSQL): pass a
// constant.
func (db *DB) FindActivity(ctx context.Context, handoffID string, limit int) ([]*Activity, error) {
	var rev int64
	err := db.readRow(ctx, `SELECT COALESCE((SELECT activity_rev FROM handoffs WHERE id = ?), -1)`, handoffID).Scan(&rev)
	if err != nil {
		return nil, fmt.Errorf("find activity of handoff %s: %w", handoffID, err)
	}
	return db.FindActivityAt(ctx, handoffID, rev, limit)
}

// FindActivityAt is FindActivity for a handoff whose ActivityRev
// (ReviewPresence) was rev when read before: when nothing on the timeline
// changed since, it answers from what it read last time.
func (db *DB) FindActivityAt(ctx context.Context, handoffID string, rev int64, limit int) ([]*Activity, error) {
	if limit <= 0 {
		limit = 50
	}
	key := handoffID + "/" + strconv.Itoa(limit)
	kept, ok := db.timelines.get(key, rev)
	if !ok {
		var err error
		if kept, err = db.findActivity(ctx, handoffID, limit); err != nil {
			return nil, fmt.Errorf("find activity of handoff %s: %w", handoffID, err)
		}
		if rev >= 0 { // read after rev, the entries are at least that new
			db.timelines.put(key, rev, kept)
		}
	}
	return pointers(slices.Clone(kept)), nil
}

// findActivity reads a handoff's timeline.
func (db *DB) findActivity(ctx context.Context, handoffID string, limit int) ([]Activity, error) {
	rows, err := db.readRows(ctx, `
		SELECT kind, COALESCE(actor_user_id, ''), actor_name, detail, created_at FROM activity WHERE handoff_id = ?1
		UNION ALL
		SELECT 'extracted', '', '', added || ' items', finished_at FROM extraction_runs
		 WHERE handoff_id = ?1 AND status = 'succeeded' AND finished_at IS NOT NULL
		UNION ALL
		SELECT 'edited', '', '', 'decision', updated_at FROM decisions WHERE handoff_id = ?1 AND source = 'user-edited'
		UNION ALL
		SELECT 'edited', '', '', path, updated_at FROM file_refs WHERE handoff_id = ?1 AND source = 'user-edited'
		UNION ALL
		SELECT 'edited', '', '', 'risk', updated_at FROM risks WHERE handoff_id = ?1 AND source = 'user-edited'
		UNION ALL
		SELECT 'frozen', '', '', substr(sha256, 1, 12), created_at FROM snapshots WHERE handoff_id = ?1
		UNION ALL
		SELECT 'planned', '', '', 'Plan v' || version, created_at FROM plans WHERE handoff_id = ?1
		ORDER BY 5 DESC`+limitSQL(limit), handoffID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Activity{}
	for rows.Next() {
		var a Activity
		var at string
		if err := rows.Scan(&a.Kind, &a.Actor.UserID, &a.Actor.Name, &a.Detail, &at); err != nil {
			return nil, err
		}
		a.At = parseTime(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// LinkPlanReviewComments records which review comments a plan was asked to
// address ("Plan again with review comments").
func (db *DB) LinkPlanReviewComments(ctx context.Context, planID string, commentIDs []string) error {
	if len(commentIDs) == 0 {
		return nil
	}
	return db.inTx(ctx, func(tx *txn) error {
		for _, id := range commentIDs {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO plan_review_comments (plan_id, comment_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, planID, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// FindPlanReviewComments returns the threads a plan was asked to address,
// in the order they were written, with their replies.
func (db *DB) FindPlanReviewComments(ctx context.Context, planID string) ([]*Comment, error) {
	rows, err := db.readRows(ctx, `SELECT comment_id FROM plan_review_comments WHERE plan_id = ?`, planID)
	if err != nil {
		return nil, fmt.Errorf("find review comments of plan %s: %w", planID, err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	var out []*Comment
	for _, id := range ids {
		c, err := db.FindCommentByID(ctx, id)
		if err != nil {
			continue // deleted since
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Comment) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}
