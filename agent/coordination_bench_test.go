package agent_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// seedCoordination fills the default workspace with 10,000 decision records
// (one in ten superseded) and 10,000 blackboard entries (warnings, findings
// and status notes in turn), spread over 50 directories of 5 packages each,
// and returns the decision records' IDs, oldest first.
func seedCoordination(b *testing.B, db *store.DB) []string {
	b.Helper()
	const n = 10_000
	scope := func(i int) string { return fmt.Sprintf("src/dir%02d/pkg%d", i%50, i%5) }
	seeds := make([]store.DecisionRecordSeed, n)
	for i := range seeds {
		seeds[i] = store.DecisionRecordSeed{Content: fmt.Sprintf("Decision %d about the %s package", i, scope(i)), Scope: scope(i)}
		if i%10 == 9 {
			seeds[i].Status = store.DecisionSuperseded
		}
	}
	ids := storetest.SeedDecisionRecords(b, db, seeds)
	types := []store.EntryType{store.EntryWarning, store.EntryFinding, store.EntryStatus}
	entries := make([]store.BlackboardEntry, n)
	for i := range entries {
		entries[i] = store.BlackboardEntry{Type: types[i%3], Summary: fmt.Sprintf("Note %d", i), Scope: scope(i*7) + "/", AgentID: "seed"}
	}
	storetest.SeedBlackboardEntries(b, db, entries)
	return ids
}

// BenchmarkCreateHandoff creates agent handoffs (snapshot assembled, then
// the handoff and its status entry written in one transaction) in a
// workspace of 10,000 decision records and 10,000 blackboard entries. p50-ms is the median of the operations.
// "scoped" hands off one package's work (about 180 decisions and 130
// warnings and findings match); "project" has no scope, so every active
// record and every warning and finding is cited (about 15,700 ids), and
// nothing changes between handoffs, so the store reuses what it read for
// the last one; before each handoff (not timed), "project-new-warning"
// posts a warning, so the warnings and findings are read again, and
// "project-decision-changed" supersedes or reactivates a decision record,
// so the decision records are.
//
// It runs on SQLite and on PostgreSQL (sqlite/…, postgres/…).
func BenchmarkCreateHandoff(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(eng.Name, func(b *testing.B) { benchCreateHandoff(b, eng.Open(b)) })
	}
}

func benchCreateHandoff(b *testing.B, db *store.DB) {
	decisions := seedCoordination(b, db)
	ctx := context.Background()
	for _, bc := range []struct {
		name, scope string
		change      func(i int) error
	}{
		{"scoped", "src/dir07/pkg2/", nil},
		{"project", "", nil},
		{"project-new-warning", "", func(int) error {
			return db.CreateBlackboardEntry(ctx, &store.BlackboardEntry{Type: store.EntryWarning, Summary: "Another warning", AgentID: "bench"})
		}},
		{"project-decision-changed", "", func(i int) error {
			if i%2 == 0 {
				return db.SupersedeDecisionRecord(ctx, decisions[0], decisions[1])
			}
			return db.ReactivateDecisionRecord(ctx, decisions[0])
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var took []time.Duration
			var ids int
			for i := 0; b.Loop(); i++ {
				if bc.change != nil {
					if err := bc.change(i); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				h, err := agent.CreateHandoff(ctx, db, agent.HandoffRequest{SourceAgent: "claude-code", Scope: bc.scope,
					Summary: "Benchmark handoff", Results: []byte(`["done"]`)})
				took = append(took, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				ids = len(h.Snapshot.DecisionIDs) + len(h.Snapshot.WarningIDs) + len(h.Snapshot.FindingIDs)
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ids), "ids")
		})
	}
}
