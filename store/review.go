package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Actor is who does something: a signed-in member (UserID set), the local
// owner of a Baton without accounts (UserID empty, not a guest), or a
// guest of a review link (Guest, with the name they typed). Records keep
// the user id and the name as it was then.
type Actor struct {
	UserID string
	Name   string
	Guest  bool
}

// LocalOwnerName is the name of the implicit local owner of a Baton
// without accounts.
const LocalOwnerName = "You"

// MaxGuestNameLen is the longest name a guest may give, in characters.
const MaxGuestNameLen = 80

// Validate trims the actor's name and checks it: 1 to MaxGuestNameLen
// characters without control characters; a guest has no user id.
// Returns an EINVALID *Error saying what to fix.
func (a *Actor) Validate() error {
	a.Name = strings.TrimSpace(a.Name)
	if a.Name == "" {
		if a.Guest {
			return Errorf(EINVALID, "Give your name, so that the team knows who commented.")
		}
		return Errorf(EINVALID, "The author has no name.")
	}
	if n := utf8.RuneCountInString(a.Name); n > MaxGuestNameLen {
		return Errorf(EINVALID, "The name is %d characters long; keep it to %d.", n, MaxGuestNameLen)
	}
	if unsafeText(a.Name) {
		return Errorf(EINVALID, "The name contains control characters.")
	}
	if a.Guest && a.UserID != "" {
		return Errorf(EINVALID, "A guest has no user id.")
	}
	return nil
}

