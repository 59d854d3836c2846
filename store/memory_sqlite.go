package store

// The full-text search of the workspace memory, on SQLite's FTS5: MATCH
// expressions, bm25 ranking and snippets. The tables decision_records_fts
// and learnings_fts index content with the porter tokenizer (see
// migrations/sqlite/0004_memory.sql). memory_postgres.go implements them
// for PostgreSQL (tsvector, ts_rank_cd, ts_headline); memory_find.go picks
// by engine.

import (
	"context"
	"database/sql"
	"strings"
)

// ftsMatch builds an FTS5 query from search terms: each quoted, so that no
// FTS5 syntax survives in a term, all required, or any of them when
// anyTerm. Returns "" when there is no term.
func ftsMatch(terms []string, anyTerm bool) string {
	var quoted []string
	for _, t := range terms {
		if t = strings.TrimSpace(t); t != "" {
			quoted = append(quoted, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		}
	}
	if anyTerm {
		return strings.Join(quoted, " OR ")
	}
	return strings.Join(quoted, " ")
}

// isCommon reports whether an FTS5 query matches more than CommonTermCap
// rows of table; counting stops at the cap, so this is cheap either way.
func isCommon(ctx context.Context, q querier, table, match string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM (SELECT 1 FROM `+table+` WHERE `+table+` MATCH ? LIMIT ?)`, match, CommonTermCap+1).Scan(&n)
	return n > CommonTermCap, err
}

func searchDecisionRecords(ctx context.Context, q querier, workspaceID, match, scope string, exactScope bool, status DecisionStatus, limit int) ([]*DecisionRecord, error) {
	where := `d.workspace_id = ?`
	args := []any{workspaceID}
	if status != "" {
		where += ` AND d.status = ?`
		args = append(args, status)
	}
	switch {
	case scope != "" && exactScope:
		where += ` AND d.scope = ?`
		args = append(args, scope)
	case scope != "":
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
	byRowID := map[int64]*DecisionRecord{}
	out, err := scanAll(func(s scanner) (*DecisionRecord, error) {
		var snip string
		var rowID int64
		r, err := scanDecisionRecord(s, &snip, &rowID)
		if err != nil {
			return nil, err
		}
		r.Snippet = parseSnippet(snip)
		byRowID[rowID] = r
		return r, nil
	})(rows, err)
	if err != nil {
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
	return scanAll(func(s scanner) (id int64, err error) {
		return id, s.Scan(&id)
	})(q.QueryContext(ctx, query, args...))
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
	return scanAll(func(s scanner) (*Learning, error) {
		var snip string
		l, err := scanLearning(s, &snip)
		if err != nil {
			return nil, err
		}
		if snip != "" {
			l.Snippet = parseSnippet(snip)
		}
		return l, nil
	})(q.QueryContext(ctx, query, args...))
}

// Snippet markers: control characters, which no stored text contains
// (checkText refuses them), so splitting on them is exact.
const (
	snippetOpen  = "\x02"
	snippetClose = "\x03"
)

// parseSnippet splits an FTS5 snippet made with the markers above.
func parseSnippet(s string) []SnippetPart {
	var parts []SnippetPart
	for s != "" {
		i := strings.Index(s, snippetOpen)
		if i < 0 {
			parts = append(parts, SnippetPart{Text: s})
			break
		}
		if i > 0 {
			parts = append(parts, SnippetPart{Text: s[:i]})
		}
		s = s[i+len(snippetOpen):]
		j := strings.Index(s, snippetClose)
		if j < 0 {
			parts = append(parts, SnippetPart{Text: s, Match: true})
			break
		}
		parts = append(parts, SnippetPart{Text: s[:j], Match: true})
		s = s[j+len(snippetClose):]
	}
	return parts
}
