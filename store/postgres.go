package store

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// This file holds what is specific to PostgreSQL: the pgx driver and its
// settings, the migrations' lock and the meaning of SQLSTATE codes.

// Defaults of Options.
const (
	defaultMaxConns         = 10
	defaultStatementTimeout = 30 * time.Second
	defaultLockTimeout      = 10 * time.Second
)

// openPostgres opens a pool on the PostgreSQL database of url. The
// statement and lock timeouts are session settings of every connection,
// unless the URL sets them itself (?statement_timeout=…).
func openPostgres(dsn string, opts Options) (*pool, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("read the PostgreSQL URL: %w", err)
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = defaultMaxConns
	}
	if opts.StatementTimeout <= 0 {
		opts.StatementTimeout = defaultStatementTimeout
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = defaultLockTimeout
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	setDefault := func(k string, d time.Duration) {
		if _, ok := cfg.RuntimeParams[k]; !ok {
			cfg.RuntimeParams[k] = fmt.Sprint(d.Milliseconds())
		}
	}
	setDefault("statement_timeout", opts.StatementTimeout)
	setDefault("lock_timeout", opts.LockTimeout)
	// Text comparisons and sorting follow byte order, as SQLite's do: the
	// schema's text columns are in the collation "C".
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(opts.MaxConns)
	db.SetMaxIdleConns(opts.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return &pool{db: db, eng: enginePostgres}, nil
}

// postgresMigrationSetup is goose's PostgreSQL dialect with a session
// lock, so that instances starting at once migrate one after the other.
func postgresMigrationSetup() (goose.Dialect, []goose.ProviderOption, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return "", nil, err
	}
	return goose.DialectPostgres, []goose.ProviderOption{goose.WithSessionLocker(locker)}, nil
}

// postgresViolation reads the kind of constraint violation from the
// SQLSTATE of a PostgreSQL error.
func postgresViolation(err error) violation {
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) {
		return noViolation
	}
	switch pe.Code {
	case "23505": // unique_violation
		return uniqueViolation
	case "23503": // foreign_key_violation
		return foreignKeyViolation
	case "23514", "23502", "23P01": // check, not null, exclusion (and the triggers' refusals)
		return checkViolation
	}
	return noViolation
}

// retryable reports whether a transaction failed only because another
// ran at the same time (serialization failure, deadlock), so that running
// it again can succeed.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// redactURL is a PostgreSQL URL without its password, to show.
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

// serializable is how write transactions run on PostgreSQL: as if one
// after the other, as SQLite's single writer runs them.
var serializable = &sql.TxOptions{Isolation: sql.LevelSerializable}
