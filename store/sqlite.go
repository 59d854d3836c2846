package store

import (
	"database/sql"
	"errors"
	"net/url"
	"runtime"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// This file holds what is specific to SQLite: the driver, its DSN pragmas,
// the pools and the meaning of its result codes. FTS5 queries live in
// memory_sqlite.go; PostgreSQL's counterparts in postgres.go and
// memory_postgres.go.

// openPools opens the writer pool (one connection, so that SQLite never
// sees two writers at once; BEGIN IMMEDIATE, so that a transaction takes
// the write lock up front) and the read-only reader pool.
func openPools(path string) (write, read *pool, err error) {
	w, err := sql.Open("sqlite", dsn(path, "immediate"))
	if err != nil {
		return nil, nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite", dsn(path, "deferred")+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	r.SetMaxOpenConns(max(4, runtime.NumCPU()))
	r.SetMaxIdleConns(max(4, runtime.NumCPU()))
	return &pool{db: w, eng: engineSQLite}, &pool{db: r, eng: engineSQLite}, nil
}

// dsn builds the modernc DSN: busy_timeout first so that it applies while
// the other pragmas (WAL needs a lock) are set.
func dsn(path, txlock string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", txlock)
	// url.Values sorts keys; _pragma < _txlock, and values keep their order.
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// sqliteViolation reads the kind of constraint violation from SQLite's
// extended result code, never from the error text.
func sqliteViolation(err error) violation {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) {
		return noViolation
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return uniqueViolation
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return foreignKeyViolation
	}
	if se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT {
		return checkViolation
	}
	return noViolation
}

// isNotADatabase reports whether SQLite found a file that is not a database.
func isNotADatabase(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB
}

// migrationSetup is the goose dialect of the engine's migrations and the
// provider's options.
func (db *DB) migrationSetup() (goose.Dialect, []goose.ProviderOption, error) {
	if db.eng == enginePostgres {
		return postgresMigrationSetup()
	}
	return goose.DialectSQLite3, nil, nil
}
