package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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

// maxQueryTerms bounds the words of a search query (all required), and
// maxMemoryTerms the words of a conversation matched by FindMemory (any).
const (
	maxQueryTerms  = 8
	maxMemoryTerms = 24
)

// DecisionRecordFilter selects decision records. Query is free text; its
// words are all required (FTS5, porter stemming), results are ranked by
// bm25 and carry a snippet. Scope selects a scope and the scopes under it
// ("src" selects src and src/auth). Status is "", active or superseded.
type DecisionRecordFilter struct {
	WorkspaceID string // the default workspace when empty
	Query       string
	Scope       string
	Status      DecisionStatus
	Limit       int // DefaultSearchLimit when zero, at most MaxSearchLimit
}

// LearningFilter selects learnings. Query works as in DecisionRecordFilter;
// Kind is "" for every kind; Path selects a file's learnings.
type LearningFilter struct {
	WorkspaceID string
	Query       string
	Kind        LearningKind
	Path        string
	Limit       int
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
	rows, err := q.QueryContext(ctx, `SELECT `+decisionRecordColumns+` FROM decision_records d `+tail, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*DecisionRecord
	for rows.Next() {
		r, err := scanDecisionRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// isCommon reports whether an FTS5 query matches more than CommonTermCap
// rows of table; counting stops at the cap, so this is cheap either way.
func isCommon(ctx context.Context, q querier, table, match string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM (SELECT 1 FROM `+table+` WHERE `+table+` MATCH ? LIMIT ?)`, match, CommonTermCap+1).Scan(&n)
	return n > CommonTermCap, err
}

// FindDecisionRecords returns the decision records f selects. Without a
// query they come newest first; with one, best match first (bm25, then
// newest), each with a snippet. A query matching more than CommonTermCap
// records is answered newest first, so that a word most records contain
// never makes a search slow. Returns ErrInvalid for an unknown status.
func (db *DB) FindDecisionRecords(ctx context.Context, f DecisionRecordFilter) ([]*DecisionRecord, error) {
	if f.Status != "" && f.Status != DecisionActive && f.Status != DecisionSuperseded {
		return nil, Errorf(EINVALID, "Status must be active or superseded, not %q.", f.Status)
	}
	out, err := db.searchDecisionRecords(ctx, db.read, db.workspace(f.WorkspaceID), ftsQuery(f.Query, false, maxQueryTerms),
		strings.Trim(f.Scope, "/"), f.Status, searchLimit(f.Limit))
	if err != nil {
		return nil, fmt.Errorf("find decision records: %w", err)
	}
	return out, nil
}

func (db *DB) searchDecisionRecords(ctx context.Context, q querier, workspaceID, match, scope string, status DecisionStatus, limit int) ([]*DecisionRecord, error) {
	where := `d.workspace_id = ?`
	args := []any{workspaceID}
	if status != "" {
		where += ` AND d.status = ?`
		args = append(args, status)
	}
	if scope != "" {
		where += ` AND (d.scope = ? OR d.scope LIKE ? ESCAPE '\')`
		args = append(args, scope, likeEscape(scope)+"/%")
	}
	if match == "" {
		return findDecisionRecords(ctx, q, `WHERE `+where+` ORDER BY d.rid DESC LIMIT ?`, append(args, limit)...)
	}

	common, err := isCommon(ctx, q, "decision_records_fts", match)
	if err != nil {
		return nil, err
	}
	const from = ` FROM decision_records_fts f JOIN decision_records d ON d.rid = f.rowid WHERE decision_records_fts MATCH ? AND `
	selectSnippet := `SELECT ` + decisionRecordColumns + `, snippet(decision_records_fts, 0, ?, ?, '…', 16), f.rowid` + from
	var rows *sql.Rows
	var order []int64
	if common {
		// FTS5 walks its index in rowid order, which is capture order, and
		// stops at the limit: no sort, snippets for the returned rows only.
		rows, err = q.QueryContext(ctx, selectSnippet+where+` ORDER BY f.rowid DESC LIMIT ?`,
			append(append([]any{snippetOpen, snippetClose, match}, args...), limit)...)
	} else {
		// Rank first, then make snippets for the winners only: SQLite would
		// otherwise make one for every match before sorting.
		if order, err = rankedRowIDs(ctx, q, `SELECT f.rowid`+from+where+` ORDER BY bm25(decision_records_fts), f.rowid DESC LIMIT ?`,
			append(append([]any{match}, args...), limit)...); err != nil || len(order) == 0 {
			return nil, err
		}
		in := strings.Repeat(",?", len(order))[1:]
		qargs := []any{snippetOpen, snippetClose, match}
		for _, id := range order {
			qargs = append(qargs, id)
		}
		rows, err = q.QueryContext(ctx, selectSnippet+`f.rowid IN (`+in+`)`, qargs...)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*DecisionRecord
	byRowID := map[int64]*DecisionRecord{}
	for rows.Next() {
		var snip string
		var rowID int64
		r, err := scanDecisionRecord(rows, &snip, &rowID)
		if err != nil {
			return nil, err
		}
		r.Snippet = parseSnippet(snip)
		out = append(out, r)
		byRowID[rowID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if order != nil {
		out = out[:0]
		for _, id := range order {
			if r, ok := byRowID[id]; ok {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// rankedRowIDs runs a query returning one rowid per row.
func rankedRowIDs(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func findDecisionRecordByID(ctx context.Context, q querier, id string) (*DecisionRecord, error) {
	r, err := scanDecisionRecord(q.QueryRowContext(ctx, `SELECT `+decisionRecordColumns+` FROM decision_records d WHERE d.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("decision record %s: %w", id, ErrNotFound)
	}
	return r, err
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

func findRecordDetails(ctx context.Context, tx *sql.Tx, r *DecisionRecord) error {
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
		     back(id) AS (SELECT ? UNION SELECT p.id FROM decision_records p JOIN back ON p.superseded_by = back.id),
		     fwd(id) AS (SELECT ? UNION SELECT n.superseded_by FROM decision_records n JOIN fwd ON n.id = fwd.id
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
	rows, err := q.QueryContext(ctx, `SELECT `+relationshipColumns+` FROM relationships `+tail, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Relationship
	for rows.Next() {
		e, err := scanRelationship(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// findRiskLinks returns edges whose target is a risk, with the risk's
// latest severity and mitigation.
func findRiskLinks(ctx context.Context, q querier, workspaceID, where string, args ...any) ([]RiskLink, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT `+relationshipColumns+`,
		   COALESCE((SELECT l.level FROM learnings l WHERE l.workspace_id = relationships.workspace_id AND l.kind = 'risk'
		              AND l.content = relationships.target ORDER BY l.rid DESC LIMIT 1), ''),
		   COALESCE((SELECT l.detail FROM learnings l WHERE l.workspace_id = relationships.workspace_id AND l.kind = 'risk'
		              AND l.content = relationships.target AND l.detail <> '' ORDER BY l.rid DESC LIMIT 1), '')
		 FROM relationships WHERE workspace_id = ? AND `+where+`
		 ORDER BY count DESC, last_seen DESC, target`, append([]any{workspaceID}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RiskLink
	for rows.Next() {
		var l RiskLink
		if l.Relationship, err = scanRelationship(rows, &l.Severity, &l.Mitigation); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
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
	fr, err := findFileRelationships(ctx, tx, db.workspace(workspaceID), path, false)
	if err != nil {
		return nil, fmt.Errorf("find relationships of %s: %w", path, err)
	}
	if len(fr.Decisions) == 0 && len(fr.Risks) == 0 {
		return nil, fmt.Errorf("relationships of %s: %w", path, ErrNotFound)
	}
	return fr, nil
}

func findFileRelationships(ctx context.Context, q querier, workspaceID, path string, activeOnly bool) (*FileRelationships, error) {
	fr := &FileRelationships{Path: path}
	status := ``
	if activeOnly {
		status = ` AND d.status = 'active'`
	}
	rows, err := q.QueryContext(ctx,
		`SELECT r.id, r.workspace_id, r.type, r.source, r.target, r.count, r.first_seen, r.last_seen, `+decisionRecordColumns+`
		 FROM relationships r JOIN decision_records d ON d.id = r.source
		 WHERE r.workspace_id = ? AND r.type = 'decision_file' AND r.target = ?`+status+`
		 ORDER BY d.status, r.count DESC, r.last_seen DESC, d.rid DESC`, workspaceID, path)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var l DecisionLink
		var first, last string
		rec, err := scanDecisionRecord(multiScanner{rows, []any{&l.ID, &l.WorkspaceID, &l.Type, &l.Source, &l.Target, &l.Count, &first, &last}})
		if err != nil {
			return nil, err
		}
		l.FirstSeen, l.LastSeen, l.Record = parseTime(first), parseTime(last), rec
		fr.Decisions = append(fr.Decisions, l)
	}
	if err := rows.Err(); err != nil {
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

// FindLearnings returns the learnings f selects: newest first without a
// query, best match first (bm25) with one, each with a snippet. As with
// decision records, a query matching more than CommonTermCap learnings is
// answered newest first. Returns ErrInvalid for an unknown kind.
func (db *DB) FindLearnings(ctx context.Context, f LearningFilter) ([]*Learning, error) {
	switch f.Kind {
	case "", LearningDecision, LearningFile, LearningRisk:
	default:
		return nil, Errorf(EINVALID, "Kind must be decision, file or risk, not %q.", f.Kind)
	}
	out, err := searchLearnings(ctx, db.read, db.workspace(f.WorkspaceID), ftsQuery(f.Query, false, maxQueryTerms),
		f.Kind, f.Path, searchLimit(f.Limit), true)
	if err != nil {
		return nil, fmt.Errorf("find learnings: %w", err)
	}
	return out, nil
}

// searchLearnings finds learnings; snippets cost one per match, before the
// sort, so only a person's search (bounded by CommonTermCap) asks for them.
func searchLearnings(ctx context.Context, q querier, workspaceID, match string, kind LearningKind, path string, limit int, snippets bool) ([]*Learning, error) {
	where := `l.workspace_id = ?`
	args := []any{workspaceID}
	if kind != "" {
		where += ` AND l.kind = ?`
		args = append(args, kind)
	}
	if path != "" {
		where += ` AND l.path = ?`
		args = append(args, path)
	}
	var query string
	if match == "" {
		query = `SELECT ` + learningColumns + `, '' FROM learnings l WHERE ` + where + ` ORDER BY l.rid DESC LIMIT ?`
		args = append(args, limit)
	} else {
		common, err := isCommon(ctx, q, "learnings_fts", match)
		if err != nil {
			return nil, err
		}
		order := `bm25(learnings_fts), f.rowid DESC`
		if common {
			order = `f.rowid DESC`
		}
		snippet := `''`
		if snippets {
			snippet = `snippet(learnings_fts, -1, '` + snippetOpen + `', '` + snippetClose + `', '…', 16)`
		}
		query = `SELECT ` + learningColumns + `, ` + snippet + `
			FROM learnings_fts f JOIN learnings l ON l.rid = f.rowid
			WHERE learnings_fts MATCH ? AND ` + where + ` ORDER BY ` + order + ` LIMIT ?`
		args = append(append([]any{match}, args...), limit)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Learning
	for rows.Next() {
		var snip string
		l, err := scanLearning(rows, &snip)
		if err != nil {
			return nil, err
		}
		if snip != "" {
			l.Snippet = parseSnippet(snip)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// FileActivity is a file the workspace's handoffs touched: how many
// snapshots named it, when last, and the latest reason given.
type FileActivity struct {
	Path     string
	Touches  int
	LastSeen time.Time
	Reason   string
	// Relevant is true when the query names the file or matches its reasons.
	Relevant bool
	// InPlay is true when the query names the file.
	InPlay bool
}

// Memory is what FindMemory returns: the workspace memory ranked for a
// conversation, for building a prompt.
type Memory struct {
	Decisions []*DecisionRecord // active only: matches first (bm25), then the newest
	Risks     []*Learning       // one per risk: matches first, then the newest
	Files     []FileActivity    // files in play, then matching, then most touched
	// FileLinks are the relationships of the files in play (the files the
	// query names, else the top files), with active decisions only.
	FileLinks []*FileRelationships
}

// MemoryFilter selects the memory for a conversation. Query is its text
// (recent messages, say); any of its words may match, the last
// maxMemoryTerms distinct ones are used.
type MemoryFilter struct {
	WorkspaceID string
	Query       string
	Limit       int // per section; 10 when zero
}

// maxFilesInPlay bounds the files whose relationships FindMemory returns.
const maxFilesInPlay = 3

// FindMemory ranks the workspace's memory for a conversation: active
// decision records and risks, best match first (bm25 over any word of the
// query) then newest, and the files the workspace touches, those the query
// names first. Superseded decisions are never returned. Everything is read
// in one read transaction.
func (db *DB) FindMemory(ctx context.Context, f MemoryFilter) (*Memory, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, MaxSearchLimit)
	ws := db.workspace(f.WorkspaceID)
	match := ftsQuery(f.Query, true, maxMemoryTerms)

	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	m := &Memory{}
	if m.Decisions, err = db.rankedDecisions(ctx, tx, ws, match, limit); err != nil {
		return nil, fmt.Errorf("find memory decisions: %w", err)
	}
	if m.Risks, err = rankedRisks(ctx, tx, ws, match, limit); err != nil {
		return nil, fmt.Errorf("find memory risks: %w", err)
	}
	if m.Files, err = rankedFiles(ctx, tx, ws, f.Query, match, limit); err != nil {
		return nil, fmt.Errorf("find memory files: %w", err)
	}
	var inPlay []string
	for _, fa := range m.Files {
		if fa.InPlay && len(inPlay) < maxFilesInPlay {
			inPlay = append(inPlay, fa.Path)
		}
	}
	if len(inPlay) == 0 {
		for _, fa := range m.Files[:min(len(m.Files), maxFilesInPlay)] {
			inPlay = append(inPlay, fa.Path)
		}
	}
	for _, p := range inPlay {
		fr, err := findFileRelationships(ctx, tx, ws, p, true)
		if err != nil {
			return nil, fmt.Errorf("find memory relationships: %w", err)
		}
		if len(fr.Decisions) > 0 || len(fr.Risks) > 0 {
			m.FileLinks = append(m.FileLinks, fr)
		}
	}
	return m, nil
}

func (db *DB) rankedDecisions(ctx context.Context, q querier, ws, match string, limit int) ([]*DecisionRecord, error) {
	var out []*DecisionRecord
	if match != "" {
		var err error
		if out, err = db.searchDecisionRecords(ctx, q, ws, match, "", DecisionActive, limit); err != nil {
			return nil, err
		}
	}
	if len(out) < limit {
		recent, err := findDecisionRecords(ctx, q,
			`WHERE d.workspace_id = ? AND d.status = 'active' ORDER BY d.rid DESC LIMIT ?`, ws, limit+len(out))
		if err != nil {
			return nil, err
		}
		out = appendNew(out, recent, limit, func(r *DecisionRecord) string { return r.ID })
	}
	return out, nil
}

func rankedRisks(ctx context.Context, q querier, ws, match string, limit int) ([]*Learning, error) {
	// Several snapshots may teach the same risk; ask for more to fill the limit.
	var out []*Learning
	key := func(l *Learning) string { return sameText(l.Content) }
	if match != "" {
		found, err := searchLearnings(ctx, q, ws, match, LearningRisk, "", 3*limit, false)
		if err != nil {
			return nil, err
		}
		out = appendNew(out, found, limit, key)
	}
	if len(out) < limit {
		recent, err := searchLearnings(ctx, q, ws, "", LearningRisk, "", 3*limit+len(out), false)
		if err != nil {
			return nil, err
		}
		out = appendNew(out, recent, limit, key)
	}
	return out, nil
}

// appendNew appends the items of more whose key out lacks, up to limit.
func appendNew[T any](out, more []T, limit int, key func(T) string) []T {
	seen := map[string]bool{}
	for _, x := range out {
		seen[key(x)] = true
	}
	for _, x := range more {
		if len(out) >= limit {
			break
		}
		if k := key(x); !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	return out
}

// maxFilesConsidered bounds the files rankedFiles reads per workspace.
const maxFilesConsidered = 500

func rankedFiles(ctx context.Context, q querier, ws, text, match string, limit int) ([]FileActivity, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT l.path, COUNT(DISTINCT l.snapshot_id), MAX(l.created_at),
		   (SELECT l2.content FROM learnings l2 WHERE l2.workspace_id = l.workspace_id AND l2.kind = 'file'
		      AND l2.path = l.path ORDER BY l2.rid DESC LIMIT 1)
		 FROM learnings l WHERE l.workspace_id = ? AND l.kind = 'file'
		 GROUP BY l.path ORDER BY COUNT(DISTINCT l.snapshot_id) DESC, MAX(l.created_at) DESC LIMIT ?`, ws, maxFilesConsidered)
	if err != nil {
		return nil, err
	}
	var files []FileActivity
	for rows.Next() {
		var fa FileActivity
		var last string
		if err := rows.Scan(&fa.Path, &fa.Touches, &last, &fa.Reason); err != nil {
			rows.Close()
			return nil, err
		}
		fa.LastSeen = parseTime(last)
		fa.InPlay = text != "" && mentionsFile(text, fa.Path)
		fa.Relevant = fa.InPlay
		files = append(files, fa)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Files whose reasons match the conversation, best first.
	rank := map[string]int{}
	if match != "" {
		found, err := searchLearnings(ctx, q, ws, match, LearningFile, "", maxFilesConsidered, false)
		if err != nil {
			return nil, err
		}
		for _, l := range found {
			if _, ok := rank[l.Path]; !ok {
				rank[l.Path] = len(rank)
			}
		}
	}
	for i := range files {
		if _, ok := rank[files[i].Path]; ok {
			files[i].Relevant = true
		}
	}
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if a.InPlay != b.InPlay {
			return a.InPlay
		}
		ra, oka := rank[a.Path]
		rb, okb := rank[b.Path]
		if oka != okb {
			return oka
		}
		if oka && ra != rb {
			return ra < rb
		}
		return false // keep most touched, then latest
	})
	return files[:min(len(files), limit)], nil
}
