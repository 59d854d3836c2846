package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of account fields.
const (
	MaxEmailLen = 254
	MaxNameLen  = 100
)

// User is a person with an account.
type User struct {
	ID                string
	Email             string
	Name              string
	CreatedAt         time.Time
	PasswordChangedAt time.Time

	passwordHash string
}

// UserCreate is the input of CreateUser.
type UserCreate struct {
	Email    string
	Name     string
	Password string
}

// Validate normalises the email and name and checks the rules: an email
// address, a name, a password of at least MinPasswordLen characters.
func (in *UserCreate) Validate() error {
	var err error
	if in.Email, err = normalizeEmail(in.Email); err != nil {
		return err
	}
	if in.Name, err = normalizeName("name", "name", in.Name); err != nil {
		return err
	}
	return validatePassword("password", in.Password)
}

// normalizeEmail trims an email address and checks its shape. Case is kept
// as typed; lookups ignore it.
func normalizeEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	at := strings.LastIndexByte(email, '@')
	switch {
	case email == "":
		return "", Errorf(EINVALID, "Enter an email address.")
	case len(email) > MaxEmailLen:
		return "", Errorf(EINVALID, "The email address is too long; keep it to %d characters.", MaxEmailLen)
	case at < 1 || at == len(email)-1 || strings.IndexFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "", Errorf(EINVALID, "%q is not an email address; it should look like ana@example.com.", email)
	}
	return email, nil
}

// normalizeName collapses spaces in a person's or workspace's name and
// refuses empty, over-long and control-character names.
func normalizeName(field, what, name string) (string, error) {
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		return "", Errorf(EINVALID, "Enter a %s.", what)
	}
	if n := utf8.RuneCountInString(name); n > MaxNameLen {
		return "", Errorf(EINVALID, "The %s is %d characters long; keep it to %d.", what, n, MaxNameLen)
	}
	if err := checkChars("the "+what, name); err != nil {
		return "", err
	}
	return name, nil
}

// CreateUser creates an account. Returns ErrInvalid if a field breaks a
// rule and ErrConflict if the email already has an account.
func (db *DB) CreateUser(ctx context.Context, in UserCreate) (*User, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	hash := HashPassword(in.Password)
	var u *User
	err := db.inTx(ctx, func(tx *txn) (err error) {
		u, err = db.createUser(ctx, tx, in, hash)
		return err
	})
	return u, err
}

// createUser inserts a validated user with an already computed hash.
func (db *DB) createUser(ctx context.Context, tx *txn, in UserCreate, hash string) (*User, error) {
	now := db.now()
	u := &User{ID: newID(), Email: in.Email, Name: in.Name, CreatedAt: now, PasswordChangedAt: now, passwordHash: hash}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO users (id, email, name, password_hash, created_at, password_changed_at) VALUES (?, ?, ?, ?, ?, ?)`,
		u.ID, u.Email, u.Name, hash, formatTime(now), formatTime(now))
	if violationOf(err) == uniqueViolation {
		return nil, Errorf(ECONFLICT, "An account with the email %s already exists; sign in instead.", in.Email)
	} else if err != nil {
		return nil, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

const userColumns = `u.id, u.email, u.name, u.password_hash, u.created_at, u.password_changed_at`

func scanUser(s scanner, extra ...any) (*User, error) {
	var u User
	var created, changed string
	if err := s.Scan(append([]any{&u.ID, &u.Email, &u.Name, &u.passwordHash, &created, &changed}, extra...)...); err != nil {
		return nil, err
	}
	u.CreatedAt, u.PasswordChangedAt = parseTime(created), parseTime(changed)
	return &u, nil
}

// FindUserByID returns a user, or ErrNotFound.
func (db *DB) FindUserByID(ctx context.Context, id string) (*User, error) {
	u, err := scanUser(db.readRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("user %s: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find user %s: %w", id, err)
	}
	return u, nil
}

// FindUserByEmail returns the user with email, compared without case, or
// ErrNotFound.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*User, error) {
	email = strings.TrimSpace(email)
	u, err := scanUser(db.readRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.email = ? COLLATE NOCASE`, email))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "No account has the email %s.", email)
	} else if err != nil {
		return nil, fmt.Errorf("find user by email: %w", err)
	}
	return u, nil
}

// ListUsers returns every account, oldest first.
func (db *DB) ListUsers(ctx context.Context) ([]*User, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+userColumns+` FROM users u ORDER BY u.created_at, u.id`)
	out, err := scanAll(func(s scanner) (*User, error) { return scanUser(s) })(rows, err)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// HasUsers reports whether any account exists: false until the instance
// is set up.
func (db *DB) HasUsers(ctx context.Context) (bool, error) {
	var has bool // SQLite's EXISTS is 0 or 1, PostgreSQL's a boolean: Scan takes both
	if err := db.readRow(ctx, `SELECT EXISTS (SELECT 1 FROM users)`).Scan(&has); err != nil {
		return false, fmt.Errorf("count users: %w", err)
	}
	return has, nil
}

// AuthenticateUser returns the user with email if password is theirs.
// Returns ErrUnauthorized otherwise, with one message whether or not the
// email exists, after the same work.
func (db *DB) AuthenticateUser(ctx context.Context, email, password string) (*User, error) {
	wrong := Errorf(EUNAUTHORIZED, "The email or password is wrong.")
	u, err := db.FindUserByEmail(ctx, email)
	if errors.Is(err, ErrNotFound) {
		CheckPassword(dummyPasswordHash, password)
		return nil, wrong
	} else if err != nil {
		return nil, err
	}
	ok, err := CheckPassword(u.passwordHash, password)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", u.ID, err)
	}
	if !ok {
		return nil, wrong
	}
	return u, nil
}

