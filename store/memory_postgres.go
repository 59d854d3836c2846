package store

// The full-text search of the workspace memory on PostgreSQL: the
// counterparts of memory_sqlite.go's FTS5 queries. decision_records.fts and
// learnings.fts are tsvector columns with GIN indexes, made with the text
// search configuration baton (see migrations/postgres/00001_schema.sql),
// which splits text as FTS5's unicode61 tokenizer does and stems English
// words. Ranking is ts_rank_cd (cover density: a record matching twice
// beats one matching once), newest first among equals; snippets are
// ts_headline with the same markers as FTS5's.

import (
	"context"
	"strings"
	"unicode"
)

// tsMatch builds the to_tsquery text of search terms: each term is a
// phrase of its words (as FTS5 reads a quoted term), all required, or any
// of them when anyTerm. A word is a run of letters and digits, quoted, so
// that no tsquery syntax survives from a term. As with FTS5, a term with
// no word ("!!") is left out, and when every term is one of those the
// search matches nothing (tsNothing); with no term at all it returns "".
func tsMatch(terms []string, anyTerm bool) string {
	var phrases []string
	text := false
	for _, t := range terms {
		text = text || strings.TrimSpace(t) != ""
		words := strings.FieldsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(words) == 0 {
			continue
		}
		for i, w := range words {
			words[i] = `'` + w + `'`
		}
		phrases = append(phrases, `(`+strings.Join(words, ` <-> `)+`)`)
	}
	if len(phrases) == 0 && text {
		return tsNothing
	}
	if anyTerm {
		return strings.Join(phrases, ` | `)
	}
	return strings.Join(phrases, ` & `)
}

// tsNothing is the tsMatch of terms that hold no word: it matches nothing.
const tsNothing = "!"

// tsQuery is the SQL of the tsquery of a tsMatch text passed as a parameter.
const tsQuery = `to_tsquery('baton', ?)`

// headlineOptions makes ts_headline's snippets look like FTS5's: the
// match markers of parseSnippet and about 16 words around the best match.
const headlineOptions = `StartSel=` + snippetOpen + `, StopSel=` + snippetClose +
	`, MaxWords=16, MinWords=8, ShortWord=0, MaxFragments=1`

// isCommonPostgres is isCommon on PostgreSQL: whether match matches more
// than CommonTermCap rows of table (every workspace's, as FTS5 counts).
func isCommonPostgres(ctx context.Context, q querier, table, match string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM (SELECT 1 FROM `+table+` WHERE fts @@ `+tsQuery+` LIMIT ?) AS m`, match, CommonTermCap+1).Scan(&n)
	return n > CommonTermCap, err
}

// searchDecisionRecordsPostgres is searchDecisionRecords on PostgreSQL;
// match is a tsMatch text.
func searchDecisionRecordsPostgres(ctx context.Context, q querier, workspaceID, match, scope string, exactScope bool, status DecisionStatus, limit int) ([]*DecisionRecord, error) {
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
	if match == tsNothing {
		return nil, nil
	}
	if match == "" {
		return findDecisionRecords(ctx, q, `WHERE `+where+` ORDER BY d.rid DESC LIMIT ?`, append(args, limit)...)
	}
	common, err := isCommonPostgres(ctx, q, "decision_records", match)
	if err != nil {
		return nil, err
	}
	// Past the cap, newest first: the same order whatever the rank.
	rank := `ts_rank_cd(d.fts, m.q, 1)`
	if common {
		rank = `0`
	}
	// Rank and limit first, then make snippets for the winners only.
	query := `SELECT ` + decisionRecordColumns + `, ts_headline('baton', d.content, w.q, ?)
		FROM (SELECT d.rid, m.q, ` + rank + ` AS rank
		      FROM decision_records d, ` + tsQuery + ` AS m(q)
		      WHERE d.fts @@ m.q AND ` + where + `
		      ORDER BY rank DESC, d.rid DESC LIMIT ?) AS w
		JOIN decision_records d ON d.rid = w.rid
		ORDER BY w.rank DESC, w.rid DESC`
	qargs := append(append([]any{headlineOptions, match}, args...), limit)
	return scanAll(func(s scanner) (*DecisionRecord, error) {
		var headline string
		r, err := scanDecisionRecord(s, &headline)
		if err != nil {
			return nil, err
		}
		r.Snippet = parseSnippet(snippetOf(headline, r.Content))
		return r, nil
	})(q.QueryContext(ctx, query, qargs...))
}

// searchLearningsPostgres is searchLearnings on PostgreSQL; match is a
// tsMatch text. A snippet comes from the first of content, detail and
// path that shows a match, as FTS5's snippet picks the best column.
func searchLearningsPostgres(ctx context.Context, q querier, workspaceID, match string, kind LearningKind, path string, limit int, snippets bool) ([]*Learning, error) {
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
	if match == tsNothing {
		return nil, nil
	}
	if match == "" {
		return scanAll(func(s scanner) (*Learning, error) { return scanLearning(s) })(q.QueryContext(ctx,
			`SELECT `+learningColumns+` FROM learnings l WHERE `+where+` ORDER BY l.rid DESC LIMIT ?`, append(args, limit)...))
	}
	common, err := isCommonPostgres(ctx, q, "learnings", match)
	if err != nil {
		return nil, err
	}
	rank := `ts_rank_cd(l.fts, m.q, 1)`
	if common {
		rank = `0`
	}
	headlines := `'', '', ''`
	var hargs []any
	if snippets {
		headlines = `ts_headline('baton', l.content, w.q, ?), ts_headline('baton', l.detail, w.q, ?), ts_headline('baton', l.path, w.q, ?)`
		hargs = []any{headlineOptions, headlineOptions, headlineOptions}
	}
	query := `SELECT ` + learningColumns + `, ` + headlines + `
		FROM (SELECT l.rid, m.q, ` + rank + ` AS rank
		      FROM learnings l, ` + tsQuery + ` AS m(q)
		      WHERE l.fts @@ m.q AND ` + where + `
		      ORDER BY rank DESC, l.rid DESC LIMIT ?) AS w
		JOIN learnings l ON l.rid = w.rid
		ORDER BY w.rank DESC, w.rid DESC`
	qargs := append(append(append(hargs, match), args...), limit)
	return scanAll(func(s scanner) (*Learning, error) {
		var content, detail, path string
		l, err := scanLearning(s, &content, &detail, &path)
		if err != nil {
			return nil, err
		}
		if !snippets {
			return l, nil
		}
		switch {
		case strings.Contains(content, snippetOpen):
			l.Snippet = parseSnippet(snippetOf(content, l.Content))
		case strings.Contains(detail, snippetOpen):
			l.Snippet = parseSnippet(snippetOf(detail, l.Detail))
		case strings.Contains(path, snippetOpen):
			l.Snippet = parseSnippet(snippetOf(path, l.Path))
		default:
			l.Snippet = parseSnippet(snippetOf(content, l.Content))
		}
		return l, nil
	})(q.QueryContext(ctx, query, qargs...))
}

// snippetOf marks a ts_headline of text with an ellipsis where it cuts
// text short, as FTS5's snippet does.
func snippetOf(headline, text string) string {
	plain := strings.NewReplacer(snippetOpen, "", snippetClose, "").Replace(headline)
	if plain == "" {
		return ""
	}
	if !strings.HasPrefix(text, plain) {
		headline = "…" + headline
	}
	if !strings.HasSuffix(text, plain) {
		headline += "…"
	}
	return headline
}
