package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// EntryType is the kind of a blackboard entry.
type EntryType string

// Blackboard entry types: a warning others should heed, a finding others can
// use, and a status note (posted, for one, when a handoff is created).
const (
	EntryWarning EntryType = "warning"
	EntryFinding EntryType = "finding"
	EntryStatus  EntryType = "status"
)

// ParseEntryType checks a blackboard entry type.
func ParseEntryType(s string) (EntryType, error) {
	switch t := EntryType(strings.ToLower(strings.TrimSpace(s))); t {
	case EntryWarning, EntryFinding, EntryStatus:
		return t, nil
	}
	return "", Errorf(EINVALID, "Type must be warning, finding or status, not %q.", s)
}

// Limits of blackboard entries and agent handoffs, in characters.
const (
	MaxEntrySummary   = 200
	MaxEntryDetail    = 10_000
	MaxAgentID        = 100
	MaxScope          = 300
	MaxTags           = 20
	MaxTag            = 50
	MaxHandoffSummary = 2_000
)

// ProjectScope is the scope stored for what concerns a whole workspace
// rather than a path: it matches every scope.
const ProjectScope = "project"

// BlackboardEntry is a note an agent leaves for the others of its
// workspace: a warning, a finding or a status. Scope is a path prefix such
// as "src/auth/", or ProjectScope; see FindBlackboardEntries for how scopes
// match.
type BlackboardEntry struct {
	ID          string
	WorkspaceID string
	Type        EntryType
	Summary     string // at most MaxEntrySummary characters
	Detail      string // markdown, at most MaxEntryDetail characters
	Scope       string // ProjectScope when empty
	Tags        []string
	AgentID     string
	CreatedAt   time.Time
}

// normalize trims the entry's text fields, defaults its scope and drops
// empty and repeated tags, so that Validate judges what will be stored.
func (e *BlackboardEntry) normalize() {
	e.Summary = strings.TrimSpace(e.Summary)
	e.Detail = strings.TrimSpace(e.Detail)
	e.Scope = NormalizeScope(e.Scope)
	if e.Scope == "" {
		e.Scope = ProjectScope
	}
	e.AgentID = strings.TrimSpace(e.AgentID)
	tags := make([]string, 0, len(e.Tags))
	for _, t := range e.Tags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	e.Tags = tags
}

// Validate reports the first rule the entry breaks, as an ErrInvalid with a
// message for people.
func (e *BlackboardEntry) Validate() error {
	if _, err := ParseEntryType(string(e.Type)); err != nil {
		return err
	}
	if err := checkLine("summary", e.Summary, MaxEntrySummary, true); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(e.Detail); n > MaxEntryDetail {
		return Errorf(EINVALID, "Detail is %d characters long; keep it to %d.", n, MaxEntryDetail)
	}
	if hasControl(e.Detail, true) {
		return Errorf(EINVALID, "Detail contains control characters.")
	}
	if err := checkAgentID("agent id", e.AgentID, true); err != nil {
		return err
	}
	if err := checkScope(e.Scope); err != nil {
		return err
	}
	if len(e.Tags) > MaxTags {
		return Errorf(EINVALID, "An entry has %d tags; keep it to %d.", len(e.Tags), MaxTags)
	}
	for _, t := range e.Tags {
		if err := checkLine("tag", t, MaxTag, true); err != nil {
			return err
		}
	}
	return nil
}

// NormalizeScope trims spaces and a leading "./" or "/" from a scope.
// The empty scope stays empty: its meaning depends on where it is used.
func NormalizeScope(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "./")
	return strings.TrimLeft(s, "/")
}

func checkScope(s string) error {
	if s == "" {
		return nil
	}
	if err := checkLine("scope", s, MaxScope, false); err != nil {
		return err
	}
	for _, part := range strings.Split(s, "/") {
		if part == ".." {
			return Errorf(EINVALID, "Scope %q climbs out of the project (..); give a path inside it, or project.", s)
		}
	}
	return nil
}

