package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxTitleLen is the longest thread title, in characters.
const MaxTitleLen = 200

// DefaultThreadTitle names a thread created without a title.
const DefaultThreadTitle = "New brainstorm"

// Thread is a brainstorm conversation.
type Thread struct {
	ID             string
	WorkspaceID    string
	ParentThreadID string
	Title          string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	ArchivedAt     time.Time // zero unless archived
	// DeletedAt is zero unless the thread was deleted while snapshots of
	// its handoff existed: the thread then stays as a tombstone, without
	// messages or drafts, so that its snapshots and plans can say where
	// they came from. Only FindThreadByIDIncludingDeleted returns one.
	DeletedAt    time.Time
	MessageCount int // filled by FindThreads
	// MessagesRev moves on whenever a message is added or removed, or its
	// role, status, pin or time changes (FindMessageHeadsOf).
	MessagesRev int64
}

// ThreadCreate is the input of CreateThread.
type ThreadCreate struct {
	WorkspaceID    string // the default workspace when empty
	ParentThreadID string
	Title          string
}

// Validate normalises the title (runs of white space become one space; an
// empty title becomes DefaultThreadTitle) and checks its length. Returns an
// EINVALID *Error saying what to fix.
func (t *Thread) Validate() error {
	t.Title = strings.Join(strings.Fields(t.Title), " ")
	if t.Title == "" {
		t.Title = DefaultThreadTitle
	}
	if n := utf8.RuneCountInString(t.Title); n > MaxTitleLen {
		return Errorf(EINVALID, "The title is %d characters long; keep it to %d.", n, MaxTitleLen)
	}
	return checkChars("the title", t.Title)
}

// CreateThread creates a thread. Returns ErrInvalid for a bad title and
// ErrNotFound if the workspace or parent thread does not exist.
func (db *DB) CreateThread(ctx context.Context, in ThreadCreate) (*Thread, error) {
	if in.WorkspaceID == "" {
		in.WorkspaceID = db.defaultWorkspace
	}
	now := db.now()
	t := &Thread{ID: newID(), WorkspaceID: in.WorkspaceID, ParentThreadID: in.ParentThreadID,
		Title: in.Title, CreatedAt: now, UpdatedAt: now}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	_, err := db.write.ExecContext(ctx,
		`INSERT INTO threads (id, workspace_id, parent_thread_id, title, created_at, updated_at)
		 VALUES (?, ?, NULLIF(?, ''), ?, ?, ?)`,
		t.ID, t.WorkspaceID, t.ParentThreadID, t.Title, formatTime(now), formatTime(now))
	if violationOf(err) == foreignKeyViolation {
		return nil, fmt.Errorf("create thread: workspace or parent thread: %w", ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("create thread: %w", err)
	}
	return t, nil
}

// FindThreadByID returns a thread, or ErrNotFound (also for a deleted one).
func (db *DB) FindThreadByID(ctx context.Context, id string) (*Thread, error) {
	t, err := scanThread(db.readRow(ctx,
		`SELECT `+threadColumns+`, 0 FROM threads WHERE id = ? AND deleted_at IS NULL`, id))
	if err != nil {
		return nil, findErr(err, "thread %s", id)
	}
	return t, nil
}

// ThreadFilter selects threads for FindThreads.
type ThreadFilter struct {
	WorkspaceID string // the default workspace when empty
	Limit       int    // 100 when zero
	Archived    bool   // the archived threads instead of the others
}

// FindThreads lists a workspace's threads, most recently active first:
// the archived ones if f.Archived, else the others. Deleted threads are
// never listed.
func (db *DB) FindThreads(ctx context.Context, f ThreadFilter) ([]*Thread, error) {
	if f.WorkspaceID == "" {
		f.WorkspaceID = db.defaultWorkspace
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	threads, err := scanAll(scanThread)(db.read.QueryContext(ctx,
		`SELECT `+threadColumns+`, (SELECT COUNT(*) FROM messages m WHERE m.thread_id = threads.id)
		 FROM threads WHERE workspace_id = ? AND deleted_at IS NULL AND (CASE WHEN archived_at IS NULL THEN 0 ELSE 1 END) = ?
		 ORDER BY updated_at DESC, id DESC LIMIT ?`, f.WorkspaceID, f.Archived, f.Limit))
	if err != nil {
		return nil, fmt.Errorf("find threads: %w", err)
	}
	return threads, nil
}

type scanner interface{ Scan(dest ...any) error }

const threadColumns = `id, workspace_id, COALESCE(parent_thread_id, ''), title, created_at, updated_at,
	COALESCE(archived_at, ''), COALESCE(deleted_at, ''), messages_rev`

// scanThread reads threadColumns and a message count.
func scanThread(s scanner) (*Thread, error) {
	var t Thread
	var created, updated, archived, deleted string
	if err := s.Scan(&t.ID, &t.WorkspaceID, &t.ParentThreadID, &t.Title, &created, &updated, &archived, &deleted, &t.MessagesRev, &t.MessageCount); err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt = parseTime(created), parseTime(updated)
	if archived != "" {
		t.ArchivedAt = parseTime(archived)
	}
	if deleted != "" {
		t.DeletedAt = parseTime(deleted)
	}
	return &t, nil
}
