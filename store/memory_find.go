package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// CommonTermCap is how many full-text matches a search ranks by relevance.
// A query that matches more (a word most records contain) is answered in
// recency order instead, which costs the same however many rows match.
const CommonTermCap = 500

// DefaultSearchLimit and MaxSearchLimit bound how many results a find returns.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 500
)

// MaxSearchTerms bounds the terms of a full-text search.
const MaxSearchTerms = 64

// DecisionRecordFilter selects decision records. Terms are words to look
// up in full text (see agent.SearchTerms), each matched as written and by
// its stem; all are required unless AnyTerm. With terms, results are ranked
// by relevance and carry a snippet. Scope selects a scope and the scopes
// under it ("src" selects src and src/auth), or only itself with
// ExactScope. Status is "", active or superseded.
type DecisionRecordFilter struct {
	WorkspaceID string // the default workspace when empty
	Terms       []string
	AnyTerm     bool
	Scope       string
	ExactScope  bool
	Status      DecisionStatus
	Limit       int // DefaultSearchLimit when zero, at most MaxSearchLimit
}

// LearningFilter selects learnings. Terms and AnyTerm work as in
// DecisionRecordFilter; NoSnippet leaves snippets out, which makes ranking
// many matches cheaper. Kind is "" for every kind; Path selects a file's
// learnings.
type LearningFilter struct {
	WorkspaceID string
	Terms       []string
	AnyTerm     bool
	NoSnippet   bool
	Kind        LearningKind
	Path        string
	Limit       int
}

// checkTerms refuses more than MaxSearchTerms terms.
func checkTerms(terms []string) error {
	if len(terms) > MaxSearchTerms {
		return Errorf(EINVALID, "A search takes at most %d words, not %d; shorten it.", MaxSearchTerms, len(terms))
	}
	return nil
}

func (db *DB) workspace(id string) string {
	if id == "" {
		return db.defaultWorkspace
	}
	return id
}

func searchLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultSearchLimit
	case n > MaxSearchLimit:
		return MaxSearchLimit
	}
	return n
}

const decisionRecordColumns = `d.id, d.workspace_id, d.handoff_id, d.snapshot_id, d.thread_id, d.decision_id, d.label,
	d.content, d.scope, d.status, COALESCE(d.superseded_by, ''), d.confidence, d.message_ids, d.created_at, d.updated_at`

func scanDecisionRecord(s scanner, extra ...any) (*DecisionRecord, error) {
	var r DecisionRecord
	var conf sql.NullFloat64
	var ids, created, updated string
	dest := []any{&r.ID, &r.WorkspaceID, &r.HandoffID, &r.SnapshotID, &r.ThreadID, &r.DecisionID, &r.Label,
		&r.Content, &r.Scope, &r.Status, &r.SupersededBy, &conf, &ids, &created, &updated}
	if err := s.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	if conf.Valid {
		r.Confidence = &conf.Float64
	}
	r.MessageIDs = decodeIDs(ids)
	if r.MessageIDs == nil {
		r.MessageIDs = []string{}
	}
	r.CreatedAt, r.UpdatedAt = parseTime(created), parseTime(updated)
	return &r, nil
}

// findDecisionRecords runs SELECT columns FROM decision_records d <tail>.
func findDecisionRecords(ctx context.Context, q querier, tail string, args ...any) ([]*DecisionRecord, error) {
	return scanAll(func(s scanner) (*DecisionRecord, error) { return scanDecisionRecord(s) })(
		q.QueryContext(ctx, `SELECT `+decisionRecordColumns+` FROM decision_records d `+tail, args...))
}

