package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// FindSessionWithWorkspaces is FindSessionBySecret that also returns the
// user's workspaces, as FindMemberships by user does, in the same order.
// Every page needs both, the session to know who asks and the workspaces
// for the header's switcher. The session's own row is read on every call,
// so that an ended session ends at once; the user and their workspaces
// are kept under users.access_rev, which the database moves on whenever
// the user, their memberships or those workspaces change (migration 0016),
// and read again, in one statement, when it has.
func (db *DB) FindSessionWithWorkspaces(ctx context.Context, secret string) (*Session, []*Membership, error) {
	id, now := hashSecret(secret), formatTime(db.now())
	var (
		s                      Session
		wsID                   sql.NullString
		created, seen, expires string
		rev                    int64
	)
	err := db.readRow(ctx, `SELECT s.user_id, s.workspace_id, s.created_at, s.last_seen_at, s.expires_at, u.access_rev
		 FROM sessions s JOIN users u ON u.id = s.user_id
		 WHERE s.id = ? AND s.expires_at > ?`, id, now).Scan(&s.UserID, &wsID, &created, &seen, &expires, &rev)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, Errorf(EUNAUTHORIZED, "The session has ended; sign in again.")
	} else if err != nil {
		return nil, nil, fmt.Errorf("find session: %w", err)
	}
	access, ok := db.access.get(s.UserID, rev)
	if !ok {
		return db.findSessionWithWorkspaces(ctx, id, now)
	}
	s.ID, s.WorkspaceID = id, wsID.String
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = parseTime(created), parseTime(seen), parseTime(expires)
	u := access.user
	s.User = &u
	ms := pointers(slices.Clone(access.memberships))
	s.setRole(ms)
	return &s, ms, nil
}

// userAccess is what the access cache keeps of a user: the user and their
// memberships, in FindMemberships' order.
type userAccess struct {
	user        User
	memberships []Membership
}

// findSessionWithWorkspaces reads the session with hashed secret id, its
// user and the user's workspaces in one statement: one row per workspace
// of the user (one row with none). It keeps the user and the workspaces
// in the access cache under the revision read with them.
func (db *DB) findSessionWithWorkspaces(ctx context.Context, id, now string) (*Session, []*Membership, error) {
	rows, err := db.readRows(ctx,
		`SELECT `+userColumns+`, s.id, s.workspace_id, s.created_at, s.last_seen_at, s.expires_at, u.access_rev,
		        COALESCE(m.workspace_id, ''), COALESCE(m.role, ''), COALESCE(m.created_at, ''), COALESCE(w.name, '')
		 FROM sessions s
		 JOIN users u ON u.id = s.user_id
		 LEFT JOIN memberships m ON m.user_id = s.user_id
		 LEFT JOIN workspaces w ON w.id = m.workspace_id
		 WHERE s.id = ? AND s.expires_at > ?`, id, now)
	if err != nil {
		return nil, nil, fmt.Errorf("find session: %w", err)
	}
	defer rows.Close()
	var (
		s   *Session
		ms  []*Membership
		rev int64
	)
	for rows.Next() {
		var (
			sess                                Session
			wsID                                sql.NullString
			created, seen, expires              string
			mWorkspace, mRole, mCreated, wsName string
		)
		u, err := scanUser(rows, &sess.ID, &wsID, &created, &seen, &expires, &rev, &mWorkspace, &mRole, &mCreated, &wsName)
		if err != nil {
			return nil, nil, fmt.Errorf("find session: %w", err)
		}
		if s == nil {
			sess.User, sess.UserID, sess.WorkspaceID = u, u.ID, wsID.String
			sess.CreatedAt, sess.LastSeenAt, sess.ExpiresAt = parseTime(created), parseTime(seen), parseTime(expires)
			s = &sess
		}
		if mWorkspace == "" {
			continue // a user in no workspace
		}
		ms = append(ms, &Membership{WorkspaceID: mWorkspace, UserID: u.ID, Role: MemberRole(mRole), CreatedAt: parseTime(mCreated),
			WorkspaceName: wsName, UserName: u.Name, UserEmail: u.Email})
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("find session: %w", err)
	}
	if s == nil {
		return nil, nil, Errorf(EUNAUTHORIZED, "The session has ended; sign in again.")
	}
	// FindMemberships' order: by name, ignoring ASCII case (SQLite's
	// NOCASE), then id.
	slices.SortFunc(ms, func(a, b *Membership) int {
		if c := compareNoCase(a.WorkspaceName, b.WorkspaceName); c != 0 {
			return c
		}
		return strings.Compare(a.WorkspaceID, b.WorkspaceID)
	})
	// The cache keeps copies: the caller may change what it was given.
	db.access.put(s.UserID, rev, userAccess{*s.User, kept(ms)})
	s.setRole(ms)
	return s, ms, nil
}

// setRole sets FindSessionBySecret's role and workspace name: the user's
// membership of the session's workspace, if they still have it; otherwise
// the session has no workspace.
func (s *Session) setRole(ms []*Membership) {
	for _, m := range ms {
		if m.WorkspaceID == s.WorkspaceID {
			s.Role, s.WorkspaceName = m.Role, m.WorkspaceName
		}
	}
	if s.Role == "" {
		s.WorkspaceID = ""
	}
}

// compareNoCase compares a and b as SQLite's NOCASE collation does:
// bytewise, with the ASCII letters A–Z folded to lower case.
func compareNoCase(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := lowerASCII(a[i]), lowerASCII(b[i])
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
