// Package storetest helps tests run against a real store: a fresh
// database per test and the fixtures many tests share. Only tests import
// it, so the testing package never reaches the baton binary.
//
// The database is SQLite in a temporary folder, or with
// BATON_TEST_DB=postgres a fresh database on a PostgreSQL server that the
// test binary starts once. A package whose tests call MustOpen opts in to
// PostgreSQL by stopping that server when its tests end:
//
//	func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }
//
// Without it the server still stops when the test binary exits, a moment
// later.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/internal/pgtest"
)

// MustOpen opens a fresh database for a test or benchmark and closes it
// when the test ends: SQLite in a temporary folder, or a PostgreSQL
// database under BATON_TEST_DB=postgres (skipped when PostgreSQL is not
// installed, failed under CI=true).
func MustOpen(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), FreshDSN(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// FreshDSN returns what store.Open takes to open a fresh database of its
// own for a test that opens it itself, to close and open it again as a
// restart does: a file in a temporary folder, or the URL of a new
// PostgreSQL database under BATON_TEST_DB=postgres.
func FreshDSN(tb testing.TB) string {
	tb.Helper()
	if pgtest.Enabled() {
		return pgtest.FreshDatabase(tb, migrate)
	}
	return filepath.Join(tb.TempDir(), "baton.db")
}

// OnPostgres reports whether MustOpen opens PostgreSQL databases
// (BATON_TEST_DB=postgres) rather than SQLite files.
func OnPostgres() bool { return pgtest.Enabled() }

// Main runs a package's tests and then stops the PostgreSQL server that
// MustOpen started, if it did; it returns the exit code for os.Exit.
func Main(m *testing.M) int { return pgtest.Main(m) }

// migrate makes the template database that MustOpen copies for each test.
func migrate(url string) error {
	db, err := store.Open(context.Background(), url)
	if err != nil {
		return err
	}
	return db.Close()
}

// Items describes a handoff for NewHandoff and FrozenSnapshot. A file with
// no relevance is high; a risk with no severity is medium.
type Items struct {
	Title       string // the thread's title; "Test" when empty
	WorkspaceID string // the default workspace when empty
	Decisions   []store.DecisionCreate
	Files       []store.FileRefInput
	Risks       []store.RiskInput
	Summary     string
}

// Decisions returns a decision to create for each text, with no source or
// confidence given (the store's defaults).
func Decisions(contents ...string) []store.DecisionCreate {
	out := make([]store.DecisionCreate, len(contents))
	for i, c := range contents {
		out[i] = store.DecisionCreate{Content: c}
	}
	return out
}

// NewHandoff makes a thread and a draft handoff holding in's items, and
// returns the handoff.
func NewHandoff(tb testing.TB, db *store.DB, in Items) *store.Handoff {
	tb.Helper()
	ctx := context.Background()
	title := in.Title
	if title == "" {
		title = "Test"
	}
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: title, WorkspaceID: in.WorkspaceID})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := db.EnsureHandoff(ctx, th.ID)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range in.Decisions {
		if _, _, err := db.CreateDecision(ctx, h.ID, d, 0); err != nil {
			tb.Fatal(err)
		}
	}
	for _, f := range in.Files {
		if f.Relevance == "" {
			f.Relevance = store.LevelHigh
		}
		if _, err := db.CreateFileRef(ctx, h.ID, f, 0); err != nil {
			tb.Fatal(err)
		}
	}
	for _, r := range in.Risks {
		if r.Severity == "" {
			r.Severity = store.LevelMedium
		}
		if _, err := db.CreateRisk(ctx, h.ID, r, 0); err != nil {
			tb.Fatal(err)
		}
	}
	if in.Summary != "" {
		if _, err := db.SetSummary(ctx, h.ID, in.Summary, 0); err != nil {
			tb.Fatal(err)
		}
	}
	return h
}

// FrozenSnapshot makes a handoff holding in's items, as NewHandoff does,
// freezes it and returns the snapshot.
func FrozenSnapshot(tb testing.TB, db *store.DB, in Items) *store.Snapshot {
	tb.Helper()
	h := NewHandoff(tb, db, in)
	sn, err := db.Freeze(context.Background(), h.ID, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return sn
}

// SeedDecisionRecords inserts decision records into the default workspace
// (see store.DB.SeedDecisionRecords) and returns their IDs.
func SeedDecisionRecords(tb testing.TB, db *store.DB, seeds []store.DecisionRecordSeed) []string {
	tb.Helper()
	ids, err := db.SeedDecisionRecords(context.Background(), seeds)
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}

// SeedBlackboardEntries inserts blackboard entries into the default
// workspace (see store.DB.SeedBlackboardEntries) and returns their IDs.
func SeedBlackboardEntries(tb testing.TB, db *store.DB, entries []store.BlackboardEntry) []string {
	tb.Helper()
	ids, err := db.SeedBlackboardEntries(context.Background(), entries)
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}

// SeedWorkspace creates another workspace and returns its ID.
func SeedWorkspace(tb testing.TB, db *store.DB, name string) string {
	tb.Helper()
	w, err := db.CreateWorkspace(context.Background(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return w.ID
}
