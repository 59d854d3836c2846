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

// ProjectScope is the scope of a decision that concerns no file, or files
// with no directory in common.
const ProjectScope = "project"

// LowConfidence is the confidence below which a decision is not kept as a
// learning and never supersedes another decision on its own.
const LowConfidence = 0.5

// DecisionRecord is a decision kept at workspace level: every decision of a
// captured snapshot becomes one. Scope is the common directory of the files
// it concerns, or ProjectScope. A record is active until a later decision
// reverses it (or a person says so); it is then superseded, and
// SupersededBy names the record that replaced it.
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

// CaptureResult says what CaptureSnapshot changed.
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

// MaxJudgeCandidates is how many earlier active decisions of the same scope
// CaptureSnapshot asks the judge about, per new decision, most recent first.
const MaxJudgeCandidates = 10

// capturePlan is a snapshot decision on its way to becoming a record.
type capturePlan struct {
	d        SnapshotDecision
	files    []int // indexes of the snapshot files it concerns
	scope    string
	existing *DecisionRecord // the record it updates, if any
	record   DecisionRecord  // as it will be stored
	changed  bool            // created, or its content changed
	reverses []string        // active records the judge said it reverses
}

// CaptureSnapshot turns a frozen snapshot into workspace memory: a decision
// record per decision, learnings (decisions unless their confidence is below
// LowConfidence, files with their reasons, risks with their mitigations) and
// the decision→file, file→risk and decision→risk edges the snapshot ties
// together, counted once per snapshot.
//
// A decision that is new, or whose content changed since its handoff was
// last frozen, is compared with up to MaxJudgeCandidates earlier active
// records of the same scope: judge(old, new) reports whether new reverses
// old, which then becomes superseded by new. A nil judge supersedes nothing;
// a decision with low confidence supersedes nothing. The judge runs before
// the write transaction, so a slow model never holds the database's write
// lock; all changes are then written in one transaction.
//
// Capturing a snapshot again changes nothing and returns AlreadyCaptured.
// Freezing the same handoff again updates its records instead of adding new
// ones, and a decision whose text equals an active record's (ignoring case)
// counts as that record. workspaceID may be empty (the handoff's workspace);
// otherwise it must be the handoff's workspace, else ErrInvalid.
func (db *DB) CaptureSnapshot(ctx context.Context, sn *Snapshot, workspaceID string, judge func(old, new DecisionRecord) bool) (_ CaptureResult, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("capture snapshot: %w", err)
		}
	}()
	if sn == nil || sn.ID == "" {
		return CaptureResult{}, Errorf(EINVALID, "A snapshot is required.")
	}
	res := CaptureResult{SnapshotID: sn.ID}

	// Read phase: what the snapshot maps to, and the judge's verdicts.
	var handoffWS string
	err = db.read.QueryRowContext(ctx,
		`SELECT h.workspace_id FROM snapshots s JOIN handoffs h ON h.id = s.handoff_id WHERE s.id = ?`, sn.ID).Scan(&handoffWS)
	if errors.Is(err, sql.ErrNoRows) {
		return res, fmt.Errorf("snapshot %s: %w", sn.ID, ErrNotFound)
	} else if err != nil {
		return res, err
	}
	if workspaceID == "" {
		workspaceID = handoffWS
	} else if workspaceID != handoffWS {
		return res, Errorf(EINVALID, "Snapshot %s belongs to another workspace.", sn.ID)
	}
	if done, err := captured(ctx, db.read, sn.ID); err != nil || done {
		res.AlreadyCaptured = done
		return res, err
	}

	p := &sn.Payload
	now := db.now()
	plans, err := planCapture(ctx, db.read, sn, workspaceID, now)
	if err != nil {
		return res, err
	}
	if judge != nil {
		if err := judgeCapture(ctx, db.read, plans, judge); err != nil {
			return res, err
		}
	}

	// Write phase: one transaction.
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if done, err := captured(ctx, tx, sn.ID); err != nil || done {
			res.AlreadyCaptured = done
			return err
		}
		// Another capture may have run since the read phase; map again.
		fresh, err := planCapture(ctx, tx, sn, workspaceID, now)
		if err != nil {
			return err
		}
		for i, pl := range fresh {
			pl.reverses = plans[i].reverses
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
		}
		for _, pl := range fresh {
			if pl.record.Status != DecisionActive {
				continue // a superseded record supersedes nothing
			}
			for _, oldID := range pl.reverses {
				if oldID == pl.record.ID {
					continue
				}
				r, err := tx.ExecContext(ctx,
					`UPDATE decision_records SET status = 'superseded', superseded_by = ?, updated_at = ?
					 WHERE id = ? AND workspace_id = ? AND status = 'active'`,
					pl.record.ID, formatTime(now), oldID, workspaceID)
				if err != nil {
					return err
				}
				if n, _ := r.RowsAffected(); n > 0 {
					res.Superseded = append(res.Superseded, Supersession{OldID: oldID, NewID: pl.record.ID})
				}
			}
		}
		if res.Learnings, err = writeLearnings(ctx, tx, sn, workspaceID, fresh, now); err != nil {
			return err
		}
		if res.Relationships, err = writeRelationships(ctx, tx, p, workspaceID, fresh, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO memory_captures (snapshot_id, workspace_id, captured_at) VALUES (?, ?, ?)`,
			sn.ID, workspaceID, formatTime(now))
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

// planCapture maps each snapshot decision to the record it creates or updates.
func planCapture(ctx context.Context, q querier, sn *Snapshot, workspaceID string, now time.Time) ([]*capturePlan, error) {
	p := &sn.Payload
	var plans []*capturePlan
	for _, d := range p.Decisions {
		pl := &capturePlan{d: d}
		var paths []string
		for j, f := range p.FilesReferenced {
			if decisionConcernsFile(d, f) {
				pl.files = append(pl.files, j)
				paths = append(paths, f.Path)
			}
		}
		pl.scope = DecisionScope(paths)

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
				Scope: pl.scope, Status: DecisionActive, Confidence: d.Confidence, MessageIDs: ids,
				CreatedAt: now, UpdatedAt: now}
		case ex.DecisionID == d.ID:
			// The same handoff frozen again: take its current wording.
			pl.changed = ex.Content != d.Content
			r := *ex
			if pl.changed {
				// Edited and frozen again: a new decision, active again.
				r.Status, r.SupersededBy = DecisionActive, ""
			}
			r.SnapshotID, r.Label, r.Content, r.Scope = sn.ID, d.Label, d.Content, pl.scope
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

// judgeCapture asks judge about each changed, confident decision and the
// latest active records of its scope.
func judgeCapture(ctx context.Context, q querier, plans []*capturePlan, judge func(old, new DecisionRecord) bool) error {
	own := map[string]bool{}
	for _, pl := range plans {
		own[pl.record.ID] = true
	}
	for _, pl := range plans {
		if !pl.changed || (pl.record.Confidence != nil && *pl.record.Confidence < LowConfidence) {
			continue
		}
		cands, err := findDecisionRecords(ctx, q,
			`WHERE d.workspace_id = ? AND d.scope = ? AND d.status = 'active' ORDER BY d.rid DESC LIMIT ?`,
			pl.record.WorkspaceID, pl.record.Scope, MaxJudgeCandidates+len(plans))
		if err != nil {
			return err
		}
		asked := 0
		for _, old := range cands {
			if own[old.ID] || asked == MaxJudgeCandidates {
				continue
			}
			asked++
			if err := ctx.Err(); err != nil {
				return err
			}
			if judge(*old, pl.record) {
				pl.reverses = append(pl.reverses, old.ID)
			}
		}
	}
	return nil
}

func writeRecord(ctx context.Context, tx *sql.Tx, pl *capturePlan, now time.Time) error {
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

// writeLearnings adds the snapshot's learnings, skipping one its handoff
// already taught (a handoff frozen again).
func writeLearnings(ctx context.Context, tx *sql.Tx, sn *Snapshot, workspaceID string, plans []*capturePlan, now time.Time) (int, error) {
	p := &sn.Payload
	added := 0
	add := func(kind LearningKind, content, detail string, level Level, scope, path string) error {
		var n int
		if err := tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM learnings WHERE workspace_id = ? AND handoff_id = ? AND kind = ? AND path = ?
			   AND content = ? AND detail = ?`,
			workspaceID, sn.HandoffID, kind, path, content, detail).Scan(&n); err != nil || n > 0 {
			return err
		}
		added++
		_, err := tx.ExecContext(ctx,
			`INSERT INTO learnings (id, workspace_id, kind, content, detail, level, scope, path, handoff_id, thread_id, snapshot_id, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			newID(), workspaceID, kind, content, detail, level, scope, path, sn.HandoffID, p.ThreadID, sn.ID, formatTime(now))
		return err
	}
	for _, pl := range plans {
		if c := pl.d.Confidence; c != nil && *c < LowConfidence {
			continue
		}
		if err := add(LearningDecision, pl.d.Content, "", "", pl.scope, ""); err != nil {
			return 0, err
		}
	}
	for _, f := range p.FilesReferenced {
		if err := add(LearningFile, f.Context, "", f.Relevance, "", f.Path); err != nil {
			return 0, err
		}
	}
	for _, r := range p.Risks {
		if err := add(LearningRisk, r.Description, r.Mitigation, r.Severity, "", ""); err != nil {
			return 0, err
		}
	}
	return added, nil
}

type edge struct {
	typ            RelationshipType
	source, target string
}

// writeRelationships counts each edge the snapshot shows once.
func writeRelationships(ctx context.Context, tx *sql.Tx, p *SnapshotPayload, workspaceID string, plans []*capturePlan, now time.Time) (int, error) {
	var edges []edge
	seen := map[edge]bool{}
	add := func(e edge) {
		if !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	fileRisks := make([][]int, len(p.FilesReferenced))
	for j, f := range p.FilesReferenced {
		for k, r := range p.Risks {
			if riskNamesFile(r, f.Path) {
				fileRisks[j] = append(fileRisks[j], k)
				add(edge{RelFileRisk, f.Path, riskKey(r)})
			}
		}
	}
	for _, pl := range plans {
		linked := map[int]bool{}
		for _, j := range pl.files {
			add(edge{RelDecisionFile, pl.record.ID, p.FilesReferenced[j].Path})
			for _, k := range fileRisks[j] {
				linked[k] = true
			}
		}
		for k, r := range p.Risks {
			if linked[k] || riskConcernsDecision(r, pl.d) {
				add(edge{RelDecisionRisk, pl.record.ID, riskKey(r)})
			}
		}
	}
	for _, e := range edges {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO relationships (id, workspace_id, type, source, target, count, first_seen, last_seen)
			 VALUES (?, ?, ?, ?, ?, 1, ?, ?)
			 ON CONFLICT (workspace_id, type, source, target)
			 DO UPDATE SET count = count + 1, last_seen = excluded.last_seen`,
			newID(), workspaceID, e.typ, e.source, e.target, formatTime(now), formatTime(now)); err != nil {
			return 0, err
		}
	}
	return len(edges), nil
}

// SupersedeDecisionRecord marks record id as superseded by record byID, by
// hand. Both must exist (else ErrNotFound) in the same workspace, differ,
// and byID must be active (else ErrInvalid). Superseding an already
// superseded record points it at byID.
func (db *DB) SupersedeDecisionRecord(ctx context.Context, id, byID string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
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