// FindDecisionRecords returns the decision records f selects. Without
// terms they come newest first; with terms, best match first (bm25, then
// newest), each with a snippet. Terms matching more than CommonTermCap
// records are answered newest first, so that a word most records contain
// never makes a search slow. Returns ErrInvalid for an unknown status or
// more than MaxSearchTerms terms.
func (db *DB) FindDecisionRecords(ctx context.Context, f DecisionRecordFilter) ([]*DecisionRecord, error) {
	if f.Status != "" && f.Status != DecisionActive && f.Status != DecisionSuperseded {
		return nil, Errorf(EINVALID, "Status must be active or superseded, not %q.", f.Status)
	}
	if err := checkTerms(f.Terms); err != nil {
		return nil, err
	}
	search, match := searchDecisionRecords, ftsMatch(f.Terms, f.AnyTerm)
	if db.eng == enginePostgres {
		search, match = searchDecisionRecordsPostgres, tsMatch(f.Terms, f.AnyTerm)
	}
	out, err := search(ctx, db.read, db.workspace(f.WorkspaceID), match,
		strings.Trim(f.Scope, "/"), f.ExactScope, f.Status, searchLimit(f.Limit))
	if err != nil {
		return nil, fmt.Errorf("find decision records: %w", err)
	}
	return out, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func findDecisionRecordByID(ctx context.Context, q querier, id string) (*DecisionRecord, error) {
	r, err := scanDecisionRecord(q.QueryRowContext(ctx, `SELECT `+decisionRecordColumns+` FROM decision_records d WHERE d.id = ?`, id))
	if err != nil {
		return nil, notFound(err, "decision record %s", id)
	}
	return r, nil
}

// FindDecisionRecordByID returns a decision record with the summary of its
// snapshot, its supersession chain (the records it replaced and the ones
// that replaced it, oldest first, itself included), the files it concerns
// and the risks tied to it. Returns ErrNotFound if there is no such record.
func (db *DB) FindDecisionRecordByID(ctx context.Context, id string) (*DecisionRecord, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	r, err := findDecisionRecordByID(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := findRecordDetails(ctx, tx, r); err != nil {
		return nil, fmt.Errorf("find decision record %s: %w", id, err)
	}
	return r, nil
}

func findRecordDetails(ctx context.Context, tx *txn, r *DecisionRecord) error {
	var payload string
	if err := tx.QueryRowContext(ctx, `SELECT payload FROM snapshots WHERE id = ?`, r.SnapshotID).Scan(&payload); err != nil {
		return err
	}
	var p struct {
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		return err
	}
	r.Summary = p.Summary

	// The chain: everything that leads here and everything this led to.
	chain, err := findDecisionRecords(ctx, tx,
		`WHERE d.id IN (
		   WITH RECURSIVE
		     back(id) AS (SELECT id FROM decision_records WHERE id = ?
		                  UNION SELECT p.id FROM decision_records p JOIN back ON p.superseded_by = back.id),
		     fwd(id) AS (SELECT id FROM decision_records WHERE id = ?
		                 UNION SELECT n.superseded_by FROM decision_records n JOIN fwd ON n.id = fwd.id
		                 WHERE n.superseded_by IS NOT NULL)
		   SELECT id FROM back UNION SELECT id FROM fwd)
		 ORDER BY d.created_at, d.rid`, r.ID, r.ID)
	if err != nil {
		return err
	}
	r.Chain = chain

	if r.Files, err = findRelationships(ctx, tx,
		`WHERE workspace_id = ? AND type = 'decision_file' AND source = ? ORDER BY count DESC, last_seen DESC, target`,
		r.WorkspaceID, r.ID); err != nil {
		return err
	}
	r.Risks, err = findRiskLinks(ctx, tx, r.WorkspaceID, `type = 'decision_risk' AND source = ?`, r.ID)
	return err
}

const relationshipColumns = `id, workspace_id, type, source, target, count, first_seen, last_seen`

func scanRelationship(s scanner, extra ...any) (Relationship, error) {
	var e Relationship
	var first, last string
	err := s.Scan(append([]any{&e.ID, &e.WorkspaceID, &e.Type, &e.Source, &e.Target, &e.Count, &first, &last}, extra...)...)
	e.FirstSeen, e.LastSeen = parseTime(first), parseTime(last)
	return e, err
}

func findRelationships(ctx context.Context, q querier, tail string, args ...any) ([]Relationship, error) {
	return scanAll(func(s scanner) (Relationship, error) { return scanRelationship(s) })(
		q.QueryContext(ctx, `SELECT `+relationshipColumns+` FROM relationships `+tail, args...))
}

// findRiskLinks returns edges whose target is a risk, with the risk's
// latest severity and mitigation.
func findRiskLinks(ctx context.Context, q querier, workspaceID, where string, args ...any) ([]RiskLink, error) {
	return scanAll(func(s scanner) (RiskLink, error) {
		var l RiskLink
		var err error
		l.Relationship, err = scanRelationship(s, &l.Severity, &l.Mitigation)
		return l, err
	})(q.QueryContext(ctx,
		`SELECT `+relationshipColumns+`,
		   COALESCE((SELECT l.level FROM learnings l WHERE l.workspace_id = relationships.workspace_id AND l.kind = 'risk'
		              AND l.content = relationships.target ORDER BY l.rid DESC LIMIT 1), ''),
		   COALESCE((SELECT l.detail FROM learnings l WHERE l.workspace_id = relationships.workspace_id AND l.kind = 'risk'
		              AND l.content = relationships.target AND l.detail <> '' ORDER BY l.rid DESC LIMIT 1), '')
		 FROM relationships WHERE workspace_id = ? AND `+where+`
		 ORDER BY count DESC, last_seen DESC, target`, append([]any{workspaceID}, args...)...))
}

// FindFileRelationships returns what the memory knows about the file at
// path: the decision records that concerned it (superseded ones included,
// with their status) and the risks it carries, each with how many snapshots
// showed the link and when. Returns ErrNotFound if no captured snapshot tied
// anything to the file.
func (db *DB) FindFileRelationships(ctx context.Context, workspaceID, path string) (*FileRelationships, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	fr, err := findFileRelationships(ctx, tx, db.workspace(workspaceID), path)
	if err != nil {
		return nil, fmt.Errorf("find relationships of %s: %w", path, err)
	}
	if len(fr.Decisions) == 0 && len(fr.Risks) == 0 {
		return nil, fmt.Errorf("relationships of %s: %w", path, ErrNotFound)
	}
	return fr, nil
}

func findFileRelationships(ctx context.Context, q querier, workspaceID, path string) (*FileRelationships, error) {
	fr := &FileRelationships{Path: path}
	var err error
	fr.Decisions, err = scanAll(func(s scanner) (DecisionLink, error) {
		var l DecisionLink
		var first, last string
		rec, err := scanDecisionRecord(multiScanner{s, []any{&l.ID, &l.WorkspaceID, &l.Type, &l.Source, &l.Target, &l.Count, &first, &last}})
		l.FirstSeen, l.LastSeen, l.Record = parseTime(first), parseTime(last), rec
		return l, err
	})(q.QueryContext(ctx,
		`SELECT r.id, r.workspace_id, r.type, r.source, r.target, r.count, r.first_seen, r.last_seen, `+decisionRecordColumns+`
		 FROM relationships r JOIN decision_records d ON d.id = r.source
		 WHERE r.workspace_id = ? AND r.type = 'decision_file' AND r.target = ?
		 ORDER BY d.status, r.count DESC, r.last_seen DESC, d.rid DESC`, workspaceID, path))
	if err != nil {
		return nil, err
	}
	fr.Risks, err = findRiskLinks(ctx, q, workspaceID, `type = 'file_risk' AND source = ?`, path)
	return fr, err
}

// multiScanner scans leading columns into before, then the rest into what
// Scan is given.
type multiScanner struct {
	s      scanner
	before []any
}

func (m multiScanner) Scan(dest ...any) error { return m.s.Scan(append(m.before, dest...)...) }

const learningColumns = `l.id, l.workspace_id, l.kind, l.content, l.detail, l.level, l.scope, l.path,
	l.handoff_id, l.thread_id, l.snapshot_id, l.created_at`

func scanLearning(s scanner, extra ...any) (*Learning, error) {
	var l Learning
	var created string
	if err := s.Scan(append([]any{&l.ID, &l.WorkspaceID, &l.Kind, &l.Content, &l.Detail, &l.Level, &l.Scope, &l.Path,
		&l.HandoffID, &l.ThreadID, &l.SnapshotID, &created}, extra...)...); err != nil {
		return nil, err
	}
	l.CreatedAt = parseTime(created)
	return &l, nil
}

// FindLearnings returns the learnings f selects: newest first without
// terms, best match first (bm25) with terms, each with a snippet unless
// NoSnippet. As with decision records, terms matching more than
// CommonTermCap learnings are answered newest first. Returns ErrInvalid for
// an unknown kind or more than MaxSearchTerms terms.
func (db *DB) FindLearnings(ctx context.Context, f LearningFilter) ([]*Learning, error) {
	switch f.Kind {
	case "", LearningDecision, LearningFile, LearningRisk:
	default:
		return nil, Errorf(EINVALID, "Kind must be decision, file or risk, not %q.", f.Kind)
	}
	if err := checkTerms(f.Terms); err != nil {
		return nil, err
	}
	search, match := searchLearnings, ftsMatch(f.Terms, f.AnyTerm)
	if db.eng == enginePostgres {
		search, match = searchLearningsPostgres, tsMatch(f.Terms, f.AnyTerm)
	}
	out, err := search(ctx, db.read, db.workspace(f.WorkspaceID), match,
		f.Kind, f.Path, searchLimit(f.Limit), !f.NoSnippet)
	if err != nil {
		return nil, fmt.Errorf("find learnings: %w", err)
	}
	return out, nil
}

// FileActivity is a file the workspace's handoffs touched: how many
// snapshots named it, when last, and the latest reason given.
type FileActivity struct {
	Path     string
	Touches  int
	LastSeen time.Time
	Reason   string
}

// FindFileActivity returns the files the workspace's captured snapshots
// named, most touched first, then the latest; at most limit of them
// (DefaultSearchLimit when zero, at most MaxSearchLimit).
func (db *DB) FindFileActivity(ctx context.Context, workspaceID string, limit int) ([]FileActivity, error) {
	files, err := scanAll(func(s scanner) (FileActivity, error) {
		var fa FileActivity
		var last string
		err := s.Scan(&fa.Path, &fa.Touches, &last, &fa.Reason)
		fa.LastSeen = parseTime(last)
		return fa, err
	})(db.read.QueryContext(ctx,
		`SELECT l.path, COUNT(DISTINCT l.snapshot_id), MAX(l.created_at),
		   (SELECT l2.content FROM learnings l2 WHERE l2.workspace_id = l.workspace_id AND l2.kind = 'file'
		      AND l2.path = l.path ORDER BY l2.rid DESC LIMIT 1)
		 FROM learnings l WHERE l.workspace_id = ? AND l.kind = 'file'
		 GROUP BY l.workspace_id, l.path ORDER BY COUNT(DISTINCT l.snapshot_id) DESC, MAX(l.created_at) DESC LIMIT ?`,
		db.workspace(workspaceID), searchLimit(limit)))
	if err != nil {
		return nil, fmt.Errorf("find file activity: %w", err)
	}
	return files, nil
}
