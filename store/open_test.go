package store

import (
	"context"
	"path/filepath"
	"testing"
)

// mustOpen is storetest.MustOpen for the tests inside this package, which
// cannot import storetest (it imports store).
func mustOpen(tb testing.TB) *DB {
	tb.Helper()
	db, err := Open(context.Background(), filepath.Join(tb.TempDir(), "baton.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
