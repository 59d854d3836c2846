package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// DecisionStatus says whether a decision record still holds.
type DecisionStatus string

// Decision record statuses.
const (
	DecisionActive     DecisionStatus = "active"
	DecisionSuperseded DecisionStatus = "superseded"
)

// DecisionRecord is a decision kept at workspace level: every decision of a
// captured snapshot becomes one. Scope is the part of the code it
// concerns, as the capture says (a directory, or "project"). A record is
// active until a later decision reverses it (or a person says so); it is
// then superseded, and SupersededBy names the record that replaced it.
type DecisionRecord struct {
	ID           string
	WorkspaceID  string
	HandoffID    string
	SnapshotID   string // the latest snapshot that carried it
	ThreadID     string
	DecisionID   string // the handoff decision it came from
	Label        string // D1, D2, … in its snapshot
	Content      string
	Scope        string
	Status       DecisionStatus
	SupersededBy string
	Confidence   *float64
	MessageIDs   []string
	CreatedAt    time.Time
	UpdatedAt    time.Time

	// Snippet is filled by FindDecisionRecords when a query is given: the
	// best passage of Content, with the matching words marked.
	Snippet []SnippetPart

	// Filled by FindDecisionRecordByID.
	Summary string            // the summary of the snapshot it came from
	Chain   []*DecisionRecord // the supersession chain, oldest first, this record included
	Files   []Relationship    // decision_file edges: Target is the path
	Risks   []RiskLink        // decision_risk edges
}

// SnippetPart is a piece of a search snippet. Match marks the words that
// matched the query; the text is plain, to be escaped where it is shown.
type SnippetPart struct {
	Text  string
	Match bool
}

// LearningKind is what a learning is about.
type LearningKind string

// Learning kinds.
const (
	LearningDecision LearningKind = "decision"
	LearningFile     LearningKind = "file"
	LearningRisk     LearningKind = "risk"
)

// Learning is something a snapshot taught the workspace: a decision (unless
// its confidence was low), a file with the reason it matters, or a risk with
// its mitigation where one was agreed. Each records the handoff, thread and
// snapshot it came from and when it was captured.
type Learning struct {
	ID          string
	WorkspaceID string
	Kind        LearningKind
	Content     string // the decision, the file's reason, the risk
	Detail      string // a risk's mitigation, if known
	Level       Level  // a file's relevance or a risk's severity
	Scope       string // a decision's scope
	Path        string // a file's path
	HandoffID   string
	ThreadID    string
	SnapshotID  string
	CreatedAt   time.Time

	// Snippet is filled by FindLearnings when a query is given.
	Snippet []SnippetPart
}

// RelationshipType names the kind of an edge of the memory graph.
type RelationshipType string

// Relationship types. Decisions are decision record IDs, files are paths and
// risks are their descriptions.
const (
	RelDecisionFile RelationshipType = "decision_file"
	RelFileRisk     RelationshipType = "file_risk"
	RelDecisionRisk RelationshipType = "decision_risk"
)

// Relationship is an edge of the memory graph, one per (type, source,
// target) in a workspace. Count is how many snapshots showed it.
type Relationship struct {
	ID          string
	WorkspaceID string
	Type        RelationshipType
	Source      string
	Target      string
	Count       int
	FirstSeen   time.Time
	LastSeen    time.Time
}

// DecisionLink is a decision_file edge seen from the file: the decision
// record and how often the two were tied together.
type DecisionLink struct {
	Relationship
	Record *DecisionRecord
}

// RiskLink is an edge to a risk, with the risk's latest severity and
// mitigation as learned.
type RiskLink struct {
	Relationship
	Severity   Level
	Mitigation string
}

// FileRelationships is what the memory knows about one file: the decisions
// that concerned it and the risks it carries, most often seen first.
type FileRelationships struct {
	Path      string
	Decisions []DecisionLink
	Risks     []RiskLink
}

// Supersession says that Old was superseded by New.
type Supersession struct {
	OldID string
	NewID string
}

// CaptureResult says what WriteMemoryCapture changed.
type CaptureResult struct {
	SnapshotID string
	// AlreadyCaptured is true when the snapshot had been captured before;
	// nothing was changed then.
	AlreadyCaptured bool
	// Records are the snapshot's decision records, in snapshot order.
	Records       []*DecisionRecord
	Created       int // records created
	Updated       int // records that already existed (a re-frozen handoff, the same decision again)
	Learnings     int // learnings added
	Relationships int // edges added or counted
	Superseded    []Supersession
}

