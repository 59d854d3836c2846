package store

import (
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c IN (?, ?)`, `SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)`},
		{`SELECT x FROM t WHERE a = ?1 UNION ALL SELECT y FROM u WHERE b = ?1`, `SELECT x FROM t WHERE a = $1 UNION ALL SELECT y FROM u WHERE b = $1`},
		{`SELECT '?', "a?b" FROM t WHERE c = ?`, `SELECT '?', "a?b" FROM t WHERE c = $1`},
		{"SELECT 1 -- why?\nWHERE a = ?", "SELECT 1 -- why?\nWHERE a = $1"},
		{`SELECT 'it''s?' WHERE a = ?`, `SELECT 'it''s?' WHERE a = $1`},
		{`SELECT a WHERE b = ?12`, `SELECT a WHERE b = $12`},
		{`SELECT a - ? FROM t`, `SELECT a - $1 FROM t`},
		{`SELECT 'unterminated ?`, `SELECT 'unterminated ?`},
	}
	for _, tt := range tests {
		if got := rebind(tt.in); got != tt.want {
			t.Errorf("rebind(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEngineArgs(t *testing.T) {
	in := []any{true, false, "x", 3}
	got := enginePostgres.args(in)
	if want := []any{int64(1), int64(0), "x", 3}; !slices.Equal(got, want) {
		t.Errorf("postgres args=%v, want %v", got, want)
	}
	if in[0] != true {
		t.Error("args changed the caller's slice")
	}
	if got := engineSQLite.args(in); !slices.Equal(got, in) {
		t.Errorf("sqlite args=%v, want them as they are", got)
	}
}

// TestTSMatch checks that no tsquery syntax survives from a term: each is
// a phrase of quoted words, whatever it holds.
func TestTSMatch(t *testing.T) {
	tests := []struct {
		terms   []string
		anyTerm bool
		want    string
	}{
		{nil, false, ""},
		{[]string{" ", ""}, false, ""},
		{[]string{"cache"}, false, `('cache')`},
		{[]string{"cache", "rate-limit"}, false, `('cache') & ('rate' <-> 'limit')`},
		{[]string{"cache", "keys"}, true, `('cache') | ('keys')`},
		{[]string{`cache" OR "planets`}, false, `('cache' <-> 'OR' <-> 'planets')`},
		{[]string{`a':*`, `!b`, `c&|d`}, false, `('a') & ('b') & ('c' <-> 'd')`},
		{[]string{"café", "src/auth/token.go"}, false, `('café') & ('src' <-> 'auth' <-> 'token' <-> 'go')`},
		{[]string{"!!", "&"}, false, tsNothing},
		{[]string{"!!", "token"}, false, `('token')`},
	}
	for _, tt := range tests {
		if got := tsMatch(tt.terms, tt.anyTerm); got != tt.want {
			t.Errorf("tsMatch(%q, %v)=%q, want %q", tt.terms, tt.anyTerm, got, tt.want)
		}
	}
}

func TestSnippetFromHeadline(t *testing.T) {
	text := "Keep backups of the cache (nightly) in src/cache/backup.go."
	tests := []struct{ headline, want string }{
		{"Keep backups of the cache nightly in src cache backup go", text},
		{"Keep \x02backups\x03 of", "Keep \x02backups\x03 of…"},
		{"the \x02cache\x03 nightly", "…the \x02cache\x03 (nightly…"},
		{"in src \x02cache\x03 \x02backup\x03 go", "…in src/\x02cache\x03/\x02backup\x03.go."},
		{"", ""},
		{"not in the text", ""},
	}
	for _, tt := range tests {
		if got := snippetFromHeadline(tt.headline, text); got != tt.want {
			t.Errorf("snippetFromHeadline(%q)=%q, want %q", tt.headline, got, tt.want)
		}
	}
}

// TestInTxRunsAloneAfterLosing checks, on PostgreSQL, that a write
// transaction that keeps losing races runs again, and finally alone: no
// other write transaction can start while it runs.
func TestInTxRunsAloneAfterLosing(t *testing.T) {
	if !onPostgres() {
		t.Skip("SQLite has one writer: its transactions never lose a race")
	}
	ctx := t.Context()
	db := mustOpen(t)
	runs := 0
	err := db.inTx(ctx, func(tx *txn) error {
		runs++
		if runs <= maxTxAttempts {
			return &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
		}
		// Alone: another session cannot take the writers' lock, even shared.
		var free bool
		if err := db.write.db.QueryRowContext(ctx, `SELECT pg_try_advisory_lock_shared(`+writersLock+`)`).Scan(&free); err != nil {
			return err
		}
		if free {
			t.Error("another session took the writers' lock while the transaction ran alone")
			db.write.db.ExecContext(ctx, `SELECT pg_advisory_unlock_shared(`+writersLock+`)`)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('alone', 'yes')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != maxTxAttempts+1 {
		t.Errorf("ran %d times, want %d", runs, maxTxAttempts+1)
	}
	if v, err := db.Setting(ctx, "alone"); err != nil || v != "yes" {
		t.Errorf("setting = %q, %v; want the last run's write", v, err)
	}
	// The lock is free again.
	var free bool
	if err := db.write.db.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock(`+writersLock+`)`).Scan(&free); err != nil || !free {
		t.Errorf("writers' lock free after the transaction = %v, %v; want true", free, err)
	}
}
