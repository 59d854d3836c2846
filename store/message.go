package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Limits on message content, in bytes.
const (
	MaxUserMessageBytes      = 32 << 10
	MaxAssistantMessageBytes = 256 << 10
)

// Role says who wrote a message.
type Role string

// Message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// MessageStatus says how an assistant reply ended.
type MessageStatus string

// Message statuses. User messages are always complete.
const (
	StatusComplete MessageStatus = "complete"
	StatusStopped  MessageStatus = "stopped" // cancelled mid-stream; content is what arrived
	StatusFailed   MessageStatus = "failed"  // the model call failed; Error says why
)

// Message is one turn of a thread.
type Message struct {
	ID           string
	ThreadID     string
	Role         Role
	Content      string
	Status       MessageStatus
	Error        string // why a failed reply failed, for people
	Model        string
	InputTokens  int64
	OutputTokens int64
	ResponseID   string
	ReplyTo      string // for an assistant message: the user message it answers
	Pinned       bool
	CreatedAt    time.Time
}

// MessageCreate is the input of CreateMessage.
type MessageCreate struct {
	ThreadID     string
	Role         Role
	Content      string
	Status       MessageStatus // complete when empty
	Error        string
	Model        string
	InputTokens  int64
	OutputTokens int64
	ResponseID   string
	ReplyTo      string
}

// Validate checks a message against the domain's rules: a user message is
// complete and holds 1 to MaxUserMessageBytes of content that is not all
// blank; an assistant message ended as complete, stopped or failed and
// holds at most MaxAssistantMessageBytes. Content follows the rule for
// stored text (text.go): a user message's line ends become "\n" and it may
// not hold control characters or direction overrides; those are removed
// from a reply, which a model wrote. Returns an EINVALID *Error saying
// what to fix.
func (m *Message) Validate() error {
	m.Content = unixNewlines(m.Content)
	switch m.Role {
	case RoleUser:
		if err := checkChars("the message", m.Content); err != nil {
			return err
		}
		if strings.TrimSpace(m.Content) == "" {
			return Errorf(EINVALID, "The message is empty. Type something to send.")
		}
		if len(m.Content) > MaxUserMessageBytes {
			return Errorf(EINVALID, "The message is %d KiB; the limit is %d KiB. Shorten it or split it into parts.",
				(len(m.Content)+1023)/1024, MaxUserMessageBytes>>10)
		}
		if m.Status != StatusComplete {
			return Errorf(EINVALID, "A user message is always complete.")
		}
	case RoleAssistant:
		m.Content = stripBadRunes(m.Content)
		if len(m.Content) > MaxAssistantMessageBytes {
			return Errorf(EINVALID, "The reply is %d KiB; the limit is %d KiB.",
				(len(m.Content)+1023)/1024, MaxAssistantMessageBytes>>10)
		}
		switch m.Status {
		case StatusComplete, StatusStopped, StatusFailed:
		default:
			return Errorf(EINVALID, "Unknown message status %q.", m.Status)
		}
	default:
		return Errorf(EINVALID, "Unknown role %q; use user or assistant.", m.Role)
	}
	return nil
}

// CreateMessage appends a message to a thread and marks the thread active.
// Returns ErrInvalid for bad content and ErrNotFound for an unknown thread.
// The status defaults to complete; an assistant reply over
// MaxAssistantMessageBytes is cut to the limit (at a character boundary),
// as a reply is stored whatever its length.
func (db *DB) CreateMessage(ctx context.Context, in MessageCreate) (*Message, error) {
	if in.Status == "" {
		in.Status = StatusComplete
	}
	if in.Role == RoleAssistant && len(in.Content) > MaxAssistantMessageBytes {
		in.Content = strings.ToValidUTF8(in.Content[:MaxAssistantMessageBytes], "")
	}
	now := db.now()
	m := &Message{ID: newID(), ThreadID: in.ThreadID, Role: in.Role, Content: in.Content,
		Status: in.Status, Error: in.Error, Model: in.Model, InputTokens: in.InputTokens,
		OutputTokens: in.OutputTokens, ResponseID: in.ResponseID, ReplyTo: in.ReplyTo, CreatedAt: now}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	var by any // a person's message records who sent it; a model's reply nobody
	if m.Role == RoleUser {
		by = actor(ctx)
	}
	err := db.inTx(ctx, func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE threads SET updated_at = ? WHERE id = ?`, formatTime(now), in.ThreadID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("thread %s: %w", in.ThreadID, ErrNotFound)
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO messages (id, thread_id, role, content, status, error, model,
			    input_tokens, output_tokens, response_id, reply_to, created_at, created_by)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''), ?, ?)`,
			m.ID, m.ThreadID, m.Role, m.Content, m.Status, m.Error, m.Model,
			m.InputTokens, m.OutputTokens, m.ResponseID, m.ReplyTo, formatTime(now), by)
		if violationOf(err) == foreignKeyViolation {
			return fmt.Errorf("message it replies to: %w", ErrNotFound)
		}
		if violationOf(err) == uniqueViolation {
			return Errorf(ECONFLICT, "Message %s already has a reply.", in.ReplyTo)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create message: %w", err)
	}
	return m, nil
}

const messageColumns = `id, thread_id, role, content, status, error, model, input_tokens,
	output_tokens, response_id, COALESCE(reply_to, ''), pinned, created_at`

