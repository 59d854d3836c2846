package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MemberRole is what a member may do in a workspace.
type MemberRole string

// Roles, from most to least power.
const (
	// RoleOwner manages members, invites and settings, and edits.
	RoleOwner MemberRole = "owner"
	// RoleEditor brainstorms, edits, plans and shares.
	RoleEditor MemberRole = "editor"
	// RoleViewer reads and comments.
	RoleViewer MemberRole = "viewer"
)

// Validate checks that r is one of the three roles.
func (r MemberRole) Validate() error {
	switch r {
	case RoleOwner, RoleEditor, RoleViewer:
		return nil
	}
	return Errorf(EINVALID, "%q is not a role; use owner, editor or viewer.", string(r))
}

// rank orders roles: a higher rank may do all a lower one may.
func (r MemberRole) rank() int {
	switch r {
	case RoleOwner:
		return 3
	case RoleEditor:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// AtLeast reports whether r may do what min may.
func (r MemberRole) AtLeast(min MemberRole) bool { return r.rank() >= min.rank() && min.rank() > 0 }

// Membership is a user's role in a workspace, with the names pages show.
type Membership struct {
	WorkspaceID   string
	UserID        string
	Role          MemberRole
	CreatedAt     time.Time
	WorkspaceName string
	UserName      string
	UserEmail     string
}

// CreateWorkspace creates a workspace. Returns ErrInvalid for a bad name.
func (db *DB) CreateWorkspace(ctx context.Context, name string) (*Workspace, error) {
	name, err := normalizeName("workspace", "workspace name", name)
	if err != nil {
		return nil, err
	}
	w := &Workspace{ID: newID(), Name: name, CreatedAt: db.now()}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)`,
		w.ID, w.Name, formatTime(w.CreatedAt)); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	return w, nil
}

// FindWorkspaceByName returns the oldest workspace named name (compared
// without case), or ErrNotFound.
func (db *DB) FindWorkspaceByName(ctx context.Context, name string) (*Workspace, error) {
	var w Workspace
	var created string
	err := db.read.QueryRowContext(ctx,
		`SELECT id, name, created_at FROM workspaces WHERE name = ? COLLATE NOCASE ORDER BY created_at, id LIMIT 1`, name).
		Scan(&w.ID, &w.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "No workspace is named %q.", name)
	} else if err != nil {
		return nil, fmt.Errorf("find workspace %q: %w", name, err)
	}
	w.CreatedAt = parseTime(created)
	return &w, nil
}

// AddMember gives a user a role in a workspace. Returns ErrInvalid for a
// bad role, ErrNotFound for an unknown user or workspace and ErrConflict
// if the user is a member already.
func (db *DB) AddMember(ctx context.Context, workspaceID, userID string, role MemberRole) error {
	if err := role.Validate(); err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *txn) error { return db.addMember(ctx, tx, workspaceID, userID, role) })
}

func (db *DB) addMember(ctx context.Context, tx *txn, workspaceID, userID string, role MemberRole) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, ?)`,
		workspaceID, userID, role, formatTime(db.now()))
	switch {
	case violationOf(err) == uniqueViolation:
		return Errorf(ECONFLICT, "This person is already a member of the workspace.")
	case violationOf(err) == foreignKeyViolation:
		return fmt.Errorf("add member: user or workspace: %w", ErrNotFound)
	case err != nil:
		return fmt.Errorf("add member: %w", err)
	}
	return nil
}

const membershipQuery = `SELECT m.workspace_id, m.user_id, m.role, m.created_at, w.name, u.name, u.email
	FROM memberships m JOIN workspaces w ON w.id = m.workspace_id JOIN users u ON u.id = m.user_id`

func scanMembership(s scanner) (*Membership, error) {
	var m Membership
	var created string
	if err := s.Scan(&m.WorkspaceID, &m.UserID, &m.Role, &created, &m.WorkspaceName, &m.UserName, &m.UserEmail); err != nil {
		return nil, err
	}
	m.CreatedAt = parseTime(created)
	return &m, nil
}

