package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// planSnapshot makes a thread, a handoff with decisions and a snapshot of it.
func planSnapshot(t *testing.T, db *store.DB, decisions ...string) *store.Snapshot {
	t.Helper()
	return storetest.FrozenSnapshot(t, db, storetest.Items{Title: "plans", Decisions: storetest.Decisions(decisions...)})
}

// planClock makes the store's clock advance a millisecond per reading, so that
// creation order is time order.
func planClock(db *store.DB) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	db.SetClock(func() time.Time {
		now = now.Add(time.Millisecond)
		return now
	})
}

func TestCreatePlanVersions(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	planClock(db)
	sn := planSnapshot(t, db, "Use SQLite.")
	other, err := db.Freeze(ctx, sn.HandoffID, 0)
	if err != nil {
		t.Fatal(err)
	}

	finish := func(p *store.Plan) {
		t.Helper()
		if _, err := db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanComplete, Markdown: "# Plan"}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		snapshotID  string
		wantVersion int
	}{
		{"first plan of a snapshot", sn.ID, 1},
		{"planning again makes the next version", sn.ID, 2},
		{"and again", sn.ID, 3},
		{"another snapshot counts on its own", other.ID, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := db.CreatePlan(ctx, tt.snapshotID)
			if err != nil {
				t.Fatal(err)
			}
			if p.Version != tt.wantVersion {
				t.Fatalf("Version=%d, want %d", p.Version, tt.wantVersion)
			}
			if p.Status != store.PlanRunning || p.HandoffID != sn.HandoffID || p.SnapshotID != tt.snapshotID {
				t.Fatalf("plan=%+v, want running, handoff %s, snapshot %s", p, sn.HandoffID, tt.snapshotID)
			}
			finish(p)
		})
	}

	t.Run("one running plan per snapshot", func(t *testing.T) {
		p, err := db.CreatePlan(ctx, sn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreatePlan(ctx, sn.ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second CreatePlan err=%v, want ErrConflict", err)
		}
		finish(p)
		if p, err = db.CreatePlan(ctx, sn.ID); err != nil {
			t.Fatalf("CreatePlan after the running one finished: %v", err)
		}
		finish(p)
	})
	t.Run("unknown snapshot", func(t *testing.T) {
		if _, err := db.CreatePlan(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("err=%v, want ErrNotFound", err)
		}
	})
}

func TestPlanStepsAndFinish(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	planClock(db)
	sn := planSnapshot(t, db, "Use SQLite.", "Add a plans table.")
	p, err := db.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}

	steps := []store.PlanStepCreate{
		{Kind: store.PlanStepModelCall, Description: "Step 1: asked for get_handoff_context", InputTokens: 100, OutputTokens: 5},
		{Kind: store.PlanStepToolCall, Tool: "get_handoff_context", Input: json.RawMessage(`{}`), Result: "{...}", Description: "Read the handoff context"},
		{Kind: store.PlanStepToolCall, Tool: "add_decision", Input: json.RawMessage(`{"content":""}`), Result: "content is empty", IsError: true, Description: "Could not add a decision"},
		{Kind: store.PlanStepToolCall, Tool: "x", Input: json.RawMessage(`not json`), Result: strings.Repeat("é", store.MaxPlanStepResult+10)},
	}
	for i, in := range steps {
		s, err := db.AddPlanStep(ctx, p.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if s.N != i+1 {
			t.Fatalf("step %d: N=%d, want %d", i, s.N, i+1)
		}
	}
	if _, err := db.AddPlanStep(ctx, p.ID, store.PlanStepCreate{Kind: "thinking"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("AddPlanStep with a bad kind: err=%v, want ErrInvalid", err)
	}
	if _, err := db.AddPlanStep(ctx, "nope", steps[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AddPlanStep to an unknown plan: err=%v, want ErrNotFound", err)
	}

	cov := store.Coverage{Covered: []string{"D1"}, Uncovered: []string{"D2"}}
	got, err := db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanStopped, Markdown: "# Plan (D1)",
		Summary: "  Short.  ", Coverage: cov, InputTokens: 120, OutputTokens: 40, Model: "m-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.PlanStopped || got.Markdown != "# Plan (D1)" || got.Summary != "Short." ||
		got.InputTokens != 120 || got.OutputTokens != 40 || got.Model != "m-1" || got.FinishedAt.IsZero() {
		t.Fatalf("finished plan=%+v", got)
	}
	if diff := cmp.Diff(cov, got.Coverage); diff != "" {
		t.Fatalf("Coverage (-want +got):\n%s", diff)
	}
	if s := got.Coverage.String(); s != "covers 1 of 2" {
		t.Fatalf("Coverage.String()=%q, want %q", s, "covers 1 of 2")
	}

	if len(got.Steps) != len(steps) {
		t.Fatalf("%d steps, want %d", len(got.Steps), len(steps))
	}
	for i, s := range got.Steps {
		if s.N != i+1 || s.Kind != steps[i].Kind || s.Tool != steps[i].Tool || s.IsError != steps[i].IsError {
			t.Fatalf("step %d=%+v, want %+v in order", i, s, steps[i])
		}
	}
	if s := got.Steps[0]; s.InputTokens != 100 || s.OutputTokens != 5 || s.Input != nil {
		t.Fatalf("model call step=%+v, want its usage and no input", s)
	}
	if in := string(got.Steps[2].Input); in != `{"content":""}` {
		t.Fatalf("Input=%s, want the JSON as sent", in)
	}
	bad := got.Steps[3]
	var kept string
	if err := json.Unmarshal(bad.Input, &kept); err != nil || kept != "not json" {
		t.Fatalf("Input of a call that sent no JSON=%s, want a JSON string of it", bad.Input)
	}
	if n := len([]rune(bad.Result)); n != store.MaxPlanStepResult || !strings.HasSuffix(bad.Result, "…") {
		t.Fatalf("long result kept %d characters, want %d ending with …", n, store.MaxPlanStepResult)
	}

	t.Run("a finished plan takes no more steps and no second finish", func(t *testing.T) {
		if _, err := db.AddPlanStep(ctx, p.ID, steps[0]); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("AddPlanStep err=%v, want ErrConflict", err)
		}
		if _, err := db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanComplete}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("FinishPlan err=%v, want ErrConflict", err)
		}
	})
	t.Run("running is not an ending", func(t *testing.T) {
		if _, err := db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanRunning}); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("err=%v, want ErrInvalid", err)
		}
	})
	t.Run("unknown plan", func(t *testing.T) {
		if _, err := db.FindPlanByID(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("FindPlanByID err=%v, want ErrNotFound", err)
		}
		if _, err := db.FinishPlan(ctx, "nope", store.PlanFinish{Status: store.PlanFailed}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("FinishPlan err=%v, want ErrNotFound", err)
		}
	})
}