// MemoryCapture is what a frozen snapshot adds to the workspace memory.
// The agent decides what it holds (the scope of each decision, which
// decision concerns which file or risk, what a decision reverses, what is
// worth learning); WriteMemoryCapture writes it.
type MemoryCapture struct {
	Snapshot *Snapshot
	// WorkspaceID is the workspace of the snapshot's handoff; empty means
	// that one.
	WorkspaceID string
	// Decisions hold one entry per decision of the snapshot, in its order.
	Decisions []CapturedDecision
	// Learnings to add. Only Kind, Content, Detail, Level, Scope and Path
	// are read; a learning the snapshot's handoff already taught is skipped.
	Learnings []Learning
	// Relationships to add, or to count once more. Only Type, Source and
	// Target are read. The source of a decision_file or decision_risk edge
	// names a snapshot decision by its ID (SnapshotDecision.ID) and is
	// stored as that decision's record ID.
	Relationships []Relationship
}

// CapturedDecision is what the memory makes of one snapshot decision.
type CapturedDecision struct {
	DecisionID string // the snapshot decision's ID
	Scope      string
	// Reverses are the IDs of active records the decision reverses: they
	// become superseded by its record, unless that record is itself
	// superseded.
	Reverses []string
}

// CaptureState is where a snapshot stands with the workspace memory, as
// FindCaptureState reads it.
type CaptureState struct {
	WorkspaceID string // the workspace of the snapshot's handoff
	// Captured is true when the snapshot was captured before; capturing it
	// again changes nothing.
	Captured bool
	// Targets hold, for each decision of the snapshot in order, the record
	// capturing it would write.
	Targets []CaptureTarget
}

// CaptureTarget is the record a snapshot decision becomes.
type CaptureTarget struct {
	// Existing is the record the decision updates: the same handoff
	// decision captured before, else an active record with the same text
	// (ignoring case). It is nil when the decision makes a new record.
	Existing *DecisionRecord
	// Changed is true when the decision is new, or its text changed since
	// its handoff was last frozen: only then may it reverse other records.
	Changed bool
}

// capturePlan is a snapshot decision on its way to becoming a record.
type capturePlan struct {
	d        SnapshotDecision
	existing *DecisionRecord // the record it updates, if any
	record   DecisionRecord  // as it will be stored
	changed  bool            // created, or its content changed
}

// FindCaptureState says whether the snapshot was captured and which record
// each of its decisions would create or update. workspaceID may be empty
// (the handoff's workspace); otherwise it must be the handoff's workspace,
// else ErrInvalid. Returns ErrNotFound if there is no such snapshot.
func (db *DB) FindCaptureState(ctx context.Context, sn *Snapshot, workspaceID string) (_ *CaptureState, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("find capture state: %w", err)
		}
	}()
	ws, err := snapshotWorkspace(ctx, db.read, sn, workspaceID)
	if err != nil {
		return nil, err
	}
	st := &CaptureState{WorkspaceID: ws}
	if st.Captured, err = captured(ctx, db.read, sn.ID); err != nil || st.Captured {
		return st, err
	}
	plans, err := planCapture(ctx, db.read, sn, ws, nil, db.now())
	if err != nil {
		return nil, err
	}
	for _, pl := range plans {
		st.Targets = append(st.Targets, CaptureTarget{Existing: pl.existing, Changed: pl.changed})
	}
	return st, nil
}

// snapshotWorkspace returns the workspace of the snapshot's handoff,
// checking it against workspaceID when one is given.
func snapshotWorkspace(ctx context.Context, q querier, sn *Snapshot, workspaceID string) (string, error) {
	if sn == nil || sn.ID == "" {
		return "", Errorf(EINVALID, "A snapshot is required.")
	}
	var ws string
	err := q.QueryRowContext(ctx,
		`SELECT h.workspace_id FROM snapshots s JOIN handoffs h ON h.id = s.handoff_id WHERE s.id = ?`, sn.ID).Scan(&ws)
	if err != nil {
		return "", notFound(err, "snapshot %s", sn.ID)
	}
	if workspaceID != "" && workspaceID != ws {
		return "", Errorf(EINVALID, "Snapshot %s belongs to another workspace.", sn.ID)
	}
	return ws, nil
}

