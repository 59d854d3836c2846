package envelope_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
	"github.com/baton-dev/baton/store/storetest"
)

// exportAgentHandoff is the envelope of an agent handoff of the default
// workspace, as the API serves it.
func exportAgentHandoff(t *testing.T, db *store.DB, id string) *envelope.Bundle {
	t.Helper()
	ctx := context.Background()
	h, err := db.FindAgentHandoffByID(ctx, "", id)
	if err != nil {
		t.Fatal(err)
	}
	w, err := db.FindWorkspaceByID(ctx, h.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	e, err := envelope.FromAgentHandoff(envelope.NewAgentHandoffInput(h, w))
	if err != nil {
		t.Fatal(err)
	}
	b, err := envelope.NewBundle(e, nil, envelope.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func agentHandoffCount(t *testing.T, db *store.DB, workspaceID string) int {
	t.Helper()
	hs, err := db.FindAgentHandoffs(context.Background(), store.AgentHandoffFilter{WorkspaceID: workspaceID})
	if err != nil {
		t.Fatal(err)
	}
	return len(hs)
}

// TestAgentHandoffRoundTrip exports an agent handoff, imports it and
// exports the import: the payload is the same but for the handoff's ID.
// Importing it again creates nothing; importing it into a workspace that
// lacks its snapshot's IDs is refused.
func TestAgentHandoffRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	drs := storetest.SeedDecisionRecords(t, db, []store.DecisionRecordSeed{{Content: "Use the v2 payments API."}})
	ws := storetest.SeedBlackboardEntries(t, db, []store.BlackboardEntry{{Type: store.EntryWarning, Summary: "Retries double charge.", AgentID: "claude-code"}})
	h := &store.AgentHandoff{SourceAgent: "claude-code", TargetAgent: "codex", Scope: "src/checkout/",
		Summary: "Payment call moved to v2; the retry path still needs idempotency keys.",
		Results: json.RawMessage(`[{"file": "src/checkout/pay.go", "status": "done"}, "tests pass"]`),
		Snapshot: store.ContextSnapshot{DecisionIDs: drs, WarningIDs: ws, FindingIDs: []string{},
			Summaries: []string{"Decision: Use the v2 payments API.", "Warning: Retries double charge."}}}
	status := store.BlackboardEntry{Type: store.EntryStatus, Summary: "Handoff created.", AgentID: "claude-code"}
	if err := db.CreateAgentHandoff(ctx, h, &status, nil); err != nil {
		t.Fatal(err)
	}

	first := exportAgentHandoff(t, db, h.ID)
	if got, want := first.Envelope.SessionID, db.DefaultWorkspaceID(); got != want {
		t.Fatalf("session_id = %q, want the workspace %q", got, want)
	}
	before := agentHandoffCount(t, db, "")
	imp, ps, err := envelope.Import(ctx, db, "", first.JSON, envelope.Options{})
	if err != nil || len(ps) > 0 || !imp.Created || imp.Kind != envelope.KindAgentHandoff || imp.HandoffID == h.ID {
		t.Fatalf("Import = %+v, %v, %v; want a new agent handoff", imp, ps, err)
	}
	got, err := db.FindAgentHandoffByID(ctx, "", imp.HandoffID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.AgentHandoffPending || got.SourceAgent != "claude-code" || got.TargetAgent != "codex" {
		t.Fatalf("imported handoff = %+v, want pending, from claude-code to codex", got)
	}
	if diff := cmp.Diff(h.Snapshot, got.Snapshot); diff != "" {
		t.Fatalf("context snapshot (-want +got):\n%s", diff)
	}

	second := exportAgentHandoff(t, db, imp.HandoffID)
	a, b := *first.Envelope.Payload.AgentHandoff, *second.Envelope.Payload.AgentHandoff
	a.HandoffID, b.HandoffID = "", ""
	if diff := cmp.Diff(string(mustJSON(t, a)), string(mustJSON(t, b))); diff != "" {
		t.Fatalf("payload after the round trip (-first +second):\n%s", diff)
	}

	again, ps, err := envelope.Import(ctx, db, "", first.JSON, envelope.Options{})
	if err != nil || len(ps) > 0 || again.Created || again.HandoffID != imp.HandoffID {
		t.Fatalf("second Import = %+v, %v, %v; want the first import's handoff, not created", again, ps, err)
	}
	if got := agentHandoffCount(t, db, ""); got != before+1 {
		t.Fatalf("agent handoffs = %d, want %d: one import", got, before+1)
	}

	other := storetest.SeedWorkspace(t, db, "Other")
	_, _, err = envelope.Import(ctx, db, other, first.JSON, envelope.Options{})
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "this workspace does not have") {
		t.Fatalf("Import into another workspace: err = %v, want EINVALID naming the snapshot's ID", err)
	}
	if got := agentHandoffCount(t, db, other); got != 0 {
		t.Fatalf("agent handoffs of the other workspace = %d, want 0", got)
	}
}
