package store

import (
	"context"
	"testing"
	"time"
)

// This test sits inside the package because a second workspace can only be
// made with SQL so far.

func TestTokensUsed(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	now := time.Date(2026, time.October, 31, 23, 59, 59, 999_999_999, time.UTC)
	db.SetClock(func() time.Time { return now })
	at := func(tm time.Time) { now = tm }
	monthStart := time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

	other := newID()
	if _, err := db.write.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES (?, 'Other', ?)`, other, formatTime(now)); err != nil {
		t.Fatal(err)
	}
	thread := func(workspaceID string) *Thread {
		t.Helper()
		th, err := db.CreateThread(ctx, ThreadCreate{Title: "usage", WorkspaceID: workspaceID})
		if err != nil {
			t.Fatal(err)
		}
		return th
	}
	message := func(th *Thread, role Role, status MessageStatus, in, out int64) {
		t.Helper()
		if _, err := db.CreateMessage(ctx, MessageCreate{ThreadID: th.ID, Role: role, Content: "words", Status: status, InputTokens: in, OutputTokens: out}); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(th *Thread, in, out int64, finish bool) {
		t.Helper()
		h, err := db.EnsureHandoff(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CreateDecision(ctx, h.ID, DecisionCreate{Content: "Use SQLite."}, 0); err != nil {
			t.Fatal(err)
		}
		sn, err := db.Freeze(ctx, h.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.CreatePlan(ctx, sn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if finish {
			if _, err := db.FinishPlan(ctx, p.ID, PlanFinish{Status: PlanComplete, Markdown: "# Plan", InputTokens: in, OutputTokens: out}); err != nil {
				t.Fatal(err)
			}
		}
	}

	ours, theirs := thread(""), thread(other)
	// Last month, one instant before it ended: not counted.
	message(ours, RoleAssistant, StatusComplete, 100_000, 10_000)
	plan(ours, 200_000, 20_000, true)

	at(monthStart) // counted from its first instant
	message(ours, RoleAssistant, StatusComplete, 200, 20)
	// User messages carry no usage of their own; tokens on one are not a reply's.
	message(ours, RoleUser, StatusComplete, 1_000_000, 0)
	at(monthStart.Add(14 * 24 * time.Hour))
	message(ours, RoleAssistant, StatusStopped, 300, 30)
	message(ours, RoleAssistant, StatusFailed, 4, 0)
	message(theirs, RoleAssistant, StatusComplete, 5_000_000, 500_000)
	plan(theirs, 6_000_000, 600_000, true)
	at(monthStart.Add(20 * 24 * time.Hour))
	// A second thread of ours, with a plan.
	second := thread("")
	message(second, RoleAssistant, StatusComplete, 50, 5)
	plan(second, 7_000, 700, true)

	wantOurs := int64(220 + 330 + 4 + 55 + 7_700)
	tests := []struct {
		name      string
		workspace string
		since     time.Time
		want      int64
	}{
		{"this month", db.DefaultWorkspaceID(), monthStart, wantOurs},
		{"since last month", db.DefaultWorkspaceID(), monthStart.AddDate(0, -1, 0), wantOurs + 110_000 + 220_000},
		{"since the middle of the month", db.DefaultWorkspaceID(), monthStart.Add(14 * 24 * time.Hour), 334 + 55 + 7_700},
		{"the other workspace", other, monthStart, 5_500_000 + 6_600_000},
		{"nothing since", db.DefaultWorkspaceID(), monthStart.AddDate(0, 1, 0), 0},
		{"unknown workspace", "no-such-workspace", monthStart, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.TokensUsed(ctx, tt.workspace, tt.since)
			if err != nil {
				t.Fatalf("TokensUsed: %v", err)
			}
			if got != tt.want {
				t.Fatalf("TokensUsed=%d, want %d", got, tt.want)
			}
		})
	}

	t.Run("a running plan counts once it finishes", func(t *testing.T) {
		third := thread("")
		plan(third, 0, 0, false)
		got, err := db.TokensUsed(ctx, db.DefaultWorkspaceID(), monthStart)
		if err != nil {
			t.Fatal(err)
		}
		if got != wantOurs {
			t.Fatalf("TokensUsed=%d with a plan running, want %d", got, wantOurs)
		}
	})

	t.Run("since in another zone", func(t *testing.T) {
		// The same instant written in another zone counts the same.
		tokyo := time.FixedZone("JST", 9*60*60)
		got, err := db.TokensUsed(ctx, db.DefaultWorkspaceID(), monthStart.In(tokyo))
		if err != nil {
			t.Fatal(err)
		}
		if got != wantOurs {
			t.Fatalf("TokensUsed=%d, want %d", got, wantOurs)
		}
	})
}

// TestTokensUsedCountsExtractions checks that a model extraction counts
// toward the budget, whether it merged or failed after the model answered.
func TestTokensUsedCountsExtractions(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	since := db.now().Add(-time.Minute)
	th, err := db.CreateThread(ctx, ThreadCreate{Title: "x"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := db.EnsureHandoff(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	run, err := db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CompleteExtractionRun(ctx, run.ID, ExtractionMerge{Summary: "s", InputTokens: 300, OutputTokens: 40}); err != nil {
		t.Fatal(err)
	}
	failed, err := db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetExtractionUsage(ctx, failed.ID, 200, 10); err != nil {
		t.Fatal(err)
	}
	if err := db.FailExtractionRun(ctx, failed.ID, RunFailed, "bad answer"); err != nil {
		t.Fatal(err)
	}
	got, err := db.TokensUsed(ctx, db.DefaultWorkspaceID(), since)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(300 + 40 + 200 + 10); got != want {
		t.Fatalf("TokensUsed=%d, want %d", got, want)
	}
}
