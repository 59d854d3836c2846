package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxItemLen is the longest decision, file context, risk or summary, in characters.
const MaxItemLen = 2000

// MaxPathLen is the longest file path, in characters.
const MaxPathLen = 300

// HandoffStatus says whether a handoff has been frozen since its last change.
type HandoffStatus string

// Handoff statuses.
const (
	HandoffDraft  HandoffStatus = "draft"
	HandoffFrozen HandoffStatus = "frozen"
)

// Source says where an item came from: the AI, a person pinning a message
// or adding it, or a person editing it.
type Source string

// Item sources.
const (
	SourceAI     Source = "ai-extracted"
	SourcePinned Source = "user-pinned"
	SourceEdited Source = "user-edited"
)

// Level is a file's relevance or a risk's severity.
type Level string

// Levels.
const (
	LevelHigh   Level = "high"
	LevelMedium Level = "medium"
	LevelLow    Level = "low"
)

// ParseLevel checks a relevance or severity.
func ParseLevel(field, s string) (Level, error) {
	switch l := Level(strings.ToLower(strings.TrimSpace(s))); l {
	case LevelHigh, LevelMedium, LevelLow:
		return l, nil
	}
	return "", invalidf(field, "%s must be high, medium or low, not %q.", capitalize(field), s)
}

// Handoff is what a brainstorm hands to planning: decisions, files, risks
// and a summary, reviewed by people. Version grows with every change, so
// that a stale edit is refused instead of overwriting a newer one.
type Handoff struct {
	ID          string
	ThreadID    string
	WorkspaceID string
	Status      HandoffStatus
	Summary     string
	Version     int
	CreatedAt   time.Time
	UpdatedAt   time.Time

	// Filled by FindHandoffByID and FindHandoffByThread.
	Decisions []*Decision
	Files     []*FileRef
	Risks     []*Risk
}

// Decision is something the team decided.
type Decision struct {
	ID              string
	HandoffID       string
	Label           string // D1, D2, … by position
	Content         string
	Source          Source
	Confidence      *float64
	MessageIDs      []string
	PinnedMessageID string
	DuringPlanning  bool // added by the plan agent
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// FileRef is a file the work touches.
type FileRef struct {
	ID         string
	HandoffID  string
	Path       string
	Relevance  Level
	Context    string
	Source     Source
	MessageIDs []string
	CreatedAt  time.Time
}

// Risk is a concern raised in the brainstorm.
type Risk struct {
	ID          string
	HandoffID   string
	Description string
	Severity    Level
	Mitigation  string
	Source      Source
	MessageIDs  []string
	CreatedAt   time.Time
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// checkText trims s and checks it is neither empty nor over MaxItemLen.
func checkText(field, s string, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" && required {
		return "", invalidf(field, "%s is empty. Write something or remove the item.", capitalize(field))
	}
	if n := utf8.RuneCountInString(s); n > MaxItemLen {
		return "", invalidf(field, "%s is %d characters long; keep it to %d.", capitalize(field), n, MaxItemLen)
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return "", invalidf(field, "%s contains control characters.", capitalize(field))
		}
	}
	return s, nil
}

func checkConfidence(c *float64) error {
	if c != nil && (*c < 0 || *c > 1) {
		return invalidf("confidence", "Confidence must be between 0 and 1, not %g.", *c)
	}
	return nil
}

