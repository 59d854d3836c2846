package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dev/baton/store/internal/pgtest"
)

// TestMain stops the PostgreSQL server that mustOpen and storetest.MustOpen
// start under BATON_TEST_DB=postgres once the tests end.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// mustOpen is storetest.MustOpen for the tests inside this package, which
// cannot import storetest (it imports store): a fresh SQLite file, or a
// fresh PostgreSQL database under BATON_TEST_DB=postgres.
func mustOpen(tb testing.TB) *DB {
	tb.Helper()
	dsn := filepath.Join(tb.TempDir(), "baton.db")
	if pgtest.Enabled() {
		dsn = pgtest.FreshDatabase(tb, migrateTemplate)
	}
	db, err := Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// onPostgres reports whether mustOpen opens PostgreSQL databases.
func onPostgres() bool { return pgtest.Enabled() }

// migrateTemplate makes the database that mustOpen copies for each test.
func migrateTemplate(url string) error {
	db, err := Open(context.Background(), url)
	if err != nil {
		return err
	}
	return db.Close()
}

// failInserts makes every insert into table fail, as a full disk would,
// until the returned function repairs it.
func failInserts(tb testing.TB, db *DB, table string) (repair func()) {
	tb.Helper()
	create := []string{`CREATE TRIGGER fail_insert BEFORE INSERT ON ` + table + ` BEGIN SELECT RAISE(ABORT, 'disk full'); END`}
	drop := []string{`DROP TRIGGER fail_insert`}
	if db.eng == enginePostgres {
		create = []string{
			`CREATE FUNCTION fail_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`,
			`CREATE TRIGGER fail_insert BEFORE INSERT ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION fail_insert()`,
		}
		drop = []string{`DROP TRIGGER fail_insert ON ` + table, `DROP FUNCTION fail_insert()`}
	}
	exec := func(qs []string) {
		tb.Helper()
		for _, q := range qs {
			if _, err := db.write.db.Exec(q); err != nil {
				tb.Fatalf("%s: %v", q, err)
			}
		}
	}
	exec(create)
	return func() { exec(drop) }
}
