package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxThreadSummaryChars is the longest summary, in characters, a person may
// accept after editing it.
const MaxThreadSummaryChars = 4000

// ThreadSummarySchemaVersion is the schema_version of ThreadSummary JSON.
const ThreadSummarySchemaVersion = 1

// ThreadSummary is what a thread handoff says about its parent thread: the
// summary_json of an accepted handoff, and of its preview (where the child
// is not known yet).
type ThreadSummary struct {
	SchemaVersion  int            `json:"schema_version"`
	HandoffID      string         `json:"handoff_id"`
	WorkspaceID    string         `json:"workspace_id"`
	ParentThreadID string         `json:"parent_thread_id"`
	ChildThreadID  string         `json:"child_thread_id"`
	Title          string         `json:"title"`
	Body           []SummaryPoint `json:"body"`
	TLDR           string         `json:"tldr"`
	Model          string         `json:"model"`
	TokensUsed     int64          `json:"tokens_used"`
	CreatedAt      time.Time      `json:"created_at"`
}

// SummaryPoint is one bullet of a summary, with the IDs of the messages it
// was drawn from.
type SummaryPoint struct {
	// Kind groups the bullet: decision, question, file, risk, next or point.
	Kind    string   `json:"kind"`
	Text    string   `json:"text"`
	Sources []string `json:"sources"`
}

// Kinds of summary points, in the order a summary shows them.
const (
	PointDecision = "decision"
	PointQuestion = "question"
	PointFile     = "file"
	PointRisk     = "risk"
	PointNext     = "next"
	PointOther    = "point"
)

// ThreadHandoff is an accepted thread handoff: the summary that links a
// parent thread to the child thread it continues in.
type ThreadHandoff struct {
	ID             string
	WorkspaceID    string
	ParentThreadID string
	ChildThreadID  string
	Title          string
	SummaryJSON    string
	SummaryMD      string
	Model          string
	ResponseID     string // the summarising model call's, if a model wrote it
	TokensUsed     int64
	// Pending and CleanupRequired are true until the child's first reply
	// is complete: until then its model calls carry the summary.
	Pending         bool
	CleanupRequired bool
	LastCleanupAt   time.Time // zero until the cleanup
	CreatedAt       time.Time
}

// ThreadHandoffAccept is the input of AcceptThreadHandoff.
type ThreadHandoffAccept struct {
	// ID is the handoff's, chosen when its preview was made.
	ID             string
	ParentThreadID string
	// Summary is the preview's summary; its title names the child thread.
	// The IDs, the workspace and the time are filled in on accept.
	Summary ThreadSummary
	// SummaryMD is the markdown the child's first call gets, as the person
	// accepted it (edited or not).
	SummaryMD  string
	ResponseID string
	// Mirror queues the summary for the PostgreSQL mirror in the same
	// transaction.
	Mirror bool
}

// Validate normalises the title and the markdown and checks them: the
// title as a thread's, the markdown not blank and at most
// MaxThreadSummaryChars. Returns an EINVALID *Error saying what to fix.
func (in *ThreadHandoffAccept) Validate() error {
	t := Thread{Title: in.Summary.Title}
	if err := t.Validate(); err != nil {
		return err
	}
	in.Summary.Title = t.Title
	in.SummaryMD = strings.TrimSpace(strings.ReplaceAll(in.SummaryMD, "\r\n", "\n"))
	if in.SummaryMD == "" {
		return Errorf(EINVALID, "The summary is empty. Write what the new thread should know, or decline the handoff.")
	}
	if n := utf8.RuneCountInString(in.SummaryMD); n > MaxThreadSummaryChars {
		return Errorf(EINVALID, "The summary is %d characters long; keep it to %d.", n, MaxThreadSummaryChars)
	}
	if in.ID == "" || in.ParentThreadID == "" {
		return Errorf(EINVALID, "The handoff names no preview or no thread.")
	}
	return nil
}