// EnsureHandoff returns the thread's handoff, creating it if there is none.
func (db *DB) EnsureHandoff(ctx context.Context, threadID string) (*Handoff, error) {
	var id string
	err := db.inTx(ctx, func(tx *sql.Tx) (err error) {
		id, err = ensureHandoff(ctx, tx, threadID, db.now())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ensure handoff: %w", err)
	}
	return db.FindHandoffByID(ctx, id)
}

func ensureHandoff(ctx context.Context, tx *sql.Tx, threadID string, now time.Time) (string, error) {
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM handoffs WHERE thread_id = ?`, threadID).Scan(&id)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	id = newID()
	res, err := tx.ExecContext(ctx,
		`INSERT INTO handoffs (id, thread_id, workspace_id, created_at, updated_at)
		 SELECT ?, id, workspace_id, ?, ? FROM threads WHERE id = ?`,
		id, formatTime(now), formatTime(now), threadID)
	if err != nil {
		return "", err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", fmt.Errorf("thread %s: %w", threadID, ErrNotFound)
	}
	return id, nil
}

// touchHandoff records a change: the version grows and a frozen handoff
// becomes a draft again (its snapshots stay as they were). If expected is
// not zero it must be the current version, else ErrConflict.
func touchHandoff(ctx context.Context, tx *sql.Tx, handoffID string, expected int, now time.Time) (int, error) {
	var version int
	err := tx.QueryRowContext(ctx,
		`UPDATE handoffs SET version = version + 1, status = 'draft', updated_at = ?
		 WHERE id = ? AND (? = 0 OR version = ?) RETURNING version`,
		formatTime(now), handoffID, expected, expected).Scan(&version)
	if errors.Is(err, sql.ErrNoRows) {
		var current int
		if err := tx.QueryRowContext(ctx, `SELECT version FROM handoffs WHERE id = ?`, handoffID).Scan(&current); err != nil {
			return 0, fmt.Errorf("handoff %s: %w", handoffID, ErrNotFound)
		}
		return 0, &VersionConflict{Current: current, Expected: expected}
	}
	return version, err
}

// VersionConflict is an ErrConflict for an edit based on a stale version.
type VersionConflict struct {
	Current, Expected int
}

func (e *VersionConflict) Error() string {
	return fmt.Sprintf("someone else changed this handoff (version %d, you had %d)", e.Current, e.Expected)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *VersionConflict) Is(target error) bool { return target == ErrConflict }

const handoffColumns = `id, thread_id, workspace_id, status, summary, version, created_at, updated_at`

func scanHandoff(s scanner) (*Handoff, error) {
	var h Handoff
	var created, updated string
	if err := s.Scan(&h.ID, &h.ThreadID, &h.WorkspaceID, &h.Status, &h.Summary, &h.Version, &created, &updated); err != nil {
		return nil, err
	}
	h.CreatedAt, h.UpdatedAt = parseTime(created), parseTime(updated)
	return &h, nil
}

// FindHandoffByID returns a handoff with its decisions, files and risks.
func (db *DB) FindHandoffByID(ctx context.Context, id string) (*Handoff, error) {
	return db.findHandoff(ctx, `id = ?`, id)
}

// FindHandoffByThread returns a thread's handoff with its items, or ErrNotFound.
func (db *DB) FindHandoffByThread(ctx context.Context, threadID string) (*Handoff, error) {
	return db.findHandoff(ctx, `thread_id = ?`, threadID)
}

func (db *DB) findHandoff(ctx context.Context, where string, arg string) (*Handoff, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ptx := preparedTx{db, tx}
	h, err := scanHandoff(ptx.QueryRowContext(ctx, `SELECT `+handoffColumns+` FROM handoffs WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("handoff %s: %w", arg, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find handoff %s: %w", arg, err)
	}
	if err := findItems(ctx, ptx, h); err != nil {
		return nil, fmt.Errorf("find handoff %s items: %w", h.ID, err)
	}
	return h, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func findItems(ctx context.Context, q querier, h *Handoff) error {
	rows, err := q.QueryContext(ctx,
		`SELECT id, content, source, confidence, message_ids, COALESCE(pinned_message_id, ''), during_planning, created_at, updated_at
		 FROM decisions WHERE handoff_id = ? ORDER BY created_at, id`, h.ID)
	if err != nil {
		return err
	}
	h.Decisions = nil
	for rows.Next() {
		d := &Decision{HandoffID: h.ID}
		var conf sql.NullFloat64
		var ids, created, updated string
		if err := rows.Scan(&d.ID, &d.Content, &d.Source, &conf, &ids, &d.PinnedMessageID, &d.DuringPlanning, &created, &updated); err != nil {
			rows.Close()
			return err
		}
		if conf.Valid {
			d.Confidence = &conf.Float64
		}
		d.MessageIDs = decodeIDs(ids)
		d.CreatedAt, d.UpdatedAt = parseTime(created), parseTime(updated)
		d.Label = "D" + strconv.Itoa(len(h.Decisions)+1)
		h.Decisions = append(h.Decisions, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	rows, err = q.QueryContext(ctx,
		`SELECT id, path, relevance, context, source, message_ids, created_at
		 FROM file_refs WHERE handoff_id = ? ORDER BY created_at, id`, h.ID)
	if err != nil {
		return err
	}
	h.Files = nil
	for rows.Next() {
		f := &FileRef{HandoffID: h.ID}
		var ids, created string
		if err := rows.Scan(&f.ID, &f.Path, &f.Relevance, &f.Context, &f.Source, &ids, &created); err != nil {
			rows.Close()
			return err
		}
		f.MessageIDs, f.CreatedAt = decodeIDs(ids), parseTime(created)
		h.Files = append(h.Files, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	rows, err = q.QueryContext(ctx,
		`SELECT id, description, severity, mitigation, source, message_ids, created_at
		 FROM risks WHERE handoff_id = ? ORDER BY created_at, id`, h.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	h.Risks = nil
	for rows.Next() {
		r := &Risk{HandoffID: h.ID}
		var ids, created string
		if err := rows.Scan(&r.ID, &r.Description, &r.Severity, &r.Mitigation, &r.Source, &ids, &created); err != nil {
			return err
		}
		r.MessageIDs, r.CreatedAt = decodeIDs(ids), parseTime(created)
		h.Risks = append(h.Risks, r)
	}
	return rows.Err()
}

func encodeIDs(ids []string) string {
	if len(ids) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func decodeIDs(s string) []string {
	if s == "[]" || s == "" {
		return nil // most items: no need to run the JSON decoder
	}
	var ids []string
	json.Unmarshal([]byte(s), &ids)
	return ids
}

// HandoffSummary is a line of the recent-handoffs list.
type HandoffSummary struct {
	ID          string
	ThreadID    string
	ThreadTitle string
	Status      HandoffStatus
	Decisions   int
	UpdatedAt   time.Time
}

// FindRecentHandoffs lists the workspace's handoffs, most recently changed first.
func (db *DB) FindRecentHandoffs(ctx context.Context, workspaceID string, limit int) ([]HandoffSummary, error) {
	if workspaceID == "" {
		workspaceID = db.defaultWorkspace
	}
	rows, err := db.read.QueryContext(ctx,
		`SELECT h.id, h.thread_id, t.title, h.status,
		        (SELECT COUNT(*) FROM decisions d WHERE d.handoff_id = h.id), h.updated_at
		 FROM handoffs h JOIN threads t ON t.id = h.thread_id
		 WHERE h.workspace_id = ? AND t.deleted_at IS NULL ORDER BY h.updated_at DESC LIMIT ?`, workspaceID, limit)
	if err != nil {
		return nil, fmt.Errorf("find recent handoffs: %w", err)
	}
	defer rows.Close()
	var out []HandoffSummary
	for rows.Next() {
		var s HandoffSummary
		var updated string
		if err := rows.Scan(&s.ID, &s.ThreadID, &s.ThreadTitle, &s.Status, &s.Decisions, &updated); err != nil {
			return nil, err
		}
		s.UpdatedAt = parseTime(updated)
		out = append(out, s)
	}
	return out, rows.Err()
}

// ReadyState is what a brainstorm page shows about its handoff: whether
// there is one, how many replies are pinned, and how the last extraction
// went. FindReadyState reads it in one query, as the page does it on every view.
type ReadyState struct {
	HandoffID     string // empty when the thread has no handoff yet
	Pins          int
	LastRunStatus RunStatus // empty when nothing was extracted
	LastRunError  string
}

// FindReadyState returns a thread's ReadyState; a thread without a handoff
// gets the zero value.
func (db *DB) FindReadyState(ctx context.Context, threadID string) (ReadyState, error) {
	var r ReadyState
	err := db.readRow(ctx,
		`SELECT h.id,
		        (SELECT COUNT(*) FROM decisions d WHERE d.handoff_id = h.id AND d.pinned_message_id IS NOT NULL),
		        COALESCE(r.status, ''), COALESCE(r.error, '')
		 FROM handoffs h
		 LEFT JOIN extraction_runs r ON r.id = (SELECT id FROM extraction_runs WHERE handoff_id = h.id
		                                        ORDER BY started_at DESC, id DESC LIMIT 1)
		 WHERE h.thread_id = ?`, threadID).Scan(&r.HandoffID, &r.Pins, &r.LastRunStatus, &r.LastRunError)
	if errors.Is(err, sql.ErrNoRows) {
		return ReadyState{}, nil
	} else if err != nil {
		return r, fmt.Errorf("find ready state of %s: %w", threadID, err)
	}
	return r, nil
}
