package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindHandoffInOneStatement checks that FindHandoffByID and
// FindHandoffByThread, which read a handoff and its items in one
// statement, return what reading the handoff row and then its items
// (findItems) in a transaction returns: every field of every kind of item,
// in order, with labels.
func TestFindHandoffInOneStatement(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "baton.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	u, err := db.CreateUser(ctx, UserCreate{Email: "ana@example.com", Name: "Ana", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	th, err := db.CreateThread(ctx, ThreadCreate{Title: "Limits"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := db.EnsureHandoff(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := db.FindHandoffByID(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Decisions)+len(empty.Files)+len(empty.Risks) != 0 || empty.ThreadID != th.ID {
		t.Fatalf("a new handoff reads as %+v", empty)
	}

	conf := 0.75
	for _, in := range []DecisionCreate{
		{Content: "Use Redis", Source: SourceAI, Confidence: &conf, MessageIDs: []string{"m1", "m2"}},
		{Content: "Answer 429"},
		{Content: "Plan step", Source: SourceAI, DuringPlanning: true},
	} {
		if _, _, err := db.CreateDecision(ctx, h.ID, in, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.CreateFileRef(ctx, h.ID, FileRefInput{Path: "a.go", Relevance: LevelHigh, Context: "the bucket", Source: SourceAI, MessageIDs: []string{"m1"}}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateFileRef(ctx, h.ID, FileRefInput{Path: "b.go", Relevance: LevelLow}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRisk(ctx, h.ID, RiskInput{Description: "Redis down", Severity: LevelMedium, Mitigation: "fail open", Source: SourceAI}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetSummary(ctx, h.ID, "Per-key limits.", 0); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindHandoffByID(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	edited := "Use Valkey"
	if _, _, err := db.UpdateDecision(WithActor(ctx, u.ID), h.ID, got.Decisions[0].ID, DecisionUpdate{Content: &edited, Version: got.Version}); err != nil {
		t.Fatal(err)
	}

	want := readHandoffInTx(t, db, h.ID)
	if want.Decisions[0].UpdatedBy != "Ana" || want.Decisions[0].Confidence == nil || !want.Decisions[2].DuringPlanning {
		t.Fatalf("the reference read misses fields: %+v", want.Decisions)
	}
	for name, find := range map[string]func() (*Handoff, error){
		"by id":     func() (*Handoff, error) { return db.FindHandoffByID(ctx, h.ID) },
		"by thread": func() (*Handoff, error) { return db.FindHandoffByThread(ctx, th.ID) },
	} {
		got, err := find()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the handoff differs from its rows read one table at a time (-want +got):\n%s", name, diff)
		}
	}

	if _, err := db.FindHandoffByID(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("FindHandoffByID(missing) = %v, want ErrNotFound", err)
	}
	if _, err := db.FindHandoffByThread(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("FindHandoffByThread(missing) = %v, want ErrNotFound", err)
	}
}

// readHandoffInTx reads a handoff's row, then its items, in a read
// transaction: the reference for the one-statement read.
func readHandoffInTx(t *testing.T, db *DB, id string) *Handoff {
	t.Helper()
	ctx := context.Background()
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	h, err := scanHandoff(tx.QueryRowContext(ctx, `SELECT `+handoffColumns+` FROM handoffs WHERE id = ?`, id))
	if err != nil {
		t.Fatal(err)
	}
	if err := findItems(ctx, tx, h); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT title FROM threads WHERE id = ?`, h.ThreadID).Scan(&h.ThreadTitle); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestParseStoredTime checks the fixed-width parser against parseTime,
// to the location, and that other text falls back to it.
func TestParseStoredTime(t *testing.T) {
	for _, s := range []string{
		"2026-11-23T08:05:26.123456789Z",
		"1999-01-01T00:00:00.000000000Z",
		"2024-02-29T23:59:59.999999999Z",
		"2026-11-23T08:05:26Z",
		"2026-13-23T08:05:26.123456789Z",
		"2026-11-23T08:05:26.12345678xZ",
		"",
	} {
		if got, want := parseStoredTime(s), parseTime(s); got != want {
			t.Errorf("parseStoredTime(%q) = %v, want %v", s, got, want)
		}
	}
}