// AcceptThreadHandoff creates the child thread of a handoff and stores the
// handoff, in one transaction. Accepting the same handoff again returns the
// stored one with created false: a double click or a second tab yields one
// child. Returns ErrInvalid for a bad title or summary, ErrNotFound for an
// unknown parent thread, and ErrConflict if the ID belongs to a handoff of
// another thread.
func (db *DB) AcceptThreadHandoff(ctx context.Context, in ThreadHandoffAccept) (h *ThreadHandoff, created bool, err error) {
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	now := db.now()
	err = db.inTx(ctx, func(tx *txn) error {
		existing, err := scanThreadHandoff(tx.QueryRowContext(ctx, threadHandoffByID, in.ID))
		switch {
		case err == nil:
			if existing.ParentThreadID != in.ParentThreadID {
				return Errorf(ECONFLICT, "Handoff %s belongs to another thread.", in.ID)
			}
			h = existing
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		var workspace string
		err = tx.QueryRowContext(ctx, `SELECT workspace_id FROM threads WHERE id = ?`, in.ParentThreadID).Scan(&workspace)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("thread %s: %w", in.ParentThreadID, ErrNotFound)
		} else if err != nil {
			return err
		}
		child := newID()
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO threads (id, workspace_id, parent_thread_id, title, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?)`,
			child, workspace, in.ParentThreadID, in.Summary.Title, formatTime(now), formatTime(now)); err != nil {
			return err
		}
		sum := in.Summary
		sum.SchemaVersion = ThreadSummarySchemaVersion
		sum.HandoffID, sum.WorkspaceID, sum.ParentThreadID, sum.ChildThreadID = in.ID, workspace, in.ParentThreadID, child
		sum.CreatedAt = now
		if sum.Body == nil {
			sum.Body = []SummaryPoint{}
		}
		js, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		h = &ThreadHandoff{ID: in.ID, WorkspaceID: workspace, ParentThreadID: in.ParentThreadID, ChildThreadID: child,
			Title: sum.Title, SummaryJSON: string(js), SummaryMD: in.SummaryMD, Model: sum.Model,
			ResponseID: in.ResponseID, TokensUsed: sum.TokensUsed, Pending: true, CleanupRequired: true, CreatedAt: now}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO thread_handoffs (id, workspace_id, parent_thread_id, child_thread_id, title,
			    summary_json, summary_md, model, response_id, tokens_used, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			h.ID, h.WorkspaceID, h.ParentThreadID, h.ChildThreadID, h.Title, h.SummaryJSON, h.SummaryMD,
			h.Model, h.ResponseID, h.TokensUsed, formatTime(now)); err != nil {
			return err
		}
		if in.Mirror {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO mirror_outbox (handoff_id, created_at) VALUES (?, ?)`, h.ID, formatTime(now)); err != nil {
				return err
			}
		}
		created = true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("accept thread handoff %s: %w", in.ID, err)
	}
	return h, created, nil
}

const threadHandoffColumns = `h.id, h.workspace_id, h.parent_thread_id, h.child_thread_id, h.title,
	h.summary_json, h.summary_md, h.model, h.response_id, h.tokens_used, h.pending, h.cleanup_required,
	COALESCE(h.last_cleanup_at, ''), h.created_at`

