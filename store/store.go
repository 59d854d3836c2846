// Package store holds Baton's domain types, their rules (Validate) and their
// persistence in SQLite.
//
// Writes go through a single-connection pool so that SQLite never sees two
// writers at once; reads use a separate pool. Every method that changes more
// than one row does so in one transaction. Errors a person can act on are
// *Error values with a code (see errors.go); what is specific to SQLite
// lives in sqlite.go.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open Baton database.
type DB struct {
	path  string
	write *sql.DB
	read  *sql.DB
	now   func() time.Time

	defaultWorkspace string
	// stmts caches prepared statements of the hottest reads: the driver
	// does not, and preparing costs as much as running them.
	stmts sync.Map // query -> *sql.Stmt
}

// Open opens (creating if needed) the database file at path, applies
// migrations and makes sure a default workspace exists. Errors name the path.
func Open(ctx context.Context, path string) (_ *DB, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("open database %s: %w", path, err)
		}
	}()
	if path == "" || path == ":memory:" {
		return nil, errors.New("a file path is required")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, errors.New("is a directory, not a database file")
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}

	db := &DB{path: path, now: func() time.Time { return time.Now().UTC() }}
	if db.write, db.read, err = openPools(path); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()

	if err := db.migrate(ctx); err != nil {
		return nil, err
	}
	if db.defaultWorkspace, err = db.ensureDefaultWorkspace(ctx); err != nil {
		return nil, err
	}
	return db, nil
}

// privateFiles makes the database's folder (when Open creates it) 0700 and
// the database file and its -wal and -shm 0600: they hold the session key
// and every conversation. SQLite gives the -wal and -shm files it creates
// the database file's permissions, so creating that file 0600 first
// covers them.
func privateFiles(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (db *DB) migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(migrationDialect, db.write, fsys)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		if isNotADatabase(err) {
			return errors.New("the file is not a SQLite database")
		}
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// readStmt returns the prepared read statement for q, preparing it once.
func (db *DB) readStmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := db.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.read.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// limitSQL is a LIMIT clause with n written into the SQL text. SQLite
// reads a bound LIMIT parameter while planning, so a prepared statement
// whose LIMIT is "?" is compiled again on every run, which costs as much as
// not preparing it at all. n must come from the program, not from a
// request: each distinct value is one more cached statement.
func limitSQL(n int) string {
	return ` LIMIT ` + strconv.Itoa(n)
}

// readRows runs a hot read query through a cached prepared statement.
func (db *DB) readRows(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := db.readStmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// scanAll returns a function that reads every row a query returned with
// scan and closes the rows; it passes on the query's own error. Call it
// on the query: scanAll(scanThread)(db.read.QueryContext(ctx, q, args...)).
func scanAll[T any](scan func(scanner) (T, error)) func(*sql.Rows, error) ([]T, error) {
	return func(rows *sql.Rows, err error) ([]T, error) {
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []T
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// notFound turns sql.ErrNoRows, the error of a lookup of one row, into
// ENOTFOUND for what the format and args name ("message %s", id); any
// other error passes as it is.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf(format+": %w", append(args, ErrNotFound)...)
	}
	return err
}

// findErr is notFound for a Find method, whose other errors say "find"
// and what.
func findErr(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(err, format, args...)
	}
	return fmt.Errorf("find "+format+": %w", append(args, err)...)
}

// rowResult is a *sql.Row or the error of preparing its statement.
type rowResult struct {
	row *sql.Row
	err error
}

func (r rowResult) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.row.Scan(dest...)
}

// readRow is readRows for a single row.
func (db *DB) readRow(ctx context.Context, q string, args ...any) rowResult {
	st, err := db.readStmt(ctx, q)
	if err != nil {
		return rowResult{err: err}
	}
	return rowResult{row: st.QueryRowContext(ctx, args...)}
}

// RecoverInterrupted ends the extractions and plans that a previous
// process left running, as failed. Only the process that serves the
// database may call it, when it starts: another process opening the same
// file (baton migrate) must not end a live server's runs.
func (db *DB) RecoverInterrupted(ctx context.Context) error {
	if err := db.failInterruptedRuns(ctx); err != nil {
		return err
	}
	return db.failInterruptedPlans(ctx)
}

// Close closes both pools.
func (db *DB) Close() error {
	db.stmts.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	var errs []error
	if db.read != nil {
		errs = append(errs, db.read.Close())
	}
	if db.write != nil {
		errs = append(errs, db.write.Close())
	}
	return errors.Join(errs...)
}

// Path is the database file's path.
func (db *DB) Path() string { return db.path }

// DefaultWorkspaceID is the workspace created on first open.
func (db *DB) DefaultWorkspaceID() string { return db.defaultWorkspace }

// SetClock replaces the clock; tests use it for ordering and time stamps.
func (db *DB) SetClock(now func() time.Time) { db.now = now }

// inTx runs fn in a write transaction, committing if it returns nil.
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return constraintError(err)
	}
	return tx.Commit()
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// timeFormat is fixed width so that text order is time order.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}

// Setting returns a stored setting, or ErrNotFound.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := db.read.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if err != nil {
		return "", notFound(err, "setting %q", key)
	}
	return v, nil
}

// EnsureSetting stores value under key unless the key exists, and returns
// the stored value either way.
func (db *DB) EnsureSetting(ctx context.Context, key, value string) (string, error) {
	var v string
	err := db.write.QueryRowContext(ctx,
		`INSERT INTO settings (key, value) VALUES (?, ?)
		 ON CONFLICT (key) DO UPDATE SET value = value
		 RETURNING value`, key, value).Scan(&v)
	return v, err
}