// validate checks that c fits its snapshot: one entry per decision, in
// order, known kinds and types, and decision edges from its decisions.
func (c *MemoryCapture) validate() error {
	if c.Snapshot == nil || c.Snapshot.ID == "" {
		return Errorf(EINVALID, "A snapshot is required.")
	}
	ds := c.Snapshot.Payload.Decisions
	if len(c.Decisions) != len(ds) {
		return Errorf(EINVALID, "The capture holds %d decisions; snapshot %s has %d.", len(c.Decisions), c.Snapshot.ID, len(ds))
	}
	ids := map[string]bool{}
	for i, d := range ds {
		if c.Decisions[i].DecisionID != d.ID {
			return Errorf(EINVALID, "Capture decision %d is %q; the snapshot's is %q.", i+1, c.Decisions[i].DecisionID, d.ID)
		}
		ids[d.ID] = true
	}
	for _, l := range c.Learnings {
		switch l.Kind {
		case LearningDecision, LearningFile, LearningRisk:
		default:
			return Errorf(EINVALID, "Learning kind must be decision, file or risk, not %q.", l.Kind)
		}
	}
	for _, e := range c.Relationships {
		switch e.Type {
		case RelDecisionFile, RelDecisionRisk:
			if !ids[e.Source] {
				return Errorf(EINVALID, "A %s edge starts from %q, which is no decision of snapshot %s.", e.Type, e.Source, c.Snapshot.ID)
			}
		case RelFileRisk:
		default:
			return Errorf(EINVALID, "Relationship type must be decision_file, file_risk or decision_risk, not %q.", e.Type)
		}
	}
	return nil
}

