package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// Two instances on one PostgreSQL database draw from the same bucket: a
// client gets burst requests in all, not burst per instance, and the
// bucket refills at the rate with the store's clock.
func TestTakeTokenShared(t *testing.T) {
	url := storetest.StartPostgres(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	open := func() *store.DB {
		db, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		db.SetClock(func() time.Time { return now })
		return db
	}
	a, b := open(), open()
	take := func(db *store.DB, key string) bool {
		t.Helper()
		ok, err := db.TakeToken(ctx, key, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	got := []bool{take(a, "share:1.2.3.4"), take(b, "share:1.2.3.4"), take(a, "share:1.2.3.4"), take(b, "share:1.2.3.4")}
	if want := []bool{true, true, true, false}; !slices.Equal(got, want) {
		t.Fatalf("takes from a full bucket of 3 across two instances = %v, want %v", got, want)
	}
	if !take(b, "share:5.6.7.8") {
		t.Fatal("another client's bucket was empty")
	}
	now = now.Add(1500 * time.Millisecond) // 1.5 tokens back
	if !take(a, "share:1.2.3.4") || take(b, "share:1.2.3.4") {
		t.Fatal("after 1.5 s at 1/s, want one more token and not two")
	}
}

// The same bucket on SQLite, which a server treats as shared in tests.
func TestTakeTokenSQLite(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	var got []bool
	for range 3 {
		ok, err := db.TakeToken(ctx, "k", 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ok)
	}
	if want := []bool{true, true, false}; !slices.Equal(got, want) {
		t.Fatalf("takes from a bucket of 2 = %v, want %v", got, want)
	}
}
