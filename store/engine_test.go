package store

import (
	"slices"
	"testing"
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