// WriteMemoryCapture writes a capture in one transaction: a decision
// record per snapshot decision (created, or updated when FindCaptureState
// names an existing one; which record is read again inside the
// transaction), the supersessions the capture asks for, its learnings and
// its relationships, each edge counted once per snapshot. Either all of it
// is written or nothing is.
//
// Capturing a snapshot again changes nothing and returns AlreadyCaptured.
// Returns ErrInvalid if the capture does not fit its snapshot or names
// another workspace than the handoff's, ErrNotFound if there is no such
// snapshot.
func (db *DB) WriteMemoryCapture(ctx context.Context, c MemoryCapture) (_ CaptureResult, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("write memory capture: %w", err)
		}
	}()
	if err := c.validate(); err != nil {
		return CaptureResult{}, err
	}
	sn := c.Snapshot
	res := CaptureResult{SnapshotID: sn.ID}
	scopes := make([]string, len(c.Decisions))
	for i, d := range c.Decisions {
		scopes[i] = d.Scope
	}
	recordOf := map[string]string{} // snapshot decision ID → record ID
	now := db.now()
	err = db.inTx(ctx, func(tx *txn) error {
		ws, err := snapshotWorkspace(ctx, tx, sn, c.WorkspaceID)
		if err != nil {
			return err
		}
		if done, err := captured(ctx, tx, sn.ID); err != nil || done {
			res.AlreadyCaptured = done
			return err
		}
		plans, err := planCapture(ctx, tx, sn, ws, scopes, now)
		if err != nil {
			return err
		}
		for _, pl := range plans {
			if err := writeRecord(ctx, tx, pl, now); err != nil {
				return err
			}
			if pl.existing == nil {
				res.Created++
			} else {
				res.Updated++
			}
			rec := pl.record
			res.Records = append(res.Records, &rec)
			recordOf[pl.d.ID] = rec.ID
		}
		for i, pl := range plans {
			if pl.record.Status != DecisionActive {
				continue // a superseded record supersedes nothing
			}
			for _, oldID := range c.Decisions[i].Reverses {
				if oldID == pl.record.ID {
					continue
				}
				r, err := tx.ExecContext(ctx,
					`UPDATE decision_records SET status = 'superseded', superseded_by = ?, updated_at = ?
					 WHERE id = ? AND workspace_id = ? AND status = 'active'`,
					pl.record.ID, formatTime(now), oldID, ws)
				if err != nil {
					return err
				}
				if n, _ := r.RowsAffected(); n > 0 {
					res.Superseded = append(res.Superseded, Supersession{OldID: oldID, NewID: pl.record.ID})
				}
			}
		}
		if res.Learnings, err = writeLearnings(ctx, tx, sn, ws, c.Learnings, now); err != nil {
			return err
		}
		if res.Relationships, err = writeRelationships(ctx, tx, ws, c.Relationships, recordOf, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO memory_captures (snapshot_id, workspace_id, captured_at) VALUES (?, ?, ?)`,
			sn.ID, ws, formatTime(now))
		return err
	})
	if err != nil {
		return CaptureResult{SnapshotID: sn.ID}, err
	}
	if res.AlreadyCaptured {
		return CaptureResult{SnapshotID: sn.ID, AlreadyCaptured: true}, nil
	}
	return res, nil
}

func captured(ctx context.Context, q querier, snapshotID string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM memory_captures WHERE snapshot_id = ?`, snapshotID).Scan(&n)
	return n > 0, err
}

// planCapture maps each snapshot decision to the record it creates or
// updates. scopes, when given, are the decisions' scopes in order.
func planCapture(ctx context.Context, q querier, sn *Snapshot, workspaceID string, scopes []string, now time.Time) ([]*capturePlan, error) {
	p := &sn.Payload
	var plans []*capturePlan
	for i, d := range p.Decisions {
		pl := &capturePlan{d: d}
		scope := ""
		if i < len(scopes) {
			scope = scopes[i]
		}

		// The same handoff decision frozen before, else the same text.
		ex, err := scanDecisionRecord(q.QueryRowContext(ctx,
			`SELECT `+decisionRecordColumns+` FROM decision_records d
			 WHERE d.workspace_id = ? AND d.decision_id = ? ORDER BY d.rid DESC LIMIT 1`, workspaceID, d.ID))
		if errors.Is(err, sql.ErrNoRows) {
			ex, err = scanDecisionRecord(q.QueryRowContext(ctx,
				`SELECT `+decisionRecordColumns+` FROM decision_records d
				 WHERE d.workspace_id = ? AND d.content = ? COLLATE NOCASE AND d.status = 'active'
				 ORDER BY d.rid DESC LIMIT 1`, workspaceID, d.Content))
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		pl.existing = ex

		ids := d.MessageIDs
		if ids == nil {
			ids = []string{}
		}
		switch {
		case ex == nil:
			pl.changed = true
			pl.record = DecisionRecord{ID: newID(), WorkspaceID: workspaceID, HandoffID: sn.HandoffID,
				SnapshotID: sn.ID, ThreadID: p.ThreadID, DecisionID: d.ID, Label: d.Label, Content: d.Content,
				Scope: scope, Status: DecisionActive, Confidence: d.Confidence, MessageIDs: ids,
				CreatedAt: now, UpdatedAt: now}
		case ex.DecisionID == d.ID:
			// The same handoff frozen again: take its current wording.
			pl.changed = ex.Content != d.Content
			r := *ex
			if pl.changed {
				// Edited and frozen again: a new decision, active again.
				r.Status, r.SupersededBy = DecisionActive, ""
			}
			r.SnapshotID, r.Label, r.Content, r.Scope = sn.ID, d.Label, d.Content, scope
			r.Confidence, r.MessageIDs, r.UpdatedAt = d.Confidence, ids, now
			pl.record = r
		default:
			// Decided again elsewhere: the record is confirmed, not rewritten.
			r := *ex
			r.UpdatedAt = now
			pl.record = r
		}
		plans = append(plans, pl)
	}
	return plans, nil
}

func writeRecord(ctx context.Context, tx *txn, pl *capturePlan, now time.Time) error {
	r := &pl.record
	if pl.existing == nil {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO decision_records (id, workspace_id, handoff_id, snapshot_id, thread_id, decision_id, label,
			   content, scope, status, confidence, message_ids, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)`,
			r.ID, r.WorkspaceID, r.HandoffID, r.SnapshotID, r.ThreadID, r.DecisionID, r.Label,
			r.Content, r.Scope, r.Confidence, encodeIDs(r.MessageIDs), formatTime(now), formatTime(now))
		return err
	}
	_, err := tx.ExecContext(ctx,
		`UPDATE decision_records SET snapshot_id = ?, label = ?, content = ?, scope = ?, confidence = ?,
		   message_ids = ?, status = ?, superseded_by = NULLIF(?, ''), updated_at = ? WHERE id = ?`,
		r.SnapshotID, r.Label, r.Content, r.Scope, r.Confidence, encodeIDs(r.MessageIDs),
		r.Status, r.SupersededBy, formatTime(now), r.ID)
	return err
}

// writeLearnings adds learnings, skipping one the snapshot's handoff
// already taught (a handoff frozen again).
func writeLearnings(ctx context.Context, tx *txn, sn *Snapshot, workspaceID string, ls []Learning, now time.Time) (int, error) {
	added := 0
	for _, l := range ls {
		var n int
		if err := tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM learnings WHERE workspace_id = ? AND handoff_id = ? AND kind = ? AND path = ?
			   AND content = ? AND detail = ?`,
			workspaceID, sn.HandoffID, l.Kind, l.Path, l.Content, l.Detail).Scan(&n); err != nil {
			return 0, err
		}
		if n > 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO learnings (id, workspace_id, kind, content, detail, level, scope, path, handoff_id, thread_id, snapshot_id, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			newID(), workspaceID, l.Kind, l.Content, l.Detail, l.Level, l.Scope, l.Path, sn.HandoffID,
			sn.Payload.ThreadID, sn.ID, formatTime(now)); err != nil {
			return 0, err
		}
		added++
	}
	return added, nil
}

// writeRelationships counts each distinct edge once, naming decisions by
// their records.
func writeRelationships(ctx context.Context, tx *txn, workspaceID string, edges []Relationship, recordOf map[string]string, now time.Time) (int, error) {
	type edge struct {
		typ            RelationshipType
		source, target string
	}
	seen := map[edge]bool{}
	for _, e := range edges {
		k := edge{e.Type, e.Source, e.Target}
		if e.Type == RelDecisionFile || e.Type == RelDecisionRisk {
			k.source = recordOf[e.Source]
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO relationships (id, workspace_id, type, source, target, count, first_seen, last_seen)
			 VALUES (?, ?, ?, ?, ?, 1, ?, ?)
			 ON CONFLICT (workspace_id, type, source, target)
			 DO UPDATE SET count = relationships.count + 1, last_seen = excluded.last_seen`,
			newID(), workspaceID, k.typ, k.source, k.target, formatTime(now), formatTime(now)); err != nil {
			return 0, err
		}
	}
	return len(seen), nil
}

// SupersedeDecisionRecord marks record id as superseded by record byID, by
// hand. Both must exist (else ErrNotFound) in the same workspace, differ,
// and byID must be active (else ErrInvalid). Superseding an already
// superseded record points it at byID.
func (db *DB) SupersedeDecisionRecord(ctx context.Context, id, byID string) error {
	err := db.inTx(ctx, func(tx *txn) error {
		old, err := findDecisionRecordByID(ctx, tx, id)
		if err != nil {
			return err
		}
		by, err := findDecisionRecordByID(ctx, tx, byID)
		if err != nil {
			return err
		}
		switch {
		case old.ID == by.ID:
			return Errorf(EINVALID, "A decision cannot supersede itself.")
		case old.WorkspaceID != by.WorkspaceID:
			return Errorf(EINVALID, "Decision %s belongs to another workspace.", by.ID)
		case by.Status != DecisionActive:
			return Errorf(EINVALID, "Decision %s is itself superseded; supersede with an active decision or reactivate it first.", by.ID)
		}
		_, err = tx.ExecContext(ctx,
			`UPDATE decision_records SET status = 'superseded', superseded_by = ?, updated_at = ? WHERE id = ?`,
			by.ID, formatTime(db.now()), old.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("supersede decision record %s: %w", id, err)
	}
	return nil
}

// ReactivateDecisionRecord makes a superseded record active again and
// forgets what superseded it. Reactivating an active record changes nothing.
// Returns ErrNotFound if there is no such record.
func (db *DB) ReactivateDecisionRecord(ctx context.Context, id string) error {
	res, err := db.write.ExecContext(ctx,
		`UPDATE decision_records SET status = 'active', superseded_by = NULL,
		   updated_at = CASE WHEN status = 'active' THEN updated_at ELSE ? END
		 WHERE id = ?`, formatTime(db.now()), id)
	if err != nil {
		return fmt.Errorf("reactivate decision record %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("decision record %s: %w", id, ErrNotFound)
	}
	return nil
}
