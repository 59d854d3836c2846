package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxItemLen is the longest decision, file context, risk or summary, in characters.
const MaxItemLen = 2000

// MaxPathLen is the longest file path, in characters (not bytes): CleanPath
// and FileRef.Validate refuse longer ones.
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
	return "", Errorf(EINVALID, "%s must be high, medium or low, not %q.", capitalize(field), s)
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
	ThreadTitle string // its thread's title, as read with it
	Decisions   []*Decision
	Files       []*FileRef
	Risks       []*Risk
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
	// UpdatedBy is the name of the person who last added, pinned or
	// edited it; "" when nobody did (the model) or the account is gone.
	UpdatedBy string
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
	UpdatedAt  time.Time
	UpdatedBy  string // as Decision.UpdatedBy
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
	UpdatedAt   time.Time
	UpdatedBy   string // as Decision.UpdatedBy
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
		return "", Errorf(EINVALID, "%s is empty. Write something or remove the item.", capitalize(field))
	}
	if n := utf8.RuneCountInString(s); n > MaxItemLen {
		return "", Errorf(EINVALID, "%s is %d characters long; keep it to %d.", capitalize(field), n, MaxItemLen)
	}
	s = unixNewlines(s)
	if err := checkChars(field, s); err != nil {
		return "", err
	}
	return s, nil
}

func checkConfidence(c *float64) error {
	if c != nil && (*c < 0 || *c > 1) {
		return Errorf(EINVALID, "Confidence must be between 0 and 1, not %g.", *c)
	}
	return nil
}

func checkSource(s Source) error {
	switch s {
	case SourceAI, SourcePinned, SourceEdited:
		return nil
	}
	return Errorf(EINVALID, "Source must be ai-extracted, user-pinned or user-edited, not %q.", s)
}

// Validate trims the decision's content and checks it against the rules:
// content of 1 to MaxItemLen characters without control characters other
// than newline and tab, a known source, a confidence between 0 and 1.
// Returns an EINVALID *Error saying what to fix.
func (d *Decision) Validate() (err error) {
	if d.Content, err = checkText("decision", d.Content, true); err != nil {
		return err
	}
	if err := checkSource(d.Source); err != nil {
		return err
	}
	return checkConfidence(d.Confidence)
}

// ParsePath cleans a file path with CleanPath, or says why it cannot be a
// file of the project with an EINVALID *Error.
func ParsePath(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", Errorf(EINVALID, "The file path is empty.")
	}
	p, ok := CleanPath(raw)
	if !ok {
		if n := utf8.RuneCountInString(strings.TrimSpace(raw)); n > MaxPathLen {
			return "", Errorf(EINVALID, "The file path is %d characters long; keep it to %d.", n, MaxPathLen)
		}
		return "", Errorf(EINVALID, "%q is not a path inside the project: use a relative path like src/app.go "+
			"(no leading /, ~, .., drive letters, URLs or backslashes).", raw)
	}
	return p, nil
}

// Validate cleans the file's path with ParsePath, normalises its relevance
// and trims its context, and checks them: a path inside the project of at
// most MaxPathLen characters, a relevance of high, medium or low, a context
// of at most MaxItemLen characters, a known source. Returns an EINVALID
// *Error saying what to fix.
func (f *FileRef) Validate() (err error) {
	if f.Path, err = ParsePath(f.Path); err != nil {
		return err
	}
	if f.Relevance, err = ParseLevel("relevance", string(f.Relevance)); err != nil {
		return err
	}
	if f.Context, err = checkText("context", f.Context, false); err != nil {
		return err
	}
	return checkSource(f.Source)
}

// Validate trims the risk's texts and checks them: a description of 1 to
// MaxItemLen characters, a severity of high, medium or low, a mitigation of
// at most MaxItemLen characters, a known source. Returns an EINVALID *Error
// saying what to fix.
func (r *Risk) Validate() (err error) {
	if r.Description, err = checkText("risk", r.Description, true); err != nil {
		return err
	}
	if r.Severity, err = ParseLevel("severity", string(r.Severity)); err != nil {
		return err
	}
	if r.Mitigation, err = checkText("mitigation", r.Mitigation, false); err != nil {
		return err
	}
	return checkSource(r.Source)
}

// EnsureHandoff returns the thread's handoff, creating it if there is none.
func (db *DB) EnsureHandoff(ctx context.Context, threadID string) (*Handoff, error) {
	var id string
	err := db.inTx(ctx, func(tx *txn) (err error) {
		id, err = ensureHandoff(ctx, tx, threadID, db.now())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ensure handoff: %w", err)
	}
	return db.FindHandoffByID(ctx, id)
}

func ensureHandoff(ctx context.Context, tx *txn, threadID string, now time.Time) (string, error) {
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
// not zero it must be the current version, else an ECONFLICT that is also
// ErrStaleVersion; zero takes the change whatever the version (adds,
// deletes and pins that overwrite nothing).
func touchHandoff(ctx context.Context, tx *txn, handoffID string, expected int, now time.Time) (int, error) {
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
		return 0, staleVersion(current, expected)
	}
	return version, err
}

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
	return db.findHandoff(ctx, `id`, id, "handoff "+id)
}

