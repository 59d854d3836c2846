package store

import (
	"context"
	"path/filepath"
	"testing"
)

// MustOpen opens a fresh database in a temporary folder for a test or
// benchmark and closes it when the test ends.
func MustOpen(tb testing.TB) *DB {
	tb.Helper()
	db, err := Open(context.Background(), filepath.Join(tb.TempDir(), "baton.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