// PasswordChange is the input of ChangePassword.
type PasswordChange struct {
	UserID  string
	Current string // checked against the stored hash
	New     string
	// KeepSessionID is the session (its ID) that stays signed in; every
	// other session of the user ends. Empty ends them all.
	KeepSessionID string
}

// ChangePassword sets a new password after checking the current one, and
// ends the user's other sessions, in one transaction. Returns
// ErrUnauthorized if the current password is wrong, ErrInvalid if the
// new one breaks the rules and ErrNotFound for an unknown user.
func (db *DB) ChangePassword(ctx context.Context, in PasswordChange) error {
	if err := validatePassword("new_password", in.New); err != nil {
		return err
	}
	u, err := db.FindUserByID(ctx, in.UserID)
	if err != nil {
		return err
	}
	ok, err := CheckPassword(u.passwordHash, in.Current)
	if err != nil {
		return fmt.Errorf("user %s: %w", u.ID, err)
	}
	if !ok {
		return Errorf(EUNAUTHORIZED, "The current password is wrong.")
	}
	hash := HashPassword(in.New)
	return db.inTx(ctx, func(tx *txn) error {
		// The hash must still be the one checked: two changes at once
		// cannot both pass with the old password.
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, password_changed_at = ? WHERE id = ? AND password_hash = ?`,
			hash, formatTime(db.now()), u.ID, u.passwordHash)
		if err != nil {
			return fmt.Errorf("change password: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return Errorf(ECONFLICT, "The password was changed meanwhile; sign in again.")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id <> ?`, u.ID, in.KeepSessionID); err != nil {
			return fmt.Errorf("change password: end sessions: %w", err)
		}
		return nil
	})
}

// Setup is the input of SetUp: the first owner and workspace.
type Setup struct {
	Owner     UserCreate
	Workspace string // the workspace's name
}

// SetUp creates the first account as the owner of the first workspace
// (the default workspace, renamed, so that what it holds stays). Returns
// ErrConflict once any account exists, ErrInvalid for bad input.
func (db *DB) SetUp(ctx context.Context, in Setup) (*User, error) {
	if err := in.Owner.Validate(); err != nil {
		return nil, err
	}
	name, err := normalizeName("workspace", "workspace name", in.Workspace)
	if err != nil {
		return nil, err
	}
	hash := HashPassword(in.Owner.Password)
	var u *User
	err = db.inTx(ctx, func(tx *txn) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return Errorf(ECONFLICT, "Baton is already set up; sign in instead.")
		}
		if u, err = db.createUser(ctx, tx, in.Owner, hash); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE workspaces SET name = ? WHERE id = ?`, name, db.defaultWorkspace); err != nil {
			return fmt.Errorf("set up: name workspace: %w", err)
		}
		return db.addMember(ctx, tx, db.defaultWorkspace, u.ID, RoleOwner)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// UserAdd is the input of AddUser: an account and the workspace it joins.
type UserAdd struct {
	User UserCreate
	// Workspace names the workspace to join, created when no workspace
	// has that name; "" means the default workspace.
	Workspace string
	// Role in the workspace; "" makes the user owner of a workspace that
	// has no owner yet, and editor otherwise.
	Role MemberRole
}

// AddUser creates an account as a member of a workspace, creating the
// workspace if needed, in one transaction: on any error nothing changes.
// Returns ErrInvalid for bad input and ErrConflict if the email has an
// account already.
func (db *DB) AddUser(ctx context.Context, in UserAdd) (*User, *Membership, error) {
	if err := in.User.Validate(); err != nil {
		return nil, nil, err
	}
	if in.Role != "" {
		if err := in.Role.Validate(); err != nil {
			return nil, nil, err
		}
	}
	var wsName string
	if in.Workspace != "" {
		var err error
		if wsName, err = normalizeName("workspace", "workspace name", in.Workspace); err != nil {
			return nil, nil, err
		}
	}
	hash := HashPassword(in.User.Password)
	var u *User
	var wsID string
	err := db.inTx(ctx, func(tx *txn) (err error) {
		if u, err = db.createUser(ctx, tx, in.User, hash); err != nil {
			return err
		}
		wsID = db.defaultWorkspace
		if wsName != "" {
			err := tx.QueryRowContext(ctx, `SELECT id FROM workspaces WHERE name = ? COLLATE NOCASE ORDER BY created_at, id LIMIT 1`, wsName).Scan(&wsID)
			if errors.Is(err, sql.ErrNoRows) {
				wsID = newID()
				_, err = tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)`, wsID, wsName, formatTime(db.now()))
			}
			if err != nil {
				return fmt.Errorf("add user: workspace: %w", err)
			}
		}
		role := in.Role
		if role == "" {
			var owners int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM memberships WHERE workspace_id = ? AND role = 'owner'`, wsID).Scan(&owners); err != nil {
				return fmt.Errorf("add user: %w", err)
			}
			role = RoleEditor
			if owners == 0 {
				role = RoleOwner
			}
		}
		return db.addMember(ctx, tx, wsID, u.ID, role)
	})
	if err != nil {
		return nil, nil, err
	}
	m, err := db.FindMembership(ctx, wsID, u.ID)
	return u, m, err
}
