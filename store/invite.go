package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MaxInviteLifetime is the longest an invite stays valid.
const MaxInviteLifetime = 7 * 24 * time.Hour

// Invite is a single-use link into a workspace with a role.
type Invite struct {
	ID            string
	WorkspaceID   string
	WorkspaceName string
	Role          MemberRole
	CreatedBy     string // user ID; "" if that account is gone
	CreatedAt     time.Time
	ExpiresAt     time.Time
	UsedAt        time.Time // zero until accepted
	UsedBy        string
}

// InviteCreate is the input of CreateInvite.
type InviteCreate struct {
	WorkspaceID string
	Role        MemberRole
	CreatedBy   string
	// Lifetime is how long the link works: more than zero, at most
	// MaxInviteLifetime.
	Lifetime time.Duration
}

// Validate checks the role and the lifetime.
func (in *InviteCreate) Validate() error {
	if err := in.Role.Validate(); err != nil {
		return err
	}
	if in.Lifetime <= 0 || in.Lifetime > MaxInviteLifetime {
		return Errorf(EINVALID, "An invite may last from a moment up to 7 days; choose 1 to 7 days.")
	}
	return nil
}

// CreateInvite makes an invite and returns it with its secret, which goes
// into the link and is not stored. Returns ErrInvalid for a bad role or
// lifetime and ErrNotFound for an unknown workspace.
func (db *DB) CreateInvite(ctx context.Context, in InviteCreate) (*Invite, string, error) {
	if err := in.Validate(); err != nil {
		return nil, "", err
	}
	secret, hash := newSecret("")
	now := db.now()
	inv := &Invite{ID: newID(), WorkspaceID: in.WorkspaceID, Role: in.Role, CreatedBy: in.CreatedBy, CreatedAt: now, ExpiresAt: now.Add(in.Lifetime)}
	_, err := db.write.ExecContext(ctx,
		`INSERT INTO invites (id, token_hash, workspace_id, role, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, NULLIF(?, ''), ?, ?)`,
		inv.ID, hash, inv.WorkspaceID, inv.Role, inv.CreatedBy, formatTime(now), formatTime(inv.ExpiresAt))
	if violationOf(err) == foreignKeyViolation {
		return nil, "", fmt.Errorf("create invite: workspace or user: %w", ErrNotFound)
	} else if err != nil {
		return nil, "", fmt.Errorf("create invite: %w", err)
	}
	return inv, secret, nil
}

const inviteQuery = `SELECT i.id, i.workspace_id, w.name, i.role, COALESCE(i.created_by, ''), i.created_at, i.expires_at,
	COALESCE(i.used_at, ''), COALESCE(i.used_by, '') FROM invites i JOIN workspaces w ON w.id = i.workspace_id`