// checkLine checks a one-line text: present if required, at most max
// characters, no control characters.
func checkLine(field, s string, max int, required bool) error {
	if s == "" {
		if required {
			return Errorf(EINVALID, "%s is empty; write a few words.", capitalize(field))
		}
		return nil
	}
	if n := utf8.RuneCountInString(s); n > max {
		return Errorf(EINVALID, "%s is %d characters long; keep it to %d.", capitalize(field), n, max)
	}
	if hasControl(s, false) {
		return Errorf(EINVALID, "%s contains control characters or line breaks.", capitalize(field))
	}
	return nil
}

func checkAgentID(field, s string, required bool) error {
	if s == "" && required {
		return Errorf(EINVALID, "%s is empty; name the agent (for example claude-code or codex).", capitalize(field))
	}
	return checkLine(field, s, MaxAgentID, required)
}

// hasControl is unsafeText, and for one-line fields also any line break or tab.
func hasControl(s string, multiline bool) bool {
	return unsafeText(s) || !multiline && strings.ContainsAny(s, "\n\t")
}

// BlackboardFilter selects blackboard entries. Types selects any of them
// (all when empty); Scope selects entries whose scope matches it (see
// ScopeMatches); Tags selects entries that carry every one of them; Since
// selects entries created after it.
type BlackboardFilter struct {
	WorkspaceID string // the default workspace when empty
	Types       []EntryType
	Scope       string
	Tags        []string
	Since       time.Time
	Limit       int // DefaultSearchLimit when zero, at most MaxSearchLimit
}

// ScopeMatches reports whether an item of scope item matches a query for
// scope query: one is a prefix of the other, or either is the project.
// An empty query matches everything. Store queries apply the same rule in
// SQL (scopeClause).
func ScopeMatches(item, query string) bool {
	item, query = NormalizeScope(item), NormalizeScope(query)
	if query == "" || query == ProjectScope || item == "" || item == ProjectScope {
		return true
	}
	return strings.HasPrefix(item, query) || strings.HasPrefix(query, item)
}

// scopeClause is ScopeMatches in SQL for column col: the project, the
// scopes that start with query (an index range) and the scopes query
// starts with (its prefixes, an index lookup each). Empty when query
// matches everything. Empty item scopes count as the project.
func scopeClause(col, query string) (string, []any) {
	query = NormalizeScope(query)
	if query == "" || query == ProjectScope {
		return "", nil
	}
	args := []any{ProjectScope, query, prefixEnd(query)}
	var in strings.Builder
	for i := range query {
		if i > 0 {
			in.WriteString(", ?")
			args = append(args, query[:i])
		}
	}
	clause := `(` + col + ` IN ('', ?) OR (` + col + ` >= ? AND ` + col + ` < ?)`
	if in.Len() > 0 {
		clause += ` OR ` + col + ` IN (` + strings.TrimPrefix(in.String(), ", ") + `)`
	}
	return clause + `)`, args
}

// prefixEnd returns the smallest string greater than every string that
// starts with p (both engines compare text bytewise: PostgreSQL's columns
// are in the collation "C"). For valid UTF-8 it is valid UTF-8 too, which
// PostgreSQL requires of every text: the last character that can grow
// becomes the next one, which in UTF-8 is also the next in byte order.
func prefixEnd(p string) string {
	if utf8.ValidString(p) {
		rs := []rune(p)
		for i := len(rs) - 1; i >= 0; i-- {
			r := rs[i] + 1
			if r >= 0xD800 && r <= 0xDFFF { // surrogates are no characters
				r = 0xE000
			}
			if r <= unicode.MaxRune {
				rs[i] = r
				return string(rs[:i+1])
			}
		}
	}
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return string(append([]byte(p), 0xff))
}

