package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Session is a signed-in browser. Its secret lives only in the browser's
// cookie; the store keeps the secret's SHA-256 as the ID.
type Session struct {
	ID          string // hex SHA-256 of the secret
	UserID      string
	WorkspaceID string // the workspace the browser shows; "" if none chosen
	CreatedAt   time.Time
	LastSeenAt  time.Time
	ExpiresAt   time.Time // the absolute end, whatever the activity

	// Filled by FindSessionBySecret.
	User *User
	// Role is the user's role in WorkspaceID; "" when WorkspaceID is empty
	// or the user is no longer a member there.
	Role          MemberRole
	WorkspaceName string
}

// SessionCreate is the input of CreateSession.
type SessionCreate struct {
	UserID      string
	WorkspaceID string        // optional: the workspace to show first
	Lifetime    time.Duration // the absolute lifetime; must be positive
}

// Validate checks the input.
func (in *SessionCreate) Validate() error {
	if in.UserID == "" {
		return Errorf(EINVALID, "A session needs a user.")
	}
	if in.Lifetime <= 0 {
		return Errorf(EINVALID, "A session lifetime must be positive.")
	}
	return nil
}

// CreateSession starts a session and returns it with its secret, which is
// not stored and cannot be recovered: put it in the cookie. Returns
// ErrNotFound for an unknown user or workspace.
func (db *DB) CreateSession(ctx context.Context, in SessionCreate) (*Session, string, error) {
	if err := in.Validate(); err != nil {
		return nil, "", err
	}
	secret, id := newSecret("")
	now := db.now()
	s := &Session{ID: id, UserID: in.UserID, WorkspaceID: in.WorkspaceID, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(in.Lifetime)}
	_, err := db.write.ExecContext(ctx,
		`INSERT INTO sessions (id, user_id, workspace_id, created_at, last_seen_at, expires_at) VALUES (?, ?, NULLIF(?, ''), ?, ?, ?)`,
		s.ID, s.UserID, s.WorkspaceID, formatTime(now), formatTime(now), formatTime(s.ExpiresAt))
	if violationOf(err) == foreignKeyViolation {
		return nil, "", fmt.Errorf("create session: user or workspace: %w", ErrNotFound)
	} else if err != nil {
		return nil, "", fmt.Errorf("create session: %w", err)
	}
	return s, secret, nil
}

// FindSessionBySecret returns the live session whose secret is secret,
// with its user and the user's role in the session's workspace, in one
// indexed read. Returns ErrUnauthorized if there is none or it has passed
// its absolute lifetime; the idle timeout is the caller's to check against
// LastSeenAt.
func (db *DB) FindSessionBySecret(ctx context.Context, secret string) (*Session, error) {
	var s Session
	var created, seen, expires string
	var role, wsName sql.NullString
	var wsID sql.NullString
	u, err := scanUser(db.readRow(ctx,
		`SELECT `+userColumns+`, s.id, s.workspace_id, s.created_at, s.last_seen_at, s.expires_at, m.role, w.name
		 FROM sessions s
		 JOIN users u ON u.id = s.user_id
		 LEFT JOIN memberships m ON m.user_id = s.user_id AND m.workspace_id = s.workspace_id
		 LEFT JOIN workspaces w ON w.id = m.workspace_id
		 WHERE s.id = ? AND s.expires_at > ?`, hashSecret(secret), formatTime(db.now())),
		&s.ID, &wsID, &created, &seen, &expires, &role, &wsName)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(EUNAUTHORIZED, "The session has ended; sign in again.")
	} else if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	s.User, s.UserID = u, u.ID
	if role.Valid {
		s.WorkspaceID, s.Role, s.WorkspaceName = wsID.String, MemberRole(role.String), wsName.String
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = parseTime(created), parseTime(seen), parseTime(expires)
	return &s, nil
}

// TouchSession records activity on a session now. Callers do it at most
// once a minute or so per session: it is a write.
func (db *DB) TouchSession(ctx context.Context, id string) error {
	if _, err := db.write.ExecContext(ctx, `UPDATE sessions SET last_seen_at = ? WHERE id = ?`, formatTime(db.now()), id); err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

// SetSessionWorkspace switches the workspace a session shows. Returns
// ErrNotFound if the session's user is not a member of it.
func (db *DB) SetSessionWorkspace(ctx context.Context, id, workspaceID string) error {
	res, err := db.write.ExecContext(ctx,
		`UPDATE sessions SET workspace_id = ? WHERE id = ?
		 AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = sessions.user_id AND m.workspace_id = ?)`,
		workspaceID, id, workspaceID)
	if err != nil {
		return fmt.Errorf("switch workspace: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("switch workspace %s: %w", workspaceID, ErrNotFound)
	}
	return nil
}

// EndSession signs one session out. Ending a session that is gone is not
// an error.
func (db *DB) EndSession(ctx context.Context, id string) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// EndUserSessions signs a user out everywhere except the session with ID
// keep (none when ""), and returns how many sessions ended.
func (db *DB) EndUserSessions(ctx context.Context, userID, keep string) (int, error) {
	res, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id <> ?`, userID, keep)
	if err != nil {
		return 0, fmt.Errorf("end sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// DeleteExpiredSessions removes sessions past their absolute lifetime or
// idle for longer than idle, and returns how many.
func (db *DB) DeleteExpiredSessions(ctx context.Context, idle time.Duration) (int, error) {
	now := db.now()
	res, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at <= ?`,
		formatTime(now), formatTime(now.Add(-idle)))
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