// FindHandoffByThread returns a thread's handoff with its items, or ErrNotFound.
func (db *DB) FindHandoffByThread(ctx context.Context, threadID string) (*Handoff, error) {
	return db.findHandoff(ctx, `thread_id`, threadID, "handoff of thread "+threadID)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func findItems(ctx context.Context, q querier, h *Handoff) (err error) {
	h.Decisions, err = scanAll(func(s scanner) (*Decision, error) {
		d := &Decision{HandoffID: h.ID}
		var conf sql.NullFloat64
		var ids, created, updated string
		if err := s.Scan(&d.ID, &d.Content, &d.Source, &conf, &ids, &d.PinnedMessageID, &d.DuringPlanning, &created, &updated, &d.UpdatedBy); err != nil {
			return nil, err
		}
		if conf.Valid {
			d.Confidence = &conf.Float64
		}
		d.MessageIDs = decodeIDs(ids)
		d.CreatedAt, d.UpdatedAt = parseTime(created), parseTime(updated)
		return d, nil
	})(q.QueryContext(ctx,
		`SELECT d.id, d.content, d.source, d.confidence, d.message_ids, COALESCE(d.pinned_message_id, ''), d.during_planning,
		        d.created_at, d.updated_at, COALESCE(u.name, '')
		 FROM decisions d LEFT JOIN users u ON u.id = d.updated_by
		 WHERE d.handoff_id = ? ORDER BY d.created_at, d.id`, h.ID))
	if err != nil {
		return err
	}
	for i, d := range h.Decisions {
		d.Label = "D" + strconv.Itoa(i+1)
	}
	h.Files, err = scanAll(func(s scanner) (*FileRef, error) {
		f := &FileRef{HandoffID: h.ID}
		var ids, created, updated string
		err := s.Scan(&f.ID, &f.Path, &f.Relevance, &f.Context, &f.Source, &ids, &created, &updated, &f.UpdatedBy)
		f.MessageIDs, f.CreatedAt, f.UpdatedAt = decodeIDs(ids), parseTime(created), parseTime(updated)
		return f, err
	})(q.QueryContext(ctx,
		`SELECT f.id, f.path, f.relevance, f.context, f.source, f.message_ids, f.created_at, f.updated_at, COALESCE(u.name, '')
		 FROM file_refs f LEFT JOIN users u ON u.id = f.updated_by
		 WHERE f.handoff_id = ? ORDER BY f.created_at, f.id`, h.ID))
	if err != nil {
		return err
	}
	h.Risks, err = scanAll(func(s scanner) (*Risk, error) {
		r := &Risk{HandoffID: h.ID}
		var ids, created, updated string
		err := s.Scan(&r.ID, &r.Description, &r.Severity, &r.Mitigation, &r.Source, &ids, &created, &updated, &r.UpdatedBy)
		r.MessageIDs, r.CreatedAt, r.UpdatedAt = decodeIDs(ids), parseTime(created), parseTime(updated)
		return r, err
	})(q.QueryContext(ctx,
		`SELECT r.id, r.description, r.severity, r.mitigation, r.source, r.message_ids, r.created_at, r.updated_at, COALESCE(u.name, '')
		 FROM risks r LEFT JOIN users u ON u.id = r.updated_by
		 WHERE r.handoff_id = ? ORDER BY r.created_at, r.id`, h.ID))
	return err
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
	return slices.Clip(ids) // shared by the items cache's copies: an append must copy
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
	out, err := scanAll(func(sc scanner) (HandoffSummary, error) {
		var s HandoffSummary
		var updated string
		err := sc.Scan(&s.ID, &s.ThreadID, &s.ThreadTitle, &s.Status, &s.Decisions, &updated)
		s.UpdatedAt = parseTime(updated)
		return s, err
	})(db.read.QueryContext(ctx,
		`SELECT h.id, h.thread_id, t.title, h.status,
		        (SELECT COUNT(*) FROM decisions d WHERE d.handoff_id = h.id), h.updated_at
		 FROM handoffs h JOIN threads t ON t.id = h.thread_id
		 WHERE h.workspace_id = ? AND t.deleted_at IS NULL ORDER BY h.updated_at DESC LIMIT ?`, workspaceID, limit))
	if err != nil {
		return nil, fmt.Errorf("find recent handoffs: %w", err)
	}
	return out, nil
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
