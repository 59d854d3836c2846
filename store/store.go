// Package store holds Baton's domain types, their rules (Validate) and their
// persistence in SQLite or PostgreSQL.
//
// On SQLite, writes go through a single-connection pool so that SQLite
// never sees two writers at once; reads use a separate pool. On PostgreSQL,
// write transactions are serializable and run again when they lose a race.
// Every method that changes more than one row does so in one transaction.
// Errors a person can act on are *Error values with a code (see errors.go);
// what is specific to an engine lives in engine.go, sqlite.go, postgres.go
// and the full-text search in memory_sqlite.go and memory_postgres.go.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// DB is an open Baton database.
type DB struct {
	path  string // the SQLite file, or the PostgreSQL URL without its password
	eng   engine
	write *pool
	read  *pool
	clock atomic.Pointer[func() time.Time] // see now and SetClock

	defaultWorkspace string
	// stmts caches prepared statements of the hottest reads: the driver
	// does not, and preparing costs as much as running them.
	stmts sync.Map // query -> *sql.Stmt
	// hub delivers Notify's payloads to Listen's channels (job.go).
	hub hub
	// heads, items, timelines and ready keep the message heads of threads,
	// the items, activity and ready state of handoffs, and access the users
	// signed in, as pages read them on every view, under revisions the
	// database moves on (revcache.go).
	heads     *revCache[[]Message]
	items     *revCache[handoffItems]
	timelines *revCache[[]Activity]
	ready     *revCache[ReadyState]  // by handoff, under its activity_rev
	access    *revCache[userAccess]  // users and their workspaces, for sessions
	sources   *revCache[keptSources] // by workspace and table, under its decisions_rev or blackboard_rev
}

// Entries each revision cache holds: the threads and handoffs people have
// open. A thread's heads take about 250 bytes a message, a handoff's items
// about 250 bytes each and their text, so a full cache of long threads
// and handoffs holds a few tens of megabytes at most.
const revCacheEntries = 256

// accessCacheEntries is how many signed-in users the access cache holds:
// a user and their workspaces take a few hundred bytes.
const accessCacheEntries = 4096

// sourcesCacheEntries is how many lists of unscoped snapshot sources are
// kept (a workspace's decision records, or its warnings and findings):
// about 60 bytes an ID, so a workspace of 10,000 decision records and as
// many warnings and findings takes about a megabyte.
const sourcesCacheEntries = 32

// Options tune the connection to PostgreSQL; SQLite ignores them. A zero
// field takes its default.
type Options struct {
	// MaxConns caps the open connections of this process (default 10).
	MaxConns int
	// StatementTimeout ends a statement that runs longer (default 30s).
	StatementTimeout time.Duration
	// LockTimeout ends a statement that waits longer for a lock (default 10s).
	LockTimeout time.Duration
}