// scanThreadHandoff scans threadHandoffColumns, then the extra columns, if
// any, into extra.
func scanThreadHandoff(s scanner, extra ...any) (*ThreadHandoff, error) {
	var h ThreadHandoff
	var cleanup, created string
	dest := append([]any{&h.ID, &h.WorkspaceID, &h.ParentThreadID, &h.ChildThreadID, &h.Title, &h.SummaryJSON,
		&h.SummaryMD, &h.Model, &h.ResponseID, &h.TokensUsed, &h.Pending, &h.CleanupRequired, &cleanup, &created}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	if cleanup != "" {
		h.LastCleanupAt = parseTime(cleanup)
	}
	h.CreatedAt = parseTime(created)
	return &h, nil
}

// Queries of one thread handoff: by its ID, by its child, the newest of a
// parent. The thread page runs the last two, so they go through the
// prepared-statement cache (readRow).
const (
	threadHandoffByID     = `SELECT ` + threadHandoffColumns + ` FROM thread_handoffs h WHERE h.id = ?`
	threadHandoffByChild  = `SELECT ` + threadHandoffColumns + ` FROM thread_handoffs h WHERE h.child_thread_id = ?`
	threadHandoffByParent = `SELECT ` + threadHandoffColumns + ` FROM thread_handoffs h WHERE h.parent_thread_id = ?
		ORDER BY h.created_at DESC, h.id DESC LIMIT 1`
)

// foundThreadHandoff turns sql.ErrNoRows into ErrNotFound, with context.
func foundThreadHandoff(h *ThreadHandoff, err error, format string, arg string) (*ThreadHandoff, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf(format+": %w", arg, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf(format+": %w", arg, err)
	}
	return h, nil
}

// FindThreadHandoffByID returns an accepted thread handoff, or ErrNotFound.
func (db *DB) FindThreadHandoffByID(ctx context.Context, id string) (*ThreadHandoff, error) {
	h, err := scanThreadHandoff(db.readRow(ctx, threadHandoffByID, id))
	return foundThreadHandoff(h, err, "thread handoff %s", id)
}

// FindThreadHandoffByChild returns the handoff a thread was started by, or
// ErrNotFound if it was not started by one.
func (db *DB) FindThreadHandoffByChild(ctx context.Context, childThreadID string) (*ThreadHandoff, error) {
	h, err := scanThreadHandoff(db.readRow(ctx, threadHandoffByChild, childThreadID))
	return foundThreadHandoff(h, err, "handoff into thread %s", childThreadID)
}

// FindLastThreadHandoff returns the latest handoff out of a thread, or
// ErrNotFound if it was never handed off.
func (db *DB) FindLastThreadHandoff(ctx context.Context, parentThreadID string) (*ThreadHandoff, error) {
	h, err := scanThreadHandoff(db.readRow(ctx, threadHandoffByParent, parentThreadID))
	return foundThreadHandoff(h, err, "last handoff of thread %s", parentThreadID)
}

// answeredByReply is the condition, on a thread_handoffs row h, that its
// child thread has a complete reply: the point after which the summary is
// no longer sent.
const answeredByReply = `EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = h.child_thread_id
	AND m.role = 'assistant' AND m.status = 'complete')`

// FindPendingThreadSummary returns the handoff whose summary the next model
// call of a child thread must carry: one that still needs its cleanup and
// whose thread has no complete reply yet. A handoff whose first reply was
// saved but not cleaned up (the process stopped in between) is cleaned up
// here, once, and not returned. Returns ErrNotFound when no summary is due.
func (db *DB) FindPendingThreadSummary(ctx context.Context, childThreadID string) (*ThreadHandoff, error) {
	var answered bool
	h, err := scanThreadHandoff(db.readRow(ctx,
		`SELECT `+threadHandoffColumns+`, `+answeredByReply+`
		 FROM thread_handoffs h WHERE h.child_thread_id = ? AND h.cleanup_required = 1`, childThreadID), &answered)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("pending summary of thread %s: %w", childThreadID, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find pending summary of thread %s: %w", childThreadID, err)
	}
	if answered {
		if _, err := db.CleanupThreadHandoff(ctx, childThreadID); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("pending summary of thread %s: %w", childThreadID, ErrNotFound)
	}
	return h, nil
}

// CleanupThreadHandoff clears the handoff block of a child thread whose
// first reply is complete: pending and cleanup_required become false and
// last_cleanup_at is set. It does so exactly once: cleared is true only for
// the call that did it, and nothing happens while the thread has no
// complete reply.
func (db *DB) CleanupThreadHandoff(ctx context.Context, childThreadID string) (cleared bool, err error) {
	res, err := db.write.ExecContext(ctx,
		`UPDATE thread_handoffs AS h SET pending = 0, cleanup_required = 0, last_cleanup_at = ?
		 WHERE h.child_thread_id = ? AND h.cleanup_required = 1 AND `+answeredByReply,
		formatTime(db.now()), childThreadID)
	if err != nil {
		return false, fmt.Errorf("clean up handoff of thread %s: %w", childThreadID, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// CleanupThreadHandoffs clears every handoff block whose child already has
// a complete reply: the cleanups a stopped process did not get to. It
// returns how many it cleared.
func (db *DB) CleanupThreadHandoffs(ctx context.Context) (int, error) {
	res, err := db.write.ExecContext(ctx,
		`UPDATE thread_handoffs AS h SET pending = 0, cleanup_required = 0, last_cleanup_at = ?
		 WHERE h.cleanup_required = 1 AND `+answeredByReply, formatTime(db.now()))
	if err != nil {
		return 0, fmt.Errorf("clean up thread handoffs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
