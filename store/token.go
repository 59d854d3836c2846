package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// TokenPrefix starts every API token, so that secret scanners and people
// recognise one.
const TokenPrefix = "baton_"

// TokenScope is what an API token may do.
type TokenScope string

// Token scopes.
const (
	// ScopeRead allows reading only (GET).
	ScopeRead TokenScope = "read"
	// ScopeWrite allows what the user's role allows.
	ScopeWrite TokenScope = "write"
)

// Validate checks that s is read or write.
func (s TokenScope) Validate() error {
	if s != ScopeRead && s != ScopeWrite {
		return Errorf(EINVALID, "%q is not a token scope; use read or write.", string(s))
	}
	return nil
}

// Token is an API token: it acts for one user in one workspace. The
// secret is shown once, when it is made; the store keeps its SHA-256 and
// its last four characters for display.
type Token struct {
	ID            string
	UserID        string
	WorkspaceID   string
	WorkspaceName string
	Name          string
	Scope         TokenScope
	Last4         string
	CreatedAt     time.Time
	ExpiresAt     time.Time // zero: never
	LastUsedAt    time.Time // zero: never used
	RevokedAt     time.Time // zero: live

	// Filled by FindTokenBySecret.
	User *User
	// Role is the user's current role in the workspace.
	Role MemberRole
}

// Check returns ErrUnauthorized, with a message saying why, if the token
// is revoked or expired at now.
func (t *Token) Check(now time.Time) error {
	switch {
	case !t.RevokedAt.IsZero():
		return Errorf(EUNAUTHORIZED, "The token %q was revoked on %s; create a new one in Settings › API tokens.",
			t.Name, t.RevokedAt.Format("Jan 2 2006"))
	case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt):
		return Errorf(EUNAUTHORIZED, "The token %q expired on %s; create a new one in Settings › API tokens.",
			t.Name, t.ExpiresAt.Format("Jan 2 2006"))
	}
	return nil
}

// TokenCreate is the input of CreateToken.
type TokenCreate struct {
	UserID      string
	WorkspaceID string
	Name        string
	Scope       TokenScope
	ExpiresAt   time.Time // zero: never
}

// Validate normalises the name and checks the scope.
func (in *TokenCreate) Validate() error {
	var err error
	if in.Name, err = normalizeName("name", "token name", in.Name); err != nil {
		return err
	}
	return in.Scope.Validate()
}