// IsPostgresURL reports whether dsn names a PostgreSQL database rather
// than a SQLite file.
func IsPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the database dsn names with default Options; see OpenWith.
func Open(ctx context.Context, dsn string) (*DB, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith opens the database dsn names: a postgres:// URL opens a
// PostgreSQL database, anything else is the path of a SQLite file, created
// if needed. It applies migrations and makes sure a default workspace
// exists. Errors name the database (never a password).
func OpenWith(ctx context.Context, dsn string, opts Options) (_ *DB, err error) {
	db := &DB{path: dsn, heads: newRevCache[[]Message](revCacheEntries), items: newRevCache[handoffItems](revCacheEntries),
		timelines: newRevCache[[]Activity](revCacheEntries), ready: newRevCache[ReadyState](revCacheEntries), access: newRevCache[userAccess](accessCacheEntries),
		sources: newRevCache[keptSources](sourcesCacheEntries)}
	db.SetClock(func() time.Time { return time.Now().UTC() })
	if IsPostgresURL(dsn) {
		db.eng = enginePostgres
		db.path = redactURL(dsn)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("open database %s: %w", db.path, err)
		}
	}()
	if db.eng == enginePostgres {
		if db.write, err = openPostgres(dsn, opts); err != nil {
			return nil, err
		}
		db.read = db.write
	} else {
		if dsn == "" || dsn == ":memory:" {
			return nil, errors.New("a file path is required")
		}
		if fi, err := os.Stat(dsn); err == nil && fi.IsDir() {
			return nil, errors.New("is a directory, not a database file")
		}
		if err := privateFiles(dsn); err != nil {
			return nil, err
		}
		if db.write, db.read, err = openPools(dsn); err != nil {
			return nil, err
		}
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
	fsys, err := fs.Sub(migrations, "migrations/"+db.eng.String())
	if err != nil {
		return err
	}
	dialect, gooseOpts, err := db.migrationSetup()
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(dialect, db.write.db, fsys, gooseOpts...)
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
	return st.QueryContext(ctx, db.read.eng.args(args)...)
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
	return rowResult{row: st.QueryRowContext(ctx, db.read.eng.args(args)...)}
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
	if db.read != nil && db.read != db.write {
		errs = append(errs, db.read.Close())
	}
	if db.write != nil {
		errs = append(errs, db.write.Close())
	}
	return errors.Join(errs...)
}

// Path is the SQLite database file's path, or the PostgreSQL URL without
// its password.
func (db *DB) Path() string { return db.path }

// DefaultWorkspaceID is the workspace created on first open.
func (db *DB) DefaultWorkspaceID() string { return db.defaultWorkspace }

// SetClock replaces the clock; tests use it for ordering and time stamps.
// Background work (a shared database's job heartbeat) may read the clock
// while a test sets it.
func (db *DB) SetClock(now func() time.Time) { db.clock.Store(&now) }

// now is the store's clock.
func (db *DB) now() time.Time { return (*db.clock.Load())() }

// inTx runs fn in a write transaction, committing if it returns nil.
// On PostgreSQL it runs serializable, as if alone, like SQLite's single
// writer, and runs again when it lost a race with another transaction:
// fn must only read and write through tx, so that it can run twice. A
// transaction that keeps losing finally runs alone (see runAlone), so
// that every write ends, however busy the database.
func (db *DB) inTx(ctx context.Context, fn func(tx *txn) error) error {
	if db.eng != enginePostgres {
		return db.tryTx(ctx, nil, fn)
	}
	shared := func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared(`+writersLock+`)`); err != nil {
			return err
		}
		return fn(tx)
	}
	for attempt := range maxTxAttempts {
		if err := db.tryTx(ctx, serializable, shared); !retryable(err) {
			return err
		}
		// Wait a random while, longer after each loss, so that the
		// transactions that collided do not collide again at once.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(time.Millisecond) << attempt))):
		}
	}
	return db.runAlone(ctx, fn)
}

// maxTxAttempts is how many times inTx runs a transaction side by side
// with others on PostgreSQL before it runs it alone; the random waits
// between attempts add up to 31 ms at most.
const maxTxAttempts = 5

// writersLock is the key of the PostgreSQL advisory lock of the store's
// write transactions: each holds it shared, and one that ran out of
// attempts holds it alone.
const writersLock = `4264096729853493103`

// runAlone runs fn in a serializable transaction once every other write
// transaction of every instance has ended, holding the writers' lock
// alone while it runs: no other write can make it fail. The lock is taken
// before the transaction begins, so that its snapshot sees what the
// others wrote.
func (db *DB) runAlone(ctx context.Context, fn func(tx *txn) error) error {
	conn, err := db.write.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+writersLock+`)`); err != nil {
		return err
	}
	defer func() {
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+writersLock+`)`); uerr != nil {
			// A session that may still hold the lock must not go back to the pool.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	// No other write runs now, but a serializable read may still make this
	// transaction the one PostgreSQL cancels: try again, it then succeeds.
	for {
		tx, err := conn.BeginTx(ctx, serializable)
		if err != nil {
			return err
		}
		if err := runTx(&txn{tx: tx, eng: db.eng}, fn); !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
}

func (db *DB) tryTx(ctx context.Context, opts *sql.TxOptions, fn func(tx *txn) error) error {
	tx, err := db.write.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	return runTx(tx, fn)
}

// runTx runs fn in tx and commits, or rolls back if fn fails.
func runTx(tx *txn, fn func(tx *txn) error) error {
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
		 ON CONFLICT (key) DO UPDATE SET value = settings.value
		 RETURNING value`, key, value).Scan(&v)
	return v, err
}
