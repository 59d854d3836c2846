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
// the pools and the meaning of its result codes. FTS5 queries live with the
// memory search. A PostgreSQL implementation would sit beside this file.

// migrationDialect is the goose dialect of the migrations.
const migrationDialect = goose.DialectSQLite3

// openPools opens the writer pool (one connection, so that SQLite never
// sees two writers at once; BEGIN IMMEDIATE, so that a transaction takes
// the write lock up front) and the read-only reader pool.
func openPools(path string) (write, read *sql.DB, err error) {
	if write, err = sql.Open("sqlite", dsn(path, "immediate")); err != nil {
		return nil, nil, err
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	if read, err = sql.Open("sqlite", dsn(path, "deferred")+"&_pragma=query_only(1)"); err != nil {
		write.Close()
		return nil, nil, err
	}
	read.SetMaxOpenConns(max(4, runtime.NumCPU()))
	read.SetMaxIdleConns(max(4, runtime.NumCPU()))
	return write, read, nil
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

// violation is the kind of constraint a write broke.
type violation int

const (
	noViolation         violation = iota
	uniqueViolation               // a UNIQUE index or the primary key
	foreignKeyViolation           // a reference to a row that does not exist
	checkViolation                // a CHECK, NOT NULL, or a trigger's RAISE(ABORT)
)

// violationOf reads the kind of constraint violation from SQLite's extended
// result code, never from the error text.
func violationOf(err error) violation {
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

// constraintError turns a constraint violation that no method expected into
// an ECONFLICT, keeping the driver's error for the log; other errors come
// back unchanged.
func constraintError(err error) error {
	if violationOf(err) == noViolation {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return errors.Join(Errorf(ECONFLICT, "The change breaks a rule of the stored data, so nothing was saved. Reload and try again."), err)
}