func TestFindPlans(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	planClock(db)
	sn1 := planSnapshot(t, db, "Use SQLite.")
	sn2, err := db.Freeze(ctx, sn1.HandoffID, 0)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := planSnapshot(t, db, "Something else.")

	var made []string // in creation order
	for _, sn := range []string{sn1.ID, sn2.ID, sn1.ID, elsewhere.ID} {
		p, err := db.CreatePlan(ctx, sn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanComplete}); err != nil {
			t.Fatal(err)
		}
		made = append(made, p.ID)
	}

	tests := []struct {
		name   string
		filter store.PlanFilter
		want   []string
	}{
		{"by handoff, newest first", store.PlanFilter{HandoffID: sn1.HandoffID}, []string{made[2], made[1], made[0]}},
		{"by snapshot", store.PlanFilter{SnapshotID: sn1.ID}, []string{made[2], made[0]}},
		{"limit", store.PlanFilter{HandoffID: sn1.HandoffID, Limit: 1}, []string{made[2]}},
		{"another handoff", store.PlanFilter{HandoffID: elsewhere.HandoffID}, []string{made[3]}},
		{"nothing", store.PlanFilter{SnapshotID: "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plans, err := db.FindPlans(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range plans {
				got = append(got, p.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("plan IDs (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no filter", func(t *testing.T) {
		if _, err := db.FindPlans(ctx, store.PlanFilter{}); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("err=%v, want ErrInvalid", err)
		}
	})
}

func TestInterruptedPlansFailOnRecovery(t *testing.T) {
	ctx := context.Background()
	path := storetest.FreshDSN(t)
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sn := planSnapshot(t, db, "Use SQLite.")
	done, err := db.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishPlan(ctx, done.ID, store.PlanFinish{Status: store.PlanComplete, Markdown: "# Done"}); err != nil {
		t.Fatal(err)
	}
	running, err := db.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Opening alone (another process: baton migrate) leaves it running.
	p, err := db.FindPlanByID(ctx, running.ID)
	if err != nil || p.Status != store.PlanRunning {
		t.Fatalf("after a plain open: Status=%q err=%v, want running", p.Status, err)
	}
	if err := db.RecoverInterrupted(ctx); err != nil {
		t.Fatal(err)
	}
	p, err = db.FindPlanByID(ctx, running.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != store.PlanFailed || !strings.Contains(p.Error, "restart") || p.FinishedAt.IsZero() {
		t.Fatalf("interrupted plan: Status=%q Error=%q FinishedAt=%v, want failed by a restart", p.Status, p.Error, p.FinishedAt)
	}
	if p, err = db.FindPlanByID(ctx, done.ID); err != nil || p.Status != store.PlanComplete {
		t.Fatalf("finished plan: Status=%q err=%v, want it left complete", p.Status, err)
	}
	if _, err := db.CreatePlan(ctx, sn.ID); err != nil {
		t.Fatalf("CreatePlan after the restart: %v", err)
	}
}