// CreateBlackboardEntry validates e and stores it, filling in its ID,
// workspace (the default one when empty) and creation time. Returns
// ErrInvalid if the entry breaks a rule.
func (db *DB) CreateBlackboardEntry(ctx context.Context, e *BlackboardEntry) error {
	e.WorkspaceID = db.workspace(e.WorkspaceID)
	e.normalize()
	if err := e.Validate(); err != nil {
		return err
	}
	err := db.inTx(ctx, func(tx *txn) error {
		return insertBlackboardEntry(ctx, tx, e, db.now())
	})
	if err != nil {
		return fmt.Errorf("create blackboard entry: %w", err)
	}
	return nil
}

func insertBlackboardEntry(ctx context.Context, tx *txn, e *BlackboardEntry, now time.Time) error {
	e.ID, e.CreatedAt = newID(), now
	tags, err := json.Marshal(e.Tags)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO blackboard_entries (id, workspace_id, type, summary, detail, scope, tags, agent_id, created_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.WorkspaceID, e.Type, e.Summary, e.Detail, e.Scope, string(tags), e.AgentID, formatTime(now))
	return err
}

const blackboardColumns = `e.id, e.workspace_id, e.type, e.summary, e.detail, e.scope, e.tags, e.agent_id, e.created_at`

func scanBlackboardEntry(s scanner) (*BlackboardEntry, error) {
	var e BlackboardEntry
	var tags, created string
	if err := s.Scan(&e.ID, &e.WorkspaceID, &e.Type, &e.Summary, &e.Detail, &e.Scope, &tags, &e.AgentID, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(tags), &e.Tags); err != nil {
		return nil, fmt.Errorf("blackboard entry %s tags: %w", e.ID, err)
	}
	e.CreatedAt = parseTime(created)
	return &e, nil
}

// FindBlackboardEntryByID returns an entry of the workspace (the default
// one when empty). Returns ErrNotFound if the workspace has no such entry.
func (db *DB) FindBlackboardEntryByID(ctx context.Context, workspaceID, id string) (*BlackboardEntry, error) {
	e, err := scanBlackboardEntry(db.read.QueryRowContext(ctx,
		`SELECT `+blackboardColumns+` FROM blackboard_entries e WHERE e.id = ? AND e.workspace_id = ?`, id, db.workspace(workspaceID)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("blackboard entry %s: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find blackboard entry %s: %w", id, err)
	}
	return e, nil
}

// FindBlackboardEntries returns the entries f selects, newest first.
// Returns ErrInvalid for an unknown type.
func (db *DB) FindBlackboardEntries(ctx context.Context, f BlackboardFilter) ([]*BlackboardEntry, error) {
	where := []string{`e.workspace_id = ?`}
	args := []any{db.workspace(f.WorkspaceID)}
	if len(f.Types) > 0 {
		marks := make([]string, len(f.Types))
		for i, t := range f.Types {
			if _, err := ParseEntryType(string(t)); err != nil {
				return nil, err
			}
			marks[i], args = "?", append(args, t)
		}
		where = append(where, `e.type IN (`+strings.Join(marks, ", ")+`)`)
	}
	if c, a := scopeClause("e.scope", f.Scope); c != "" {
		where, args = append(where, c), append(args, a...)
	}
	for _, t := range f.Tags {
		where = append(where, db.eng.jsonArrayHas(`e.tags`))
		args = append(args, strings.TrimSpace(t))
	}
	if !f.Since.IsZero() {
		where, args = append(where, `e.created_at > ?`), append(args, formatTime(f.Since))
	}
	args = append(args, searchLimit(f.Limit))
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+blackboardColumns+` FROM blackboard_entries e WHERE `+strings.Join(where, ` AND `)+
			` ORDER BY e.rid DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("find blackboard entries: %w", err)
	}
	defer rows.Close()
	out := []*BlackboardEntry{}
	for rows.Next() {
		e, err := scanBlackboardEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("find blackboard entries: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
