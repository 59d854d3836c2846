package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// RunStatus is the state of an extraction run.
type RunStatus string

// Run statuses.
const (
	RunRunning   RunStatus = "running"
	RunSucceeded RunStatus = "succeeded"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// ExtractionRun is one "Ready to plan" extraction of a handoff.
type ExtractionRun struct {
	ID         string
	HandoffID  string
	Status     RunStatus
	Error      string
	Added      int
	StartedAt  time.Time
	FinishedAt time.Time
}

// StartExtractionRun records a running extraction. Returns ErrConflict if
// one is already running for the handoff.
func (db *DB) StartExtractionRun(ctx context.Context, handoffID string) (*ExtractionRun, error) {
	run := &ExtractionRun{ID: newID(), HandoffID: handoffID, Status: RunRunning, StartedAt: db.now()}
	_, err := db.write.ExecContext(ctx,
		`INSERT INTO extraction_runs (id, handoff_id, status, started_at) VALUES (?, ?, 'running', ?)`,
		run.ID, handoffID, formatTime(run.StartedAt))
	switch {
	case violationOf(err) == uniqueViolation:
		return nil, Errorf(ECONFLICT, "An extraction is already running for this handoff.")
	case violationOf(err) == foreignKeyViolation:
		return nil, fmt.Errorf("handoff %s: %w", handoffID, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("start extraction: %w", err)
	}
	return run, nil
}

// FindLatestExtractionRun returns a handoff's most recent run, or ErrNotFound.
func (db *DB) FindLatestExtractionRun(ctx context.Context, handoffID string) (*ExtractionRun, error) {
	var r ExtractionRun
	var started string
	var finished sql.NullString
	err := db.readRow(ctx,
		`SELECT id, handoff_id, status, error, added, started_at, finished_at FROM extraction_runs
		 WHERE handoff_id = ? ORDER BY started_at DESC, id DESC LIMIT 1`, handoffID).
		Scan(&r.ID, &r.HandoffID, &r.Status, &r.Error, &r.Added, &started, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("extraction run for %s: %w", handoffID, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find extraction run: %w", err)
	}
	r.StartedAt = parseTime(started)
	if finished.Valid {
		r.FinishedAt = parseTime(finished.String)
	}
	return &r, nil
}

// FailExtractionRun ends a run as failed or cancelled, merging nothing.
func (db *DB) FailExtractionRun(ctx context.Context, runID string, status RunStatus, message string) error {
	if status != RunFailed && status != RunCancelled {
		return Errorf(EINVALID, "A run ends as failed or cancelled here, not %q.", status)
	}
	_, err := db.write.ExecContext(ctx,
		`UPDATE extraction_runs SET status = ?, error = ?, finished_at = ? WHERE id = ? AND status = 'running'`,
		status, message, formatTime(db.now()), runID)
	if err != nil {
		return fmt.Errorf("end extraction run %s: %w", runID, err)
	}
	return nil
}

// SetExtractionUsage records what a run's model call cost, for a run that
// failed after the model answered (its tokens were spent all the same).
func (db *DB) SetExtractionUsage(ctx context.Context, runID string, input, output int64) error {
	if _, err := db.write.ExecContext(ctx,
		`UPDATE extraction_runs SET input_tokens = ?, output_tokens = ? WHERE id = ?`, input, output, runID); err != nil {
		return fmt.Errorf("set extraction usage %s: %w", runID, err)
	}
	return nil
}

// failInterruptedRuns ends runs that a previous process left running.
func (db *DB) failInterruptedRuns(ctx context.Context) error {
	_, err := db.write.ExecContext(ctx,
		`UPDATE extraction_runs SET status = 'failed', error = 'Interrupted by a restart. Run it again.', finished_at = ?
		 WHERE status = 'running'`, formatTime(db.now()))
	return err
}

// ExtractionMerge is what an extraction adds to a handoff, and what the
// model call cost.
type ExtractionMerge struct {
	Summary      string
	Decisions    []DecisionCreate
	Files        []FileRefInput
	Risks        []RiskInput
	InputTokens  int64
	OutputTokens int64
}

// CompleteExtractionRun merges an extraction into the run's handoff and
// marks the run succeeded, in one transaction: items are appended without
// touching what people pinned or edited, an item equal to one already
// there is skipped, and the summary is replaced. If anything is invalid,
// nothing is merged and the error says what. Returns how many items were added.
func (db *DB) CompleteExtractionRun(ctx context.Context, runID string, m ExtractionMerge) (int, error) {
	for i := range m.Decisions {
		m.Decisions[i].Source = SourceAI
		if err := m.Decisions[i].validate(); err != nil {
			return 0, err
		}
	}
	for i := range m.Files {
		m.Files[i].Source = SourceAI
		if err := m.Files[i].validate(); err != nil {
			return 0, err
		}
	}
	for i := range m.Risks {
		m.Risks[i].Source = SourceAI
		if err := m.Risks[i].validate(); err != nil {
			return 0, err
		}
	}
	summary, err := checkText("summary", m.Summary, false)
	if err != nil {
		return 0, err
	}

	added := 0
	err = db.inTx(ctx, func(tx *txn) error {
		var handoffID string
		err := tx.QueryRowContext(ctx, `SELECT handoff_id FROM extraction_runs WHERE id = ? AND status = 'running'`, runID).Scan(&handoffID)
		if err != nil {
			return notFound(err, "running extraction %s", runID)
		}
		h := &Handoff{ID: handoffID}
		if err := findItems(ctx, tx, h); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, d := range h.Decisions {
			seen["d:"+sameText(d.Content)] = true
		}
		for _, f := range h.Files {
			seen["f:"+f.Path] = true
		}
		for _, r := range h.Risks {
			seen["r:"+sameText(r.Description)] = true
		}
		now := db.now()
		// fresh reports whether key is new, and if so counts it and moves
		// now on, to keep the extractor's order.
		fresh := func(key string) bool {
			if seen[key] {
				return false
			}
			seen[key] = true
			added++
			now = now.Add(time.Microsecond)
			return true
		}
		for _, d := range m.Decisions {
			if fresh("d:" + sameText(d.Content)) {
				if err := insertDecision(ctx, tx, handoffID, newID(), d, now); err != nil {
					return err
				}
			}
		}
		for _, f := range m.Files {
			if fresh("f:" + f.Path) {
				if err := insertFileRef(ctx, tx, handoffID, newID(), f, now); err != nil {
					return err
				}
			}
		}
		for _, r := range m.Risks {
			if fresh("r:" + sameText(r.Description)) {
				if err := insertRisk(ctx, tx, handoffID, newID(), r, now); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE handoffs SET summary = ? WHERE id = ?`, summary, handoffID); err != nil {
			return err
		}
		if _, err := touchHandoff(ctx, tx, handoffID, 0, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`UPDATE extraction_runs SET status = 'succeeded', added = ?, input_tokens = ?, output_tokens = ?, finished_at = ?
			 WHERE id = ?`,
			added, m.InputTokens, m.OutputTokens, formatTime(now), runID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("merge extraction: %w", err)
	}
	return added, nil
}

// sameText folds case, spacing and trailing punctuation, so that "Use JWT."
// and "use  jwt" count as the same item.
func sameText(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// Freeze makes an immutable snapshot of a handoff (canonical JSON and its
// sha256) and marks the handoff frozen. Freezing again makes a new
// snapshot; earlier ones never change. If version is not zero it must be
// the handoff's current version, so that nobody freezes edits they have
// not seen (ErrConflict). Returns ErrInvalid if there is no decision to
// plan from.
func (db *DB) Freeze(ctx context.Context, handoffID string, version int) (*Snapshot, error) {
	var sn *Snapshot
	err := db.inTx(ctx, func(tx *txn) error {
		h, err := scanHandoff(tx.QueryRowContext(ctx, `SELECT `+handoffColumns+` FROM handoffs WHERE id = ?`, handoffID))
		if err != nil {
			return notFound(err, "handoff %s", handoffID)
		}
		if version != 0 && h.Version != version {
			return staleVersion(h.Version, version)
		}
		if err := findItems(ctx, tx, h); err != nil {
			return err
		}
		if len(h.Decisions) == 0 {
			return Errorf(EINVALID, "Nothing to plan yet: add at least one decision before you start planning.")
		}
		now := db.now()
		p := SnapshotPayload{HandoffID: h.ID, ThreadID: h.ThreadID, Summary: h.Summary, FrozenAt: now,
			Decisions: []SnapshotDecision{}, FilesReferenced: []SnapshotFile{}, Risks: []SnapshotRisk{}}
		for _, d := range h.Decisions {
			ids := d.MessageIDs
			if ids == nil {
				ids = []string{}
			}
			p.Decisions = append(p.Decisions, SnapshotDecision{Label: d.Label, ID: d.ID, Content: d.Content,
				Source: d.Source, Confidence: d.Confidence, MessageIDs: ids})
		}
		for _, f := range h.Files {
			p.FilesReferenced = append(p.FilesReferenced, SnapshotFile{ID: f.ID, Path: f.Path, Relevance: f.Relevance, Context: f.Context})
		}
		for _, r := range h.Risks {
			p.Risks = append(p.Risks, SnapshotRisk{ID: r.ID, Description: r.Description, Severity: r.Severity, Mitigation: r.Mitigation})
		}
		b, sum, err := canonicalJSON(&p)
		if err != nil {
			return err
		}
		sn = &Snapshot{ID: newID(), HandoffID: h.ID, Payload: p, JSON: b, SHA256: sum, CreatedAt: now}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO snapshots (id, handoff_id, payload, sha256, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)`,
			sn.ID, sn.HandoffID, string(b), sum, formatTime(now), actor(ctx)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE handoffs SET status = 'frozen', updated_at = ? WHERE id = ?`, formatTime(now), h.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("freeze handoff %s: %w", handoffID, err)
	}
	return sn, nil
}
