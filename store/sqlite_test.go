package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
)

// violationOf reads the driver's codes: each kind of constraint a real
// database reports (SQLite's extended result codes, PostgreSQL's SQLSTATE)
// is recognised, and nothing else is.
func TestViolationOf(t *testing.T) {
	ctx := context.Background()
	var db *sql.DB
	setup := []string{
		`CREATE TABLE parents (id TEXT PRIMARY KEY)`,
		`CREATE TABLE kids (id TEXT PRIMARY KEY, name TEXT UNIQUE, age INTEGER CHECK (age >= 0) NOT NULL DEFAULT 0,
		                    parent_id TEXT REFERENCES parents(id))`,
	}
	if onPostgres() {
		db = mustOpen(t).write.db
		setup = append(setup,
			`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
			 BEGIN RAISE EXCEPTION 'parents are immutable' USING ERRCODE = 'check_violation'; END $$`,
			`CREATE TRIGGER frozen BEFORE DELETE ON parents FOR EACH ROW EXECUTE FUNCTION refuse()`)
	} else {
		var err error
		if db, err = sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "v.db"), "immediate")); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		setup = append(setup,
			`CREATE TRIGGER frozen BEFORE DELETE ON parents BEGIN SELECT RAISE(ABORT, 'parents are immutable'); END`)
	}
	for _, q := range append(setup,
		`INSERT INTO parents (id) VALUES ('p')`,
		`INSERT INTO kids (id, name) VALUES ('k', 'Ada')`,
	) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tests := []struct {
		name, query string
		want        violation
	}{
		{"unique index", `INSERT INTO kids (id, name) VALUES ('k2', 'Ada')`, uniqueViolation},
		{"primary key", `INSERT INTO kids (id, name) VALUES ('k', 'Bob')`, uniqueViolation},
		{"foreign key", `INSERT INTO kids (id, name, parent_id) VALUES ('k3', 'Cy', 'nobody')`, foreignKeyViolation},
		{"check", `INSERT INTO kids (id, name, age) VALUES ('k4', 'Di', -1)`, checkViolation},
		{"not null", `INSERT INTO kids (id, name, age) VALUES ('k5', 'Ed', NULL)`, checkViolation},
		{"trigger", `DELETE FROM parents`, checkViolation},
		{"syntax error", `INSERT INTO nowhere VALUES (1)`, noViolation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.ExecContext(ctx, tt.query)
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tt.query)
			}
			if got := violationOf(err); got != tt.want {
				t.Fatalf("violationOf(%v)=%d, want %d", err, got, tt.want)
			}
			// An unexpected violation becomes a conflict that keeps the
			// driver's error for the log; other errors stay as they are.
			mapped := constraintError(err)
			if got, want := errors.Is(mapped, ErrConflict), tt.want != noViolation; got != want {
				t.Fatalf("constraintError: errors.Is(ErrConflict)=%v, want %v", got, want)
			}
			if !errors.Is(mapped, err) {
				t.Fatalf("constraintError dropped the driver's error: %v", mapped)
			}
		})
	}
	if violationOf(nil) != noViolation || violationOf(errors.New("UNIQUE constraint failed: kids.name")) != noViolation {
		t.Fatal("violationOf matched an error by its text, want only the driver's code")
	}
}
