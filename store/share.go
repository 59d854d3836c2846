package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ShareMode says what a share link lets its holder do.
type ShareMode string

// Share modes.
const (
	ShareView   ShareMode = "view"   // read only
	ShareReview ShareMode = "review" // read and comment as a guest
)

// shareTokenBytes is the randomness of a share token: 192 bits, 32
// characters of base64url.
const shareTokenBytes = 24

// MaxShareLabelLen is the longest label of a share link, in characters.
const MaxShareLabelLen = 100

// shareExpiries are the lifetimes a share link may have, by the names the
// pages and the API use.
var shareExpiries = map[string]time.Duration{
	"1d":    24 * time.Hour,
	"7d":    7 * 24 * time.Hour,
	"30d":   30 * 24 * time.Hour,
	"never": 0,
}

// ShareLink is a link that shows a handoff and its latest plan to whoever
// holds its token, without an account. Only the token's SHA-256 is stored;
// TokenLast4 tells links apart.
type ShareLink struct {
	ID           string
	WorkspaceID  string
	HandoffID    string
	PlanID       string // set when made from a plan
	Mode         ShareMode
	Label        string
	TokenLast4   string
	CreatedBy    Actor
	CreatedAt    time.Time
	ExpiresAt    time.Time // zero: never
	RevokedAt    time.Time // zero: not revoked
	Views        int
	LastViewedAt time.Time // zero: never viewed
}

// Active reports whether the link works at now: neither revoked nor expired.
func (l *ShareLink) Active(now time.Time) bool {
	return l.RevokedAt.IsZero() && (l.ExpiresAt.IsZero() || now.Before(l.ExpiresAt))
}

// ShareCreate is the input of CreateShareLink. Set HandoffID or PlanID.
type ShareCreate struct {
	HandoffID string
	PlanID    string
	Mode      ShareMode
	ExpiresIn string // a key of shareExpiries
	Label     string
	By        Actor
}

// Validate trims and checks the input: a known mode and expiry, a label of
// at most MaxShareLabelLen characters, a member as creator.
func (in *ShareCreate) Validate() error {
	switch in.Mode {
	case ShareView, ShareReview:
	default:
		return Errorf(EINVALID, "A link's mode is view or review, not %q.", in.Mode)
	}
	if _, ok := shareExpiries[in.ExpiresIn]; !ok {
		return Errorf(EINVALID, "A link expires in 1d, 7d, 30d or never, not %q.", in.ExpiresIn)
	}
	in.Label = strings.TrimSpace(in.Label)
	if n := utf8.RuneCountInString(in.Label); n > MaxShareLabelLen {
		return Errorf(EINVALID, "The label is %d characters long; keep it to %d.", n, MaxShareLabelLen)
	}
	if unsafeText(in.Label) || strings.Contains(in.Label, "\n") {
		return Errorf(EINVALID, "The label contains control characters.")
	}
	if in.By.Guest {
		return Errorf(EFORBIDDEN, "Guests cannot make links.")
	}
	if (in.HandoffID == "") == (in.PlanID == "") {
		return Errorf(EINVALID, "A link is made from a handoff or from a plan.")
	}
	return in.By.Validate()
}

// HashShareToken is how a token is stored and looked up: hex SHA-256.
func HashShareToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateShareLink makes a link and returns it with its token, which is
// not stored and cannot be shown again. Returns ErrNotFound if the handoff
// or plan does not exist, EINVALID for a bad mode, expiry or label.
func (db *DB) CreateShareLink(ctx context.Context, in ShareCreate) (*ShareLink, string, error) {
	if err := in.Validate(); err != nil {
		return nil, "", err
	}
	b := make([]byte, shareTokenBytes)
	rand.Read(b) // never fails: crypto/rand panics rather than return weak bytes
	token := base64.RawURLEncoding.EncodeToString(b)
	now := db.now()
	l := &ShareLink{ID: newID(), HandoffID: in.HandoffID, PlanID: in.PlanID, Mode: in.Mode, Label: in.Label,
		TokenLast4: token[len(token)-4:], CreatedBy: in.By, CreatedAt: now}
	if d := shareExpiries[in.ExpiresIn]; d > 0 {
		l.ExpiresAt = now.Add(d)
	}
	err := db.inTx(ctx, func(tx *txn) error {
		var err error
		if in.PlanID != "" {
			err = tx.QueryRowContext(ctx, `SELECT p.handoff_id, h.workspace_id FROM plans p JOIN handoffs h ON h.id = p.handoff_id WHERE p.id = ?`,
				in.PlanID).Scan(&l.HandoffID, &l.WorkspaceID)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("plan %s: %w", in.PlanID, ErrNotFound)
			}
		} else {
			err = tx.QueryRowContext(ctx, `SELECT workspace_id FROM handoffs WHERE id = ?`, in.HandoffID).Scan(&l.WorkspaceID)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("handoff %s: %w", in.HandoffID, ErrNotFound)
			}
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO share_links (id, workspace_id, handoff_id, plan_id, mode, label, token_hash, token_last4,
			     created_by_user_id, created_by_name, created_at, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			l.ID, l.WorkspaceID, l.HandoffID, nullString(l.PlanID), l.Mode, l.Label, HashShareToken(token), l.TokenLast4,
			nullString(in.By.UserID), in.By.Name, formatTime(now), nullTime(l.ExpiresAt)); err != nil {
			return err
		}
		return addActivity(ctx, tx, l.HandoffID, ActivityShared, in.By, string(l.Mode)+" link", now)
	})
	if err != nil {
		return nil, "", fmt.Errorf("create share link: %w", err)
	}
	return l, token, nil
}

