package agent_test

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// TestCreateHandoffUnscoped checks the snapshot of a handoff with no scope,
// which reads every ID from the ordered indexes: every active record,
// warning and finding, newest first, summaries of the first ones, and the
// same snapshot when read back.
func TestCreateHandoffUnscoped(t *testing.T) {
	db := storetest.MustOpen(t)
	ids := storetest.SeedDecisionRecords(t, db, []store.DecisionRecordSeed{
		{Content: "Use JWT", Scope: "src/auth/jwt"},
		{Content: "Old auth", Scope: "src/auth", Status: store.DecisionSuperseded},
		{Content: "Bill\nmonthly", Scope: "src/billing"},
		{Content: "Everything in Go", Scope: "project"},
	})
	w1 := postEntry(t, db, store.EntryWarning, "src/billing/", "Rounding")
	f1 := postEntry(t, db, store.EntryFinding, "src/", "Tests are slow")
	postEntry(t, db, store.EntryStatus, "project", "Working on it")
	w2 := postEntry(t, db, store.EntryWarning, "project", `Quotes " and <tags> & \ stay`)

	want := store.ContextSnapshot{
		DecisionIDs: []string{ids[3], ids[2], ids[0]},
		WarningIDs:  []string{w2, w1},
		FindingIDs:  []string{f1},
		Summaries: []string{"Decision: Everything in Go", "Decision: Bill monthly", "Decision: Use JWT",
			`Warning: Quotes " and <tags> & \ stay`, "Warning: Rounding", "Finding: Tests are slow"},
	}
	for _, scope := range []string{"", "project"} {
		h := handoff(t, db, agent.HandoffRequest{Scope: scope})
		if diff := cmp.Diff(want, h.Snapshot); diff != "" {
			t.Fatalf("scope %q: snapshot (-want +got):\n%s", scope, diff)
		}
		got, err := db.FindAgentHandoffByID(context.Background(), "", h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.Snapshot); diff != "" {
			t.Fatalf("scope %q: stored snapshot (-want +got):\n%s", scope, diff)
		}
	}

	t.Run("empty workspace", func(t *testing.T) {
		ws := storetest.SeedWorkspace(t, db, "Empty")
		h, err := agent.CreateHandoff(context.Background(), db, agent.HandoffRequest{WorkspaceID: ws, SourceAgent: "codex", Summary: "Nothing yet"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(store.EmptyContextSnapshot(), h.Snapshot); diff != "" {
			t.Fatalf("snapshot (-want +got):\n%s", diff)
		}
	})
}
