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
}

// ThreadCreate is the input of CreateThread.
type ThreadCreate struct {
	WorkspaceID    string // the default workspace when empty
	ParentThreadID string
	Title          string
}

// Validate normalises the title and checks its length.
func (in *ThreadCreate) Validate() error {
	in.Title = strings.Join(strings.Fields(in.Title), " ")
	if in.Title == "" {
		in.Title = DefaultThreadTitle
	}
	if n := utf8.RuneCountInString(in.Title); n > MaxTitleLen {
		return invalidf("title", "The title is %d characters long; keep it to %d.", n, MaxTitleLen)
	}
	return nil
}

// CreateThread creates a thread. Returns ErrInvalid for a bad title and
// ErrNotFound if the workspace or parent thread does not exist.
func (db *DB) CreateThread(ctx context.Context, in ThreadCreate) (*Thread, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if in.WorkspaceID == "" {
		in.WorkspaceID = db.defaultWorkspace
	}
	now := db.now()
	t := &Thread{ID: newID(), WorkspaceID: in.WorkspaceID, ParentThreadID: in.ParentThreadID,
		Title: in.Title, CreatedAt: now, UpdatedAt: now}
	_, err := db.write.ExecContext(ctx,
		`INSERT INTO threads (id, workspace_id, parent_thread_id, title, created_at, updated_at)
		 VALUES (?, ?, NULLIF(?, ''), ?, ?, ?)`,
		t.ID, t.WorkspaceID, t.ParentThreadID, t.Title, formatTime(now), formatTime(now))
	if isForeignKeyErr(err) {
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
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("thread %s: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find thread %s: %w", id, err)
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
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+threadColumns+`, (SELECT COUNT(*) FROM messages m WHERE m.thread_id = threads.id)
		 FROM threads WHERE workspace_id = ? AND deleted_at IS NULL AND (archived_at IS NOT NULL) = ?
		 ORDER BY updated_at DESC, id DESC LIMIT ?`, f.WorkspaceID, f.Archived, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("find threads: %w", err)
	}
	defer rows.Close()
	var threads []*Thread
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, fmt.Errorf("find threads: %w", err)
		}
		threads = append(threads, t)
	}
	return threads, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

const threadColumns = `id, workspace_id, COALESCE(parent_thread_id, ''), title, created_at, updated_at,
	COALESCE(archived_at, ''), COALESCE(deleted_at, '')`

// scanThread reads threadColumns and a message count.
func scanThread(s scanner) (*Thread, error) {
	var t Thread
	var created, updated, archived, deleted string
	if err := s.Scan(&t.ID, &t.WorkspaceID, &t.ParentThreadID, &t.Title, &created, &updated, &archived, &deleted, &t.MessageCount); err != nil {
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

func isForeignKeyErr(err error) bool {
	return err != nil && strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}

func isUniqueErr(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