func scanMessage(s scanner) (*Message, error) {
	var m Message
	var created string
	if err := s.Scan(&m.ID, &m.ThreadID, &m.Role, &m.Content, &m.Status, &m.Error, &m.Model,
		&m.InputTokens, &m.OutputTokens, &m.ResponseID, &m.ReplyTo, &m.Pinned, &created); err != nil {
		return nil, err
	}
	m.CreatedAt = parseTime(created)
	return &m, nil
}

// FindMessageByID returns a message of a thread, or ErrNotFound.
func (db *DB) FindMessageByID(ctx context.Context, threadID, id string) (*Message, error) {
	m, err := scanMessage(db.readRow(ctx,
		`SELECT `+messageColumns+` FROM messages WHERE id = ? AND thread_id = ?`, id, threadID))
	if err != nil {
		return nil, findErr(err, "message %s", id)
	}
	return m, nil
}

// MessageFilter selects messages for FindMessages.
type MessageFilter struct {
	ThreadID string
	Last     int // only the last N messages when > 0
}

// FindMessages returns a thread's messages, oldest first.
func (db *DB) FindMessages(ctx context.Context, f MessageFilter) ([]*Message, error) {
	q := `SELECT ` + messageColumns + ` FROM messages WHERE thread_id = ? ORDER BY created_at, id`
	args := []any{f.ThreadID}
	if f.Last > 0 {
		q = `SELECT * FROM (SELECT ` + messageColumns + ` FROM messages WHERE thread_id = ?
		     ORDER BY created_at DESC, id DESC LIMIT ?) AS last ORDER BY created_at, id`
		args = append(args, f.Last)
	}
	msgs, err := scanAll(scanMessage)(db.readRows(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("find messages: %w", err)
	}
	return msgs, nil
}

// DeleteFailedReply removes a failed assistant reply so that it can be
// generated again. Returns ErrNotFound unless id names a failed reply.
func (db *DB) DeleteFailedReply(ctx context.Context, threadID, id string) error {
	res, err := db.write.ExecContext(ctx,
		`DELETE FROM messages WHERE id = ? AND thread_id = ? AND role = 'assistant' AND status = 'failed'`, id, threadID)
	if err != nil {
		return fmt.Errorf("delete failed reply %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("failed reply %s: %w", id, ErrNotFound)
	}
	return nil
}

// FindReply returns the assistant message replying to a user message, or
// ErrNotFound if there is none yet.
func (db *DB) FindReply(ctx context.Context, threadID, userMessageID string) (*Message, error) {
	m, err := scanMessage(db.readRow(ctx,
		`SELECT `+messageColumns+` FROM messages WHERE reply_to = ? AND thread_id = ?`, userMessageID, threadID))
	if err != nil {
		return nil, findErr(err, "reply to %s", userMessageID)
	}
	return m, nil
}

// FindMessageHeads returns a thread's messages, oldest first, with only
// ID, ThreadID, Role, Status and Pinned filled: enough to tell what changed
// since a page was rendered, at a fraction of the cost of FindMessages.
func (db *DB) FindMessageHeads(ctx context.Context, threadID string) ([]*Message, error) {
	var rev int64
	if err := db.readRow(ctx, `SELECT messages_rev FROM threads WHERE id = ?`, threadID).Scan(&rev); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil // no thread, no messages
		}
		return nil, fmt.Errorf("find message heads: %w", err)
	}
	return db.FindMessageHeadsOf(ctx, &Thread{ID: threadID, MessagesRev: rev})
}

// FindMessageHeadsOf is FindMessageHeads for a thread as read before
// (t.ID and t.MessagesRev): when no message changed since, it answers from
// what it read last time, without reading the messages again.
func (db *DB) FindMessageHeadsOf(ctx context.Context, t *Thread) ([]*Message, error) {
	heads, ok := db.heads.get(t.ID, t.MessagesRev)
	if !ok {
		// Role and status come as numbers (their CHECK constraints list
		// every value): the driver copies every text value it returns.
		rows, err := db.readRows(ctx, `SELECT id, CASE role WHEN 'user' THEN 0 ELSE 1 END,
			CASE status WHEN 'complete' THEN 0 WHEN 'stopped' THEN 1 ELSE 2 END, pinned
			FROM messages WHERE thread_id = ? ORDER BY created_at, id`, t.ID)
		if err != nil {
			return nil, fmt.Errorf("find message heads: %w", err)
		}
		defer rows.Close()
		heads = []Message{}
		var role, status int64 // database/sql assigns an int64 as it is; an int goes through a string
		for rows.Next() {
			m := Message{ThreadID: t.ID}
			if err := rows.Scan(&m.ID, &role, &status, &m.Pinned); err != nil {
				return nil, fmt.Errorf("find message heads: %w", err)
			}
			m.Role = [...]Role{RoleUser, RoleAssistant}[role]
			m.Status = [...]MessageStatus{StatusComplete, StatusStopped, StatusFailed}[status]
			heads = append(heads, m)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("find message heads: %w", err)
		}
		// Read after t's revision, the heads are at least that new.
		db.heads.put(t.ID, t.MessagesRev, heads)
	}
	// The callers' own copies: the kept heads never change.
	return pointers(slices.Clone(heads)), nil
}