const shareColumns = `id, workspace_id, handoff_id, COALESCE(plan_id, ''), mode, label, token_last4,
	COALESCE(created_by_user_id, ''), created_by_name, created_at, COALESCE(expires_at, ''), COALESCE(revoked_at, ''),
	views, COALESCE(last_viewed_at, '')`

func scanShareLink(s scanner, hash *string) (*ShareLink, error) {
	var l ShareLink
	var created, expires, revoked, viewed string
	dest := []any{&l.ID, &l.WorkspaceID, &l.HandoffID, &l.PlanID, &l.Mode, &l.Label, &l.TokenLast4,
		&l.CreatedBy.UserID, &l.CreatedBy.Name, &created, &expires, &revoked, &l.Views, &viewed}
	if hash != nil {
		dest = append(dest, hash)
	}
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	l.CreatedAt = parseTime(created)
	for _, t := range []struct {
		s   string
		dst *time.Time
	}{{expires, &l.ExpiresAt}, {revoked, &l.RevokedAt}, {viewed, &l.LastViewedAt}} {
		if t.s != "" {
			*t.dst = parseTime(t.s)
		}
	}
	return &l, nil
}

// FindShareLinkByToken returns the active link a token opens. A wrong,
// revoked or expired token all get the same ErrNotFound, so that the
// answer tells a guesser nothing. The stored hash is compared in constant
// time.
func (db *DB) FindShareLinkByToken(ctx context.Context, token string) (*ShareLink, error) {
	notFound := fmt.Errorf("share link: %w", ErrNotFound)
	if len(token) < 22 || len(token) > 64 {
		return nil, notFound
	}
	want := HashShareToken(token)
	var got string
	l, err := scanShareLink(db.readRow(ctx, `SELECT `+shareColumns+`, token_hash FROM share_links WHERE token_hash = ?`, want), &got)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	} else if err != nil {
		return nil, fmt.Errorf("find share link: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 || !l.Active(db.now()) {
		return nil, notFound
	}
	return l, nil
}

// RecordShareView counts a view of a link's page.
func (db *DB) RecordShareView(ctx context.Context, id string) error {
	_, err := db.write.ExecContext(ctx, `UPDATE share_links SET views = views + 1, last_viewed_at = ? WHERE id = ?`,
		formatTime(db.now()), id)
	if err != nil {
		return fmt.Errorf("record view of share link %s: %w", id, err)
	}
	return nil
}

// ShareFilter selects links for FindShareLinks.
type ShareFilter struct {
	WorkspaceID string // required
	HandoffID   string // optional
}

// FindShareLinks returns the workspace's links, newest first, revoked and
// expired ones included (Active tells them apart).
func (db *DB) FindShareLinks(ctx context.Context, f ShareFilter) ([]*ShareLink, error) {
	q := `SELECT ` + shareColumns + ` FROM share_links WHERE workspace_id = ?`
	args := []any{f.WorkspaceID}
	if f.HandoffID != "" {
		q += ` AND handoff_id = ?`
		args = append(args, f.HandoffID)
	}
	rows, err := db.readRows(ctx, q+` ORDER BY created_at DESC, id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("find share links: %w", err)
	}
	defer rows.Close()
	var out []*ShareLink
	for rows.Next() {
		l, err := scanShareLink(rows, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// RevokeShareLink ends a link of the workspace for good; revoking twice is
// not an error. Returns ErrNotFound if the workspace has no such link.
func (db *DB) RevokeShareLink(ctx context.Context, workspaceID, id string) (*ShareLink, error) {
	var l *ShareLink
	err := db.inTx(ctx, func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE share_links SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND workspace_id = ?`,
			formatTime(db.now()), id, workspaceID)
		if n, _ := res.RowsAffected(); err == nil && n == 0 {
			return fmt.Errorf("share link %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		l, err = scanShareLink(tx.QueryRowContext(ctx, `SELECT `+shareColumns+` FROM share_links WHERE id = ?`, id), nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("revoke share link: %w", err)
	}
	return l, nil
}