// CreateToken makes an API token and returns it with its secret, which is
// not stored: show it once. Returns ErrInvalid for bad input or an expiry
// in the past and ErrNotFound if the user is not a member of the workspace.
func (db *DB) CreateToken(ctx context.Context, in TokenCreate) (*Token, string, error) {
	if err := in.Validate(); err != nil {
		return nil, "", err
	}
	now := db.now()
	if !in.ExpiresAt.IsZero() && !in.ExpiresAt.After(now) {
		return nil, "", Errorf(EINVALID, "The expiry is in the past; choose a later date or none.")
	}
	secret, hash := newSecret(TokenPrefix)
	t := &Token{ID: newID(), UserID: in.UserID, WorkspaceID: in.WorkspaceID, Name: in.Name, Scope: in.Scope,
		Last4: secret[len(secret)-4:], CreatedAt: now, ExpiresAt: in.ExpiresAt}
	err := db.inTx(ctx, func(tx *txn) error {
		err := tx.QueryRowContext(ctx, `SELECT w.name FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
			WHERE m.user_id = ? AND m.workspace_id = ?`, in.UserID, in.WorkspaceID).Scan(&t.WorkspaceName)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("create token: the user is not a member of the workspace: %w", ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("create token: %w", err)
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO api_tokens (id, user_id, workspace_id, name, scope, token_hash, last4, created_at, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.UserID, t.WorkspaceID, t.Name, t.Scope, hash, t.Last4, formatTime(now), nullTime(t.ExpiresAt))
		if err != nil {
			return fmt.Errorf("create token: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

const tokenColumns = `t.id, t.user_id, t.workspace_id, w.name, t.name, t.scope, t.last4, t.created_at,
	COALESCE(t.expires_at, ''), COALESCE(t.last_used_at, ''), COALESCE(t.revoked_at, '')`

func scanToken(s scanner, extra ...any) (*Token, error) {
	var t Token
	var created, expires, used, revoked string
	if err := s.Scan(append([]any{&t.ID, &t.UserID, &t.WorkspaceID, &t.WorkspaceName, &t.Name, &t.Scope, &t.Last4,
		&created, &expires, &used, &revoked}, extra...)...); err != nil {
		return nil, err
	}
	t.CreatedAt = parseTime(created)
	for _, p := range []struct {
		s string
		t *time.Time
	}{{expires, &t.ExpiresAt}, {used, &t.LastUsedAt}, {revoked, &t.RevokedAt}} {
		if p.s != "" {
			*p.t = parseTime(p.s)
		}
	}
	return &t, nil
}

// FindTokenBySecret returns the token whose secret is secret, with its
// user and the user's current role in the token's workspace, in one
// indexed read by the secret's SHA-256. Returns ErrUnauthorized for an
// unknown secret, for a revoked or expired token (saying which) and when
// the user is no longer a member of the workspace.
func (db *DB) FindTokenBySecret(ctx context.Context, secret string) (*Token, error) {
	var role sql.NullString
	var u User
	var uCreated, uChanged string
	t, err := scanToken(db.readRow(ctx,
		`SELECT `+tokenColumns+`, `+userColumns+`, m.role
		 FROM api_tokens t
		 JOIN workspaces w ON w.id = t.workspace_id
		 JOIN users u ON u.id = t.user_id
		 LEFT JOIN memberships m ON m.user_id = t.user_id AND m.workspace_id = t.workspace_id
		 WHERE t.token_hash = ?`, hashSecret(secret)),
		&u.ID, &u.Email, &u.Name, &u.passwordHash, &uCreated, &uChanged, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(EUNAUTHORIZED, "The token is not valid; check that it was copied whole.")
	} else if err != nil {
		return nil, fmt.Errorf("find token: %w", err)
	}
	if err := t.Check(db.now()); err != nil {
		return nil, err
	}
	if !role.Valid {
		return nil, Errorf(EUNAUTHORIZED, "The token's owner is no longer a member of %s.", t.WorkspaceName)
	}
	u.CreatedAt, u.PasswordChangedAt = parseTime(uCreated), parseTime(uChanged)
	t.User, t.Role = &u, MemberRole(role.String)
	return t, nil
}

// TouchToken records that a token was used now. Callers do it at most once
// a minute or so per token: it is a write.
func (db *DB) TouchToken(ctx context.Context, id string) error {
	if _, err := db.write.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, formatTime(db.now()), id); err != nil {
		return fmt.Errorf("touch token: %w", err)
	}
	return nil
}

// TokenFilter selects tokens for FindTokens; empty fields match all.
type TokenFilter struct {
	UserID      string
	WorkspaceID string
}

// FindTokens lists tokens, revoked ones included, newest first.
func (db *DB) FindTokens(ctx context.Context, f TokenFilter) ([]*Token, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens t JOIN workspaces w ON w.id = t.workspace_id
		WHERE (? = '' OR t.user_id = ?) AND (? = '' OR t.workspace_id = ?)
		ORDER BY t.created_at DESC, t.id DESC`, f.UserID, f.UserID, f.WorkspaceID, f.WorkspaceID)
	out, err := scanAll(func(s scanner) (*Token, error) { return scanToken(s) })(rows, err)
	if err != nil {
		return nil, fmt.Errorf("find tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes a token for good. With userID set, only that user's
// token is revoked (a person revokes their own; the CLI passes ""). Returns
// ErrNotFound if there is no such token; revoking twice keeps the first time.
func (db *DB) RevokeToken(ctx context.Context, id, userID string) (*Token, error) {
	res, err := db.write.ExecContext(ctx,
		`UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND (? = '' OR user_id = ?)`,
		formatTime(db.now()), id, userID, userID)
	if err != nil {
		return nil, fmt.Errorf("revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, fmt.Errorf("token %s: %w", id, ErrNotFound)
	}
	return scanToken(db.read.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens t JOIN workspaces w ON w.id = t.workspace_id WHERE t.id = ?`, id))
}
