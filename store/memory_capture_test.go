package store

import (
	"context"
	"errors"
	"testing"
)

// frozenForCapture freezes a handoff holding decisions and one file.
func frozenForCapture(t *testing.T, db *DB, decisions ...string) *Snapshot {
	t.Helper()
	ctx := context.Background()
	th, err := db.CreateThread(ctx, ThreadCreate{Title: "Capture"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := db.EnsureHandoff(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range decisions {
		if _, _, err := db.CreateDecision(ctx, h.ID, DecisionCreate{Content: d}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.CreateFileRef(ctx, h.ID, FileRefInput{Path: "src/db/db.go", Relevance: LevelHigh, Context: "Storage"}, 0); err != nil {
		t.Fatal(err)
	}
	sn, err := db.Freeze(ctx, h.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

// captureOf is a capture of sn in scope src/db: a learning per decision and
// the file, and an edge from each decision to the file.
func captureOf(sn *Snapshot, reverses ...string) MemoryCapture {
	c := MemoryCapture{Snapshot: sn}
	for _, d := range sn.Payload.Decisions {
		c.Decisions = append(c.Decisions, CapturedDecision{DecisionID: d.ID, Scope: "src/db", Reverses: reverses})
		c.Learnings = append(c.Learnings, Learning{Kind: LearningDecision, Content: d.Content, Scope: "src/db"})
		c.Relationships = append(c.Relationships, Relationship{Type: RelDecisionFile, Source: d.ID, Target: "src/db/db.go"})
	}
	c.Learnings = append(c.Learnings, Learning{Kind: LearningFile, Content: "Storage", Level: LevelHigh, Path: "src/db/db.go"})
	return c
}

// memoryCounts counts the rows a capture writes, and the active records.
func memoryCounts(t *testing.T, db *DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for name, q := range map[string]string{
		"records":       `SELECT COUNT(*) FROM decision_records`,
		"active":        `SELECT COUNT(*) FROM decision_records WHERE status = 'active'`,
		"learnings":     `SELECT COUNT(*) FROM learnings`,
		"relationships": `SELECT COALESCE(SUM(count), 0) FROM relationships`,
		"captures":      `SELECT COUNT(*) FROM memory_captures`,
	} {
		var n int
		if err := db.read.QueryRowContext(t.Context(), q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[name] = n
	}
	return out
}

// TestWriteMemoryCaptureIsAtomic makes the last statement of a capture fail
// and checks that nothing of it stays: no record, no supersession, no
// learning, no edge; the snapshot is still to be captured, and is once the
// failure is gone.
func TestWriteMemoryCaptureIsAtomic(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	first, err := db.WriteMemoryCapture(ctx, captureOf(frozenForCapture(t, db, "Use MySQL in src/db/db.go")))
	if err != nil {
		t.Fatal(err)
	}
	before := memoryCounts(t, db)

	sn := frozenForCapture(t, db, "Use Postgres in src/db/db.go instead of MySQL", "Keep migrations in src/db")
	c := captureOf(sn, first.Records[0].ID)
	repair := failInserts(t, db, "memory_captures")
	if _, err := db.WriteMemoryCapture(ctx, c); err == nil {
		t.Fatal("capture succeeded through a failing write")
	}
	if after := memoryCounts(t, db); !equalCounts(before, after) {
		t.Errorf("after a failed capture: %v, want what was there before: %v", after, before)
	}
	st, err := db.FindCaptureState(ctx, sn, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Captured || len(st.Targets) != 2 || st.Targets[0].Existing != nil || !st.Targets[0].Changed {
		t.Errorf("capture state %+v, want uncaptured with two new decisions", st)
	}

	repair()
	res, err := db.WriteMemoryCapture(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 2 || len(res.Superseded) != 1 || res.Superseded[0].OldID != first.Records[0].ID || res.Learnings != 3 || res.Relationships != 2 {
		t.Errorf("retry = %+v, want 2 created, the MySQL record superseded, 3 learnings, 2 edges", res)
	}
	got := memoryCounts(t, db)
	want := map[string]int{"records": 3, "active": 2, "learnings": 5, "relationships": 3, "captures": 2}
	if !equalCounts(got, want) {
		t.Errorf("after the retry: %v, want %v", got, want)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestWriteMemoryCaptureRefusesAMisfit(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	sn := frozenForCapture(t, db, "Use SQLite", "Back up nightly")
	short := captureOf(sn)
	short.Decisions = short.Decisions[:1]
	swapped := captureOf(sn)
	swapped.Decisions[0], swapped.Decisions[1] = swapped.Decisions[1], swapped.Decisions[0]
	stray := captureOf(sn)
	stray.Relationships = append(stray.Relationships, Relationship{Type: RelDecisionRisk, Source: "not-a-decision", Target: "Risk"})
	badKind := captureOf(sn)
	badKind.Learnings = append(badKind.Learnings, Learning{Kind: "rumour", Content: "x"})
	otherWS := captureOf(sn)
	otherWS.WorkspaceID = "other-workspace"

	tests := []struct {
		name string
		c    MemoryCapture
		want error
	}{
		{"no snapshot", MemoryCapture{}, ErrInvalid},
		{"unknown snapshot", MemoryCapture{Snapshot: &Snapshot{ID: "nope"}}, ErrNotFound},
		{"a decision missing", short, ErrInvalid},
		{"decisions out of order", swapped, ErrInvalid},
		{"edge from no decision", stray, ErrInvalid},
		{"unknown learning kind", badKind, ErrInvalid},
		{"another workspace", otherWS, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := db.WriteMemoryCapture(ctx, tt.c); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if n := memoryCounts(t, db)["records"]; n != 0 {
				t.Fatalf("%d records written, want none", n)
			}
		})
	}
	if _, err := db.FindCaptureState(ctx, sn, "other-workspace"); !errors.Is(err, ErrInvalid) {
		t.Errorf("FindCaptureState in another workspace: err = %v, want ErrInvalid", err)
	}
}
