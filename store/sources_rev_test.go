package store

import (
	"context"
	"slices"
	"testing"
)

// TestSnapshotSourcesFollowEveryWriter checks that an agent handoff with no
// scope, whose sources the store keeps under the workspace's decisions_rev
// and blackboard_rev, cites what the workspace holds after every kind of
// change made through a second handle on the same database (as another
// server or the CLI would):
// decision records added, superseded, reactivated and deleted, warnings and
// findings posted. Each read is compared with one made with an empty cache.
func TestSnapshotSourcesFollowEveryWriter(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	other := openTwin(t, db)
	check := stepChecker(t)
	assemble := &Assembly{Limits: SourceLimits{Decisions: 2, Warnings: 1, Findings: 1}, Build: func(s SnapshotSources) ContextSnapshot {
		snap := ContextSnapshot{DecisionIDs: s.Decisions.IDs, WarningIDs: s.Warnings.IDs, FindingIDs: s.Findings.IDs}
		for _, l := range []SourceList{s.Decisions, s.Warnings, s.Findings} {
			snap.Summaries = append(snap.Summaries, l.Texts...)
		}
		return snap
	}}
	create := func() ContextSnapshot {
		t.Helper()
		h := &AgentHandoff{SourceAgent: "claude-code", Summary: "Over to you"}
		status := &BlackboardEntry{Type: EntryStatus, Summary: "Handoff created", AgentID: "claude-code"}
		check("create handoff", db.CreateAgentHandoff(ctx, h, status, assemble))
		return h.Snapshot
	}
	// snapshot creates two handoffs as a handler would (the second from the
	// cache when nothing changed) and one with an empty cache, and checks
	// that all three cite the same.
	snapshot := func(step string) ContextSnapshot {
		t.Helper()
		first, second := create(), create()
		kept := db.sources
		db.sources = newRevCache[keptSources](1)
		want := create()
		db.sources = kept
		for _, got := range []ContextSnapshot{first, second} {
			if !snapshotsEqual(got, want) {
				t.Fatalf("after %s, the snapshot is %+v; read afresh, %+v", step, got, want)
			}
		}
		return want
	}
	if s := snapshot("nothing"); len(s.DecisionIDs)+len(s.WarningIDs)+len(s.FindingIDs) != 0 {
		t.Fatalf("an empty workspace's snapshot cites %+v", s)
	}

	ids, err := other.SeedDecisionRecords(ctx, []DecisionRecordSeed{{Content: "Use Redis"}, {Content: "Keep Postgres"}, {Content: "Old", Status: DecisionSuperseded}})
	check("seed decision records", err)
	if s := snapshot("decision records added"); !slices.Equal(s.DecisionIDs, []string{ids[1], ids[0]}) || !slices.Equal(s.Summaries, []string{"Keep Postgres", "Use Redis"}) {
		t.Fatalf("after adding decision records elsewhere, the snapshot is %+v", s)
	}
	for _, e := range []BlackboardEntry{
		{Type: EntryWarning, Summary: "Flaky test in auth", AgentID: "codex"},
		{Type: EntryFinding, Summary: "The cache is never warmed", AgentID: "codex"},
	} {
		check("post "+string(e.Type), other.CreateBlackboardEntry(ctx, &e))
		s := snapshot("a " + string(e.Type) + " posted")
		if got := map[EntryType][]string{EntryWarning: s.WarningIDs, EntryFinding: s.FindingIDs}[e.Type]; !slices.Equal(got, []string{e.ID}) {
			t.Fatalf("after posting a %s elsewhere, the snapshot is %+v", e.Type, s)
		}
	}
	check("supersede", other.SupersedeDecisionRecord(ctx, ids[0], ids[1]))
	if s := snapshot("a decision record superseded"); !slices.Equal(s.DecisionIDs, []string{ids[1]}) {
		t.Fatalf("after superseding a record elsewhere, the snapshot cites %v", s.DecisionIDs)
	}
	check("reactivate", other.ReactivateDecisionRecord(ctx, ids[2]))
	if s := snapshot("a decision record reactivated"); !slices.Equal(s.DecisionIDs, []string{ids[2], ids[1]}) {
		t.Fatalf("after reactivating a record elsewhere, the snapshot cites %v", s.DecisionIDs)
	}
	_, err = other.write.ExecContext(ctx, `DELETE FROM decision_records WHERE id = ?`, ids[2])
	check("delete a decision record", err)
	if s := snapshot("a decision record deleted"); !slices.Equal(s.DecisionIDs, []string{ids[1]}) {
		t.Fatalf("after deleting a record elsewhere, the snapshot cites %v", s.DecisionIDs)
	}

	// The status note each handoff posts leaves the revisions alone, so
	// that handoffs in a row reuse what the first read.
	revs := func() (d, b int64) {
		t.Helper()
		err := db.read.QueryRowContext(ctx, `SELECT decisions_rev, blackboard_rev FROM workspaces WHERE id = ?`, db.workspace("")).Scan(&d, &b)
		check("read revisions", err)
		return d, b
	}
	d0, b0 := revs()
	create()
	if d1, b1 := revs(); d1 != d0 || b1 != b0 {
		t.Fatalf("a handoff moved the revisions from %d, %d to %d, %d", d0, b0, d1, b1)
	}

	// A caller changing what it was given does not change the next one's.
	s := create()
	s.DecisionIDs[0], s.Summaries[0] = "changed", "changed"
	if again := create(); again.DecisionIDs[0] != ids[1] || again.Summaries[0] != "Keep Postgres" {
		t.Fatalf("changing a snapshot changed the next one: %+v", again)
	}
}

func snapshotsEqual(a, b ContextSnapshot) bool {
	return slices.Equal(a.DecisionIDs, b.DecisionIDs) && slices.Equal(a.WarningIDs, b.WarningIDs) &&
		slices.Equal(a.FindingIDs, b.FindingIDs) && slices.Equal(a.Summaries, b.Summaries)
}

// TestSourceListsSplitMatchesOneRead checks that reading a kind's rows in
// two halves at once gives the lists one read gives, also when more texts
// are asked for than the newer half holds.
func TestSourceListsSplitMatchesOneRead(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	seeds := make([]DecisionRecordSeed, 11)
	for i := range seeds {
		seeds[i] = DecisionRecordSeed{Content: "Decision " + string(rune('a'+i))}
		if i%4 == 3 {
			seeds[i].Status = DecisionSuperseded
		}
	}
	if _, err := db.SeedDecisionRecords(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	ws := db.workspace("")
	for _, limit := range []int{0, 3, 7, 20} {
		var one, split SourceList
		kind := func(l *SourceList) []sourceKind {
			return []sourceKind{{`decision_records`, `content`, `status = ?`, DecisionActive, `decision_records_active_rid`, l, limit}}
		}
		if err := db.inReadTx(ctx, func(tx *txn) error { return findAllSourceLists(ctx, tx, ws, kind(&one)) }); err != nil {
			t.Fatal(err)
		}
		if err := db.findSourceListsSplit(ctx, ws, kind(&split), `decisions_rev`); err != nil {
			t.Fatal(err)
		}
		if len(one.IDs) != 9 || !slices.Equal(one.IDs, split.IDs) || !slices.Equal(one.Texts, split.Texts) {
			t.Errorf("limit %d: one read %+v, two halves %+v", limit, one, split)
		}
	}
}