// FindMembership returns a user's membership of a workspace, or
// ErrNotFound if they are not a member.
func (db *DB) FindMembership(ctx context.Context, workspaceID, userID string) (*Membership, error) {
	m, err := scanMembership(db.readRow(ctx, membershipQuery+` WHERE m.workspace_id = ? AND m.user_id = ?`, workspaceID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("membership: %w", ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find membership: %w", err)
	}
	return m, nil
}

// MembershipFilter selects memberships for FindMemberships; set one field.
type MembershipFilter struct {
	WorkspaceID string // the workspace's members, owners first, then by name
	UserID      string // the user's workspaces, by name
}

// FindMemberships lists the members of a workspace or the workspaces of a
// user.
func (db *DB) FindMemberships(ctx context.Context, f MembershipFilter) ([]*Membership, error) {
	var rows *sql.Rows
	var err error
	switch {
	case f.WorkspaceID != "":
		rows, err = db.readRows(ctx, membershipQuery+` WHERE m.workspace_id = ?
			ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, u.name COLLATE NOCASE, u.id`, f.WorkspaceID)
	case f.UserID != "":
		rows, err = db.readRows(ctx, membershipQuery+` WHERE m.user_id = ? ORDER BY w.name COLLATE NOCASE, w.id`, f.UserID)
	default:
		return nil, errors.New("find memberships: a workspace or a user is required")
	}
	out, err := scanAll(scanMembership)(rows, err)
	if err != nil {
		return nil, fmt.Errorf("find memberships: %w", err)
	}
	return out, nil
}

// ChangeRole gives a member another role. Returns ErrInvalid for a bad
// role, ErrNotFound if the user is not a member and ErrConflict if the
// member is the workspace's last owner and would stop being one.
func (db *DB) ChangeRole(ctx context.Context, workspaceID, userID string, role MemberRole) (*Membership, error) {
	if err := role.Validate(); err != nil {
		return nil, err
	}
	err := db.inTx(ctx, func(tx *txn) error {
		if err := db.keepAnOwner(ctx, tx, workspaceID, userID, role); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE memberships SET role = ? WHERE workspace_id = ? AND user_id = ?`, role, workspaceID, userID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return db.FindMembership(ctx, workspaceID, userID)
}

// RemoveMember takes a user out of a workspace and revokes their tokens
// for it. Returns ErrNotFound if they are not a member and ErrConflict if
// they are its last owner.
func (db *DB) RemoveMember(ctx context.Context, workspaceID, userID string) error {
	return db.inTx(ctx, func(tx *txn) error {
		if err := db.keepAnOwner(ctx, tx, workspaceID, userID, ""); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID); err != nil {
			return fmt.Errorf("remove member: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE workspace_id = ? AND user_id = ? AND revoked_at IS NULL`,
			formatTime(db.now()), workspaceID, userID); err != nil {
			return fmt.Errorf("remove member: revoke tokens: %w", err)
		}
		return nil
	})
}

// keepAnOwner checks, inside the write transaction, that userID is a member
// and that giving them newRole ("" for removal) leaves the workspace an owner.
func (db *DB) keepAnOwner(ctx context.Context, tx *txn, workspaceID, userID string, newRole MemberRole) error {
	var role MemberRole
	var name string
	err := tx.QueryRowContext(ctx, `SELECT m.role, u.name FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = ? AND m.user_id = ?`, workspaceID, userID).Scan(&role, &name)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("member %s: %w", userID, ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("find member: %w", err)
	}
	if role != RoleOwner || newRole == RoleOwner {
		return nil
	}
	var owners int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM memberships WHERE workspace_id = ? AND role = 'owner'`, workspaceID).Scan(&owners); err != nil {
		return fmt.Errorf("count owners: %w", err)
	}
	if owners <= 1 {
		return Errorf(ECONFLICT, "%s is the last owner of this workspace; make another member owner first.", name)
	}
	return nil
}
