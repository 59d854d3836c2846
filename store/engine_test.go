package store

import (
	"slices"
	"testing"
)

// rebind turns the store's ? parameters into PostgreSQL's numbered ones
// and leaves quoted text and comments alone.
func TestRebind(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM t WHERE a = ? AND b IN (?, ?)`, `SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)`},
		{`SELECT '?' || ? FROM "we?ird" WHERE c = ?`, `SELECT '?' || $1 FROM "we?ird" WHERE c = $2`},
		{`SELECT 'it''s?', ?`, `SELECT 'it''s?', $1`},
		{"SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{`SELECT a - ? FROM t`, `SELECT a - $1 FROM t`},
		{`SELECT 'unterminated ?`, `SELECT 'unterminated ?`},
	} {
		if got := rebind(tt.in); got != tt.want {
			t.Errorf("rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// On PostgreSQL booleans go to integer columns as 0 and 1, without
// changing the caller's arguments; SQLite takes them as they are.
func TestEngineArgs(t *testing.T) {
	in := []any{"a", true, false, 3}
	got := enginePostgres.args(in)
	if want := []any{"a", int64(1), int64(0), 3}; !slices.Equal(got, want) {
		t.Fatalf("postgres args = %v, want %v", got, want)
	}
	if in[1] != true {
		t.Fatal("args changed the caller's slice")
	}
	if got := engineSQLite.args(in); &got[0] != &in[0] {
		t.Fatal("sqlite args were copied")
	}
}
