package store

import (
	"context"
	"fmt"
	"time"
)

// DecisionRecordSeed is a decision record SeedDecisionRecords inserts.
type DecisionRecordSeed struct {
	Content string
	Scope   string // ProjectScope when empty
	Status  DecisionStatus
}

// SeedDecisionRecords inserts decision records into the default workspace
// for a test or benchmark, in one transaction, oldest first, under one
// frozen handoff, and returns their IDs. It skips extraction and capture,
// so that tens of thousands of records take a moment.
//
// It is for tests, benchmarks and demonstrations with large memories.
func (db *DB) SeedDecisionRecords(ctx context.Context, seeds []DecisionRecordSeed) ([]string, error) {
	th, err := db.CreateThread(ctx, ThreadCreate{Title: "Seed"})
	if err != nil {
		return nil, err
	}
	h, err := db.EnsureHandoff(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	if _, _, err := db.CreateDecision(ctx, h.ID, DecisionCreate{Content: "Seed"}, 0); err != nil {
		return nil, err
	}
	sn, err := db.Freeze(ctx, h.ID, 0)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(seeds))
	start := db.now().Add(-time.Duration(len(seeds)) * time.Second)
	err = db.inTx(ctx, func(tx *txn) error {
		st, err := tx.PrepareContext(ctx,
			`INSERT INTO decision_records (id, workspace_id, handoff_id, snapshot_id, thread_id, decision_id, label,
			   content, scope, status, message_ids, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, s := range seeds {
			if s.Scope == "" {
				s.Scope = ProjectScope
			}
			if s.Status == "" {
				s.Status = DecisionActive
			}
			ids[i] = newID()
			at := formatTime(start.Add(time.Duration(i) * time.Second))
			if _, err := st.ExecContext(ctx, ids[i], db.defaultWorkspace, h.ID, sn.ID, th.ID, newID(),
				fmt.Sprintf("D%d", i+1), s.Content, s.Scope, s.Status, at, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("seed decision records: %w", err)
	}
	if err := db.settle(ctx, "decision_records"); err != nil {
		return nil, fmt.Errorf("seed decision records: %w", err)
	}
	return ids, nil
}

// SeedBlackboardEntries inserts blackboard entries into the default
// workspace for a test or benchmark, in one transaction, oldest first, and
// returns their IDs. Entries are stored as given, after Validate. It is for
// tests, benchmarks and demonstrations with large blackboards.
func (db *DB) SeedBlackboardEntries(ctx context.Context, entries []BlackboardEntry) ([]string, error) {
	ids := make([]string, len(entries))
	now := db.now().Add(-time.Duration(len(entries)) * time.Second)
	err := db.inTx(ctx, func(tx *txn) error {
		for i := range entries {
			e := &entries[i]
			e.WorkspaceID = db.defaultWorkspace
			e.normalize()
			if err := e.Validate(); err != nil {
				return err
			}
			if err := insertBlackboardEntry(ctx, tx, e, now.Add(time.Duration(i)*time.Second)); err != nil {
				return err
			}
			ids[i] = e.ID
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("seed blackboard entries: %w", err)
	}
	if err := db.settle(ctx, "blackboard_entries"); err != nil {
		return nil, fmt.Errorf("seed blackboard entries: %w", err)
	}
	return ids, nil
}

// settle brings PostgreSQL's planner statistics and visibility map of a
// table up to date after a bulk insert, as autovacuum would a minute
// later: until then the planner takes the table for nearly empty and
// filters thousands of rows instead of searching the index that fits.
// SQLite plans without statistics.
func (db *DB) settle(ctx context.Context, table string) error {
	if db.eng != enginePostgres {
		return nil
	}
	_, err := db.write.ExecContext(ctx, `VACUUM (ANALYZE) `+table)
	return err
}
