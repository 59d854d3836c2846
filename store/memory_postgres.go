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

// tsWords is the SQL of a text column's words, one space between them: what
// the tsvector columns index (see the schema), and what ts_headline must
// read to see the same words. snippetFromHeadline maps its headline back
// onto the text itself.
func tsWords(col string) string {
	return `regexp_replace(` + col + ` COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g')`
}

// headlineOptions makes ts_headline's snippets look like FTS5's: the
// match markers of parseSnippet and about 16 words around the best match.
const headlineOptions = `StartSel=` + snippetOpen + `, StopSel=` + snippetClose +
	`, MaxWords=16, MinWords=8, ShortWord=0, MaxFragments=1`

// isCommonPostgres is isCommon on PostgreSQL: whether match matches more
// than CommonTermCap rows of table (every workspace's, as FTS5 counts).
// The ORDER BY lets the planner count a common term's first matches along
// the primary key, stopping at the cap, rather than list them all from
// the GIN index; a rare term's still come from the index.
func isCommonPostgres(ctx context.Context, q querier, table, match string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM (SELECT 1 FROM `+table+` WHERE fts @@ `+tsQuery+` ORDER BY rid DESC LIMIT ?) AS m`,
		match, CommonTermCap+1).Scan(&n)
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
		// ILIKE on a column in the collation "C" ignores the case of ASCII
		// letters only, as SQLite's LIKE does.
		where += ` AND (d.scope = ? OR d.scope ILIKE ? ESCAPE '\')`
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
	// Past the cap, newest first, in an order PostgreSQL can read from the
	// primary key backwards, stopping at the limit.
	rank, order := `ts_rank_cd(d.fts, m.q, 1)`, `rank DESC, d.rid DESC`
	if common {
		rank, order = `0`, `d.rid DESC`
	}
	// Rank and limit first, then make snippets for the winners only.
	query := `SELECT ` + decisionRecordColumns + `, ts_headline('baton', ` + tsWords(`d.content`) + `, w.q, ?)
		FROM (SELECT d.rid, m.q, ` + rank + ` AS rank
		      FROM decision_records d, ` + tsQuery + ` AS m(q)
		      WHERE d.fts @@ m.q AND ` + where + `
		      ORDER BY ` + order + ` LIMIT ?) AS w
		JOIN decision_records d ON d.rid = w.rid
		ORDER BY w.rank DESC, w.rid DESC`
	qargs := append(append([]any{headlineOptions, match}, args...), limit)
	return scanAll(func(s scanner) (*DecisionRecord, error) {
		var headline string
		r, err := scanDecisionRecord(s, &headline)
		if err != nil {
			return nil, err
		}
		r.Snippet = parseSnippet(snippetFromHeadline(headline, r.Content))
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
	rank, order := `ts_rank_cd(l.fts, m.q, 1)`, `rank DESC, l.rid DESC`
	if common {
		rank, order = `0`, `l.rid DESC`
	}
	headlines := `'', '', ''`
	var hargs []any
	if snippets {
		headlines = `ts_headline('baton', ` + tsWords(`l.content`) + `, w.q, ?), ts_headline('baton', ` + tsWords(`l.detail`) +
			`, w.q, ?), ts_headline('baton', ` + tsWords(`l.path`) + `, w.q, ?)`
		hargs = []any{headlineOptions, headlineOptions, headlineOptions}
	}
	query := `SELECT ` + learningColumns + `, ` + headlines + `
		FROM (SELECT l.rid, m.q, ` + rank + ` AS rank
		      FROM learnings l, ` + tsQuery + ` AS m(q)
		      WHERE l.fts @@ m.q AND ` + where + `
		      ORDER BY ` + order + ` LIMIT ?) AS w
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
			l.Snippet = parseSnippet(snippetFromHeadline(content, l.Content))
		case strings.Contains(detail, snippetOpen):
			l.Snippet = parseSnippet(snippetFromHeadline(detail, l.Detail))
		case strings.Contains(path, snippetOpen):
			l.Snippet = parseSnippet(snippetFromHeadline(path, l.Path))
		default:
			l.Snippet = parseSnippet(snippetFromHeadline(content, l.Content))
		}
		return l, nil
	})(q.QueryContext(ctx, query, qargs...))
}

// snippetFromHeadline maps a ts_headline of text's words (tsWords) back
// onto text: the same run of words, with the punctuation between them and
// the marks ts_headline set, and an ellipsis where it cuts text short, as
// FTS5's snippet does.
func snippetFromHeadline(headline, text string) string {
	type word struct {
		text   string
		marked bool
	}
	var hw []word
	for _, f := range strings.Fields(headline) {
		marked := strings.Contains(f, snippetOpen)
		f = strings.NewReplacer(snippetOpen, "", snippetClose, "").Replace(f)
		if f != "" {
			hw = append(hw, word{f, marked})
		}
	}
	spans := wordSpans(text)
	if len(hw) == 0 || len(hw) > len(spans) {
		return ""
	}
	// The first run of text's words that reads as the headline's.
	first := -1
	for k := 0; k+len(hw) <= len(spans) && first < 0; k++ {
		first = k
		for i, w := range hw {
			if sp := spans[k+i]; text[sp[0]:sp[1]] != w.text {
				first = -1
				break
			}
		}
	}
	if first < 0 {
		return ""
	}
	last := first + len(hw) - 1
	var b strings.Builder
	from := 0
	if first > 0 {
		b.WriteString("…")
		from = spans[first][0]
	}
	for i, w := range hw {
		sp := spans[first+i]
		b.WriteString(text[from:sp[0]])
		if w.marked {
			b.WriteString(snippetOpen + text[sp[0]:sp[1]] + snippetClose)
		} else {
			b.WriteString(text[sp[0]:sp[1]])
		}
		from = sp[1]
	}
	if last == len(spans)-1 {
		b.WriteString(text[from:])
	} else {
		b.WriteString("…")
	}
	return b.String()
}

// wordSpans returns where text's words are, a word being a run of letters
// and digits as for the tsvector columns: [start, end) byte offsets.
func wordSpans(text string) [][2]int {
	var spans [][2]int
	start := -1
	for i, r := range text {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && start < 0:
			start = i
		case !alnum && start >= 0:
			spans = append(spans, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, len(text)})
	}
	return spans
}
