package store

import (
	"context"
	"fmt"
)

// ReviewPresence says which of a handoff's lists on the review screen have
// anything in them. Most handoffs have no comments, reviews, links,
// snapshots or plans yet: knowing it from one statement spares the screen
// a query per empty list. A false is a promise: the list's own query would
// have returned nothing (each is asked of the same table for the same
// handoff, and no more narrowly).
type ReviewPresence struct {
	Comments       bool // CountComments, FindComments
	Reviews        bool // FindReviewerStates: review requests or reviews
	Shares         bool // FindShareLinks of the handoff
	Snapshots      bool // FindSnapshots
	Plans          bool // FindPlans of the handoff
	ExtractionRuns bool // FindLatestExtractionRun
	// ActivityRev is the revision of the handoff's timeline, for
	// FindActivityAt; -1 when the handoff is not there.
	ActivityRev int64
}

// FindReviewPresence returns a handoff's ReviewPresence in one statement.
func (db *DB) FindReviewPresence(ctx context.Context, handoffID string) (ReviewPresence, error) {
	var p ReviewPresence
	err := db.readRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM comments WHERE handoff_id = ?),
		EXISTS (SELECT 1 FROM review_requests WHERE handoff_id = ?) OR EXISTS (SELECT 1 FROM reviews WHERE handoff_id = ?),
		EXISTS (SELECT 1 FROM share_links WHERE handoff_id = ?),
		EXISTS (SELECT 1 FROM snapshots WHERE handoff_id = ?),
		EXISTS (SELECT 1 FROM plans WHERE handoff_id = ?),
		EXISTS (SELECT 1 FROM extraction_runs WHERE handoff_id = ?),
		COALESCE((SELECT activity_rev FROM handoffs WHERE id = ?), -1)`,
		handoffID, handoffID, handoffID, handoffID, handoffID, handoffID, handoffID, handoffID).
		Scan(&p.Comments, &p.Reviews, &p.Shares, &p.Snapshots, &p.Plans, &p.ExtractionRuns, &p.ActivityRev)
	if err != nil {
		return p, fmt.Errorf("find review lists of handoff %s: %w", handoffID, err)
	}
	return p, nil
}
