package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/internal/pgtest"
)

// Engine is a database engine that a benchmark measures beside the other
// in one run.
type Engine struct {
	Name string // "sqlite" or "postgres"
	// Open opens a fresh database of the engine, closed when tb ends. The
	// PostgreSQL one skips tb when PostgreSQL is not installed (fails it
	// under CI=true).
	Open func(tb testing.TB) *store.DB
}

// Engines are SQLite and PostgreSQL, whatever BATON_TEST_DB says: a
// benchmark that runs a sub-benchmark per engine reports both in one run.
func Engines() []Engine {
	return []Engine{
		{"sqlite", func(tb testing.TB) *store.DB { return open(tb, filepath.Join(tb.TempDir(), "baton.db")) }},
		{"postgres", func(tb testing.TB) *store.DB { return open(tb, pgtest.FreshDatabase(tb, migrate)) }},
	}
}

func open(tb testing.TB, dsn string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
