package store

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSchemasMatch checks that the PostgreSQL schema has the tables,
// columns (in order) and indexes of the SQLite schema, so that a migration
// added to one engine and not the other fails here. Full-text search is
// the one difference: FTS5 tables on SQLite, a tsvector column fts with a
// GIN index of the FTS5 table's name on PostgreSQL.
func TestSchemasMatch(t *testing.T) {
	if !onPostgres() {
		t.Skip("compares the PostgreSQL schema with SQLite's: run with BATON_TEST_DB=postgres")
	}
	ctx := context.Background()
	lite, err := Open(ctx, filepath.Join(t.TempDir(), "baton.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg := mustOpen(t)

	list := func(db *DB, q string, args ...any) []string {
		t.Helper()
		rows, err := db.read.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	schema := func(db *DB, tablesQ, columnsQ, indexesQ string) map[string][]string {
		out := map[string][]string{}
		for _, table := range list(db, tablesQ) {
			out[table] = list(db, columnsQ, table)
		}
		idx := list(db, indexesQ)
		slices.Sort(idx)
		out["(indexes)"] = idx
		return out
	}
	sqlite := schema(lite,
		`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
		   AND name NOT LIKE '%_fts%' AND name <> 'goose_db_version'`,
		`SELECT name FROM pragma_table_info(?) ORDER BY cid`,
		`SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'
		 UNION ALL SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%_fts'`)
	postgres := schema(pg,
		`SELECT table_name FROM information_schema.tables
		 WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version'`,
		`SELECT column_name FROM information_schema.columns
		 WHERE table_schema = 'public' AND table_name = ? AND column_name <> 'fts' ORDER BY ordinal_position`,
		`SELECT i.indexname FROM pg_indexes i WHERE i.schemaname = 'public'
		   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`)
	if diff := cmp.Diff(sqlite, postgres); diff != "" {
		t.Errorf("schemas differ (-sqlite +postgres):\n%s", diff)
	}
	if len(sqlite) < 30 || !strings.Contains(strings.Join(sqlite["(indexes)"], " "), "users_email") {
		t.Errorf("read %d tables and indexes %v: the queries miss the schema", len(sqlite), sqlite["(indexes)"])
	}
}