func scanInvite(s scanner) (*Invite, error) {
	var inv Invite
	var created, expires, used string
	if err := s.Scan(&inv.ID, &inv.WorkspaceID, &inv.WorkspaceName, &inv.Role, &inv.CreatedBy, &created, &expires, &used, &inv.UsedBy); err != nil {
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt = parseTime(created), parseTime(expires)
	if used != "" {
		inv.UsedAt = parseTime(used)
	}
	return &inv, nil
}

// FindInviteBySecret returns the invite a link carries if it can still be
// used. Returns ErrNotFound for an unknown secret and ErrInvalid, with a
// message saying which, for a used or expired one.
func (db *DB) FindInviteBySecret(ctx context.Context, secret string) (*Invite, error) {
	inv, err := scanInvite(db.read.QueryRowContext(ctx, inviteQuery+` WHERE i.token_hash = ?`, hashSecret(secret)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("invite: %w", ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find invite: %w", err)
	}
	if err := inv.Usable(db.now()); err != nil {
		return nil, err
	}
	return inv, nil
}

// Usable says why an invite can no longer be accepted, if it cannot.
func (inv *Invite) Usable(now time.Time) error {
	if !inv.UsedAt.IsZero() {
		return Errorf(EINVALID, "This invite has been used already. Ask an owner of the workspace for a new one.")
	}
	if !now.Before(inv.ExpiresAt) {
		return Errorf(EINVALID, "This invite expired on %s. Ask an owner of the workspace for a new one.", inv.ExpiresAt.Format("Jan 2, 15:04 UTC"))
	}
	return nil
}

// FindInvites lists a workspace's invites that are neither used nor
// expired, newest first.
func (db *DB) FindInvites(ctx context.Context, workspaceID string) ([]*Invite, error) {
	rows, err := db.read.QueryContext(ctx, inviteQuery+` WHERE i.workspace_id = ? AND i.used_at IS NULL AND i.expires_at > ?
		ORDER BY i.created_at DESC, i.id DESC`, workspaceID, formatTime(db.now()))
	out, err := scanAll(scanInvite)(rows, err)
	if err != nil {
		return nil, fmt.Errorf("find invites: %w", err)
	}
	return out, nil
}

// DeleteInvite withdraws an unused invite of a workspace. Returns
// ErrNotFound if there is no such unused invite.
func (db *DB) DeleteInvite(ctx context.Context, workspaceID, id string) error {
	res, err := db.write.ExecContext(ctx, `DELETE FROM invites WHERE id = ? AND workspace_id = ? AND used_at IS NULL`, id, workspaceID)
	if err != nil {
		return fmt.Errorf("delete invite: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("invite %s: %w", id, ErrNotFound)
	}
	return nil
}

// AcceptInvite makes an existing user a member with the invite's role and
// uses the invite up, in one transaction: of two acceptances at once, one
// wins. Returns ErrNotFound for an unknown secret, ErrInvalid for a used or
// expired invite and ErrConflict if the user is a member already (the
// invite stays usable then).
func (db *DB) AcceptInvite(ctx context.Context, secret, userID string) (*Membership, error) {
	var inv *Invite
	err := db.inTx(ctx, func(tx *txn) (err error) {
		inv, err = db.useInvite(ctx, tx, secret, userID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return db.FindMembership(ctx, inv.WorkspaceID, userID)
}

// AcceptInviteAsNewUser creates an account and makes it a member with the
// invite's role, in one transaction. Returns the errors of CreateUser and
// of AcceptInvite; on any error nothing is created.
func (db *DB) AcceptInviteAsNewUser(ctx context.Context, secret string, in UserCreate) (*User, *Membership, error) {
	if err := in.Validate(); err != nil {
		return nil, nil, err
	}
	hash := HashPassword(in.Password)
	var u *User
	var inv *Invite
	err := db.inTx(ctx, func(tx *txn) (err error) {
		if u, err = db.createUser(ctx, tx, in, hash); err != nil {
			return err
		}
		inv, err = db.useInvite(ctx, tx, secret, u.ID)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	m, err := db.FindMembership(ctx, inv.WorkspaceID, u.ID)
	return u, m, err
}

// useInvite marks the invite used by userID and adds the membership.
func (db *DB) useInvite(ctx context.Context, tx *txn, secret, userID string) (*Invite, error) {
	inv, err := scanInvite(tx.QueryRowContext(ctx, inviteQuery+` WHERE i.token_hash = ?`, hashSecret(secret)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("invite: %w", ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("accept invite: %w", err)
	}
	now := db.now()
	if err := inv.Usable(now); err != nil {
		return nil, err
	}
	// The write transaction is immediate: nobody else can use the invite
	// between the check above and this update.
	if _, err := tx.ExecContext(ctx, `UPDATE invites SET used_at = ?, used_by = ? WHERE id = ? AND used_at IS NULL`,
		formatTime(now), userID, inv.ID); err != nil {
		return nil, fmt.Errorf("accept invite: %w", err)
	}
	if err := db.addMember(ctx, tx, inv.WorkspaceID, userID, inv.Role); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, Errorf(ECONFLICT, "You are already a member of %s.", inv.WorkspaceName)
		}
		return nil, err
	}
	inv.UsedAt, inv.UsedBy = now, userID
	return inv, nil
}
