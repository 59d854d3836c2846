package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// FindSessionWithWorkspaces is FindSessionBySecret that also returns the
// user's workspaces, as FindMemberships by user does, in the same order.
// Every page needs both, the session to know who asks and the workspaces
// for the header's switcher, so they are read in one statement: one row
// per workspace of the user (one row with none).
func (db *DB) FindSessionWithWorkspaces(ctx context.Context, secret string) (*Session, []*Membership, error) {
	rows, err := db.readRows(ctx,
		`SELECT `+userColumns+`, s.id, s.workspace_id, s.created_at, s.last_seen_at, s.expires_at,
		        COALESCE(m.workspace_id, ''), COALESCE(m.role, ''), COALESCE(m.created_at, ''), COALESCE(w.name, '')
		 FROM sessions s
		 JOIN users u ON u.id = s.user_id
		 LEFT JOIN memberships m ON m.user_id = s.user_id
		 LEFT JOIN workspaces w ON w.id = m.workspace_id
		 WHERE s.id = ? AND s.expires_at > ?`, hashSecret(secret), formatTime(db.now()))
	if err != nil {
		return nil, nil, fmt.Errorf("find session: %w", err)
	}
	defer rows.Close()
	var s *Session
	var ms []*Membership
	for rows.Next() {
		var (
			sess                                Session
			wsID                                sql.NullString
			created, seen, expires              string
			mWorkspace, mRole, mCreated, wsName string
		)
		u, err := scanUser(rows, &sess.ID, &wsID, &created, &seen, &expires, &mWorkspace, &mRole, &mCreated, &wsName)
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
	// FindSessionBySecret's role and workspace name: the user's membership
	// of the session's workspace, if they still have it.
	for _, m := range ms {
		if m.WorkspaceID == s.WorkspaceID {
			s.Role, s.WorkspaceName = m.Role, m.WorkspaceName
		}
	}
	if s.Role == "" {
		s.WorkspaceID = ""
	}
	// FindMemberships' order: by name, ignoring ASCII case (SQLite's
	// NOCASE), then id.
	slices.SortFunc(ms, func(a, b *Membership) int {
		if c := compareNoCase(a.WorkspaceName, b.WorkspaceName); c != 0 {
			return c
		}
		return strings.Compare(a.WorkspaceID, b.WorkspaceID)
	})
	return s, ms, nil
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