// same reports whether a and b are the same person: the same user, or both
// the local owner. Guests are nobody's equal: they cannot come back as
// themselves.
func (a Actor) same(userID string, guest bool) bool {
	return !a.Guest && !guest && a.UserID == userID
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ReviewState is what a reviewer says of a handoff.
type ReviewState string

// Review states.
const (
	ReviewApproved         ReviewState = "approved"          // approve
	ReviewCommented        ReviewState = "commented"         // approve with comments
	ReviewChangesRequested ReviewState = "changes_requested" // request changes
)

// ParseReviewState checks a review state.
func ParseReviewState(s string) (ReviewState, error) {
	switch st := ReviewState(strings.TrimSpace(s)); st {
	case ReviewApproved, ReviewCommented, ReviewChangesRequested:
		return st, nil
	}
	return "", Errorf(EINVALID, "A review is approved, commented or changes_requested, not %q.", s)
}

// Review is one reviewer's verdict on a handoff at one time.
type Review struct {
	ID        string
	HandoffID string
	Reviewer  Actor
	State     ReviewState
	Body      string // markdown, may be empty
	CreatedAt time.Time
}

// Validate checks the review: a known state, a named reviewer who is not a
// guest, a body of at most MaxCommentLen characters.
func (r *Review) Validate() error {
	if _, err := ParseReviewState(string(r.State)); err != nil {
		return err
	}
	if r.Reviewer.Guest {
		return Errorf(EFORBIDDEN, "Guests comment; only members review.")
	}
	if err := r.Reviewer.Validate(); err != nil {
		return err
	}
	body, err := checkBody(r.Body, false)
	r.Body = body
	return err
}

// ReviewRequest is a request for someone's review of a handoff.
type ReviewRequest struct {
	HandoffID   string
	Reviewer    Actor // a member: UserID set
	RequestedBy Actor
	CreatedAt   time.Time
}

// ReviewerState is a reviewer's latest review, or their pending request.
type ReviewerState struct {
	Reviewer  Actor
	State     ReviewState // "" while requested and not yet reviewed
	Requested bool
	Body      string
	At        time.Time // of the latest review, or of the request
}

// CreateReview records a review of a handoff and its activity. Returns
// ErrNotFound if there is no such handoff, EINVALID for a bad state or
// body, EFORBIDDEN for a guest.
func (db *DB) CreateReview(ctx context.Context, handoffID string, r Review) (*Review, error) {
	r.ID, r.HandoffID, r.CreatedAt = newID(), handoffID, db.now()
	if err := r.Validate(); err != nil {
		return nil, err
	}
	err := db.inTx(ctx, func(tx *txn) error {
		if err := handoffExists(ctx, tx, handoffID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO reviews (id, handoff_id, reviewer_user_id, reviewer_name, state, body, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?)`,
			r.ID, handoffID, nullString(r.Reviewer.UserID), r.Reviewer.Name, r.State, r.Body, formatTime(r.CreatedAt)); err != nil {
			return err
		}
		return addActivity(ctx, tx, handoffID, activityKindOfReview(r.State), r.Reviewer, "", r.CreatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("review handoff %s: %w", handoffID, err)
	}
	return &r, nil
}

func activityKindOfReview(s ReviewState) ActivityKind {
	switch s {
	case ReviewApproved:
		return ActivityApproved
	case ReviewChangesRequested:
		return ActivityChangesRequested
	}
	return ActivityReviewed
}

// RequestReview asks members for their review of a handoff; asking again
// keeps the first request. Every reviewer needs a user id: review requests
// go to members. Returns ErrNotFound if there is no such handoff.
func (db *DB) RequestReview(ctx context.Context, handoffID string, by Actor, reviewers []Actor) error {
	if len(reviewers) == 0 {
		return Errorf(EINVALID, "Choose at least one member to review.")
	}
	for i := range reviewers {
		if reviewers[i].UserID == "" || reviewers[i].Guest {
			return Errorf(EINVALID, "Review can be requested of members only.")
		}
		if err := reviewers[i].Validate(); err != nil {
			return err
		}
	}
	if err := by.Validate(); err != nil {
		return err
	}
	now := db.now()
	err := db.inTx(ctx, func(tx *txn) error {
		if err := handoffExists(ctx, tx, handoffID); err != nil {
			return err
		}
		for _, r := range reviewers {
			res, err := tx.ExecContext(ctx,
				`INSERT INTO review_requests (handoff_id, reviewer_user_id, reviewer_name, requested_by_id, requested_by_name, created_at)
				 VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (handoff_id, reviewer_user_id) DO NOTHING`,
				handoffID, r.UserID, r.Name, nullString(by.UserID), by.Name, formatTime(now))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				if err := addActivity(ctx, tx, handoffID, ActivityReviewRequested, by, r.Name, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("request review of handoff %s: %w", handoffID, err)
	}
	return nil
}

// FindReviewerStates returns, for each person who reviewed the handoff or
// was asked to, their latest state, in the order they were first asked or
// first reviewed.
func (db *DB) FindReviewerStates(ctx context.Context, handoffID string) ([]*ReviewerState, error) {
	rows, err := db.readRows(ctx,
		`SELECT reviewer_user_id, reviewer_name, '' AS state, 1 AS requested, '' AS body, created_at
		 FROM review_requests WHERE handoff_id = ?
		 UNION ALL
		 SELECT COALESCE(reviewer_user_id, ''), reviewer_name, state, 0, body, created_at
		 FROM reviews WHERE handoff_id = ?
		 ORDER BY created_at`, handoffID, handoffID)
	if err != nil {
		return nil, fmt.Errorf("find reviews of handoff %s: %w", handoffID, err)
	}
	defer rows.Close()
	var out []*ReviewerState
	byKey := map[string]*ReviewerState{}
	for rows.Next() {
		var userID, name, state, body, at string
		var requested bool
		if err := rows.Scan(&userID, &name, &state, &requested, &body, &at); err != nil {
			return nil, err
		}
		// The local owner has no id: they are one reviewer, by name.
		key := userID
		if key == "" {
			key = "name:" + name
		}
		rs := byKey[key]
		if rs == nil {
			rs = &ReviewerState{Reviewer: Actor{UserID: userID, Name: name}}
			byKey[key] = rs
			out = append(out, rs)
		}
		if requested {
			rs.Requested = true
			if rs.State == "" {
				rs.At = parseTime(at)
			}
			continue
		}
		rs.State, rs.Body, rs.At = ReviewState(state), body, parseTime(at)
	}
	return out, rows.Err()
}

// ChangesRequested reports whether a reviewer's latest review of the
// handoff asks for changes: "Start planning" then warns.
func ChangesRequested(states []*ReviewerState) bool {
	for _, s := range states {
		if s.State == ReviewChangesRequested {
			return true
		}
	}
	return false
}

// handoffExists returns ErrNotFound unless the handoff exists.
func handoffExists(ctx context.Context, tx *txn, handoffID string) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM handoffs WHERE id = ?`, handoffID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("handoff %s: %w", handoffID, ErrNotFound)
	}
	return err
}
