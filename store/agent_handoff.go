package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// AgentHandoffStatus says whether the receiver has acknowledged a handoff.
type AgentHandoffStatus string

// Agent handoff statuses.
const (
	AgentHandoffPending      AgentHandoffStatus = "pending"
	AgentHandoffAcknowledged AgentHandoffStatus = "acknowledged"
)

// MaxResultsBytes bounds the JSON of an agent handoff's results.
const MaxResultsBytes = 256 << 10

// MaxSnapshotIDs bounds the ids of each kind a context snapshot given by
// hand may list (an assembled one lists every match).
const MaxSnapshotIDs = 1_000

// AgentHandoff is work one agent hands to another (or to any agent, when
// TargetAgent is empty) with its results and a context snapshot: the
// decision records and blackboard warnings and findings that were in scope
// when it was created. A handoff is pending until acknowledged, once; one
// without a target can be claimed, once, so that two agents never take the
// same work.
type AgentHandoff struct {
	ID          string
	WorkspaceID string
	SourceAgent string
	TargetAgent string // empty: any agent
	Scope       string // empty: the whole project
	Summary     string
	Results     json.RawMessage // a JSON array
	Snapshot    ContextSnapshot
	Status      AgentHandoffStatus

	AcknowledgedBy string
	AcknowledgedAt time.Time // zero until acknowledged
	ClaimedBy      string
	ClaimedAt      time.Time // zero until claimed

	StatusEntryID string // the blackboard status entry posted with it
	CreatedAt     time.Time
}

// ContextSnapshot is the context an agent handoff carries: the IDs of the
// decision records and the warning and finding entries in its scope, and
// short summaries of some of them ("Decision: …", "Warning: …").
type ContextSnapshot struct {
	DecisionIDs []string `json:"decision_ids"`
	WarningIDs  []string `json:"warning_ids"`
	FindingIDs  []string `json:"finding_ids"`
	Summaries   []string `json:"summaries"`
}

// EmptyContextSnapshot returns a snapshot of empty lists (never nil ones,
// so that its JSON has arrays).
func EmptyContextSnapshot() ContextSnapshot {
	return ContextSnapshot{DecisionIDs: []string{}, WarningIDs: []string{}, FindingIDs: []string{}, Summaries: []string{}}
}

// orEmpty replaces nil lists with empty ones.
func (s ContextSnapshot) orEmpty() ContextSnapshot {
	for _, l := range []*[]string{&s.DecisionIDs, &s.WarningIDs, &s.FindingIDs, &s.Summaries} {
		if *l == nil {
			*l = []string{}
		}
	}
	return s
}

func (h *AgentHandoff) normalize() {
	h.SourceAgent = strings.TrimSpace(h.SourceAgent)
	h.TargetAgent = strings.TrimSpace(h.TargetAgent)
	h.Scope = NormalizeScope(h.Scope)
	h.Summary = strings.TrimSpace(h.Summary)
	if len(bytes.TrimSpace(h.Results)) == 0 {
		h.Results = json.RawMessage("[]")
	}
	h.Snapshot = h.Snapshot.orEmpty()
}

// Validate reports the first rule the handoff breaks, as an ErrInvalid with
// a message for people. It checks the snapshot's shape, not that its IDs
// exist: CreateAgentHandoff does that.
func (h *AgentHandoff) Validate() error {
	if err := checkAgentID("source agent", h.SourceAgent, true); err != nil {
		return err
	}
	if err := checkAgentID("target agent", h.TargetAgent, false); err != nil {
		return err
	}
	if err := checkScope(h.Scope); err != nil {
		return err
	}
	if h.Summary == "" {
		return Errorf(EINVALID, "Summary is empty; say in a sentence or two what was done and what is left.")
	}
	if n := utf8.RuneCountInString(h.Summary); n > MaxHandoffSummary {
		return Errorf(EINVALID, "Summary is %d characters long; keep it to %d.", n, MaxHandoffSummary)
	}
	if hasControl(h.Summary, true) {
		return Errorf(EINVALID, "Summary contains control characters.")
	}
	if len(h.Results) > MaxResultsBytes {
		return Errorf(EINVALID, "Results are %d bytes of JSON; keep them to %d.", len(h.Results), MaxResultsBytes)
	}
	var results []json.RawMessage
	if err := json.Unmarshal(h.Results, &results); err != nil || results == nil {
		return Errorf(EINVALID, "Results must be a JSON list (for example [\"tests pass\", {\"file\": \"a.go\"}]).")
	}
	s := h.Snapshot
	for _, l := range []struct {
		name string
		ids  []string
	}{{"decision_ids", s.DecisionIDs}, {"warning_ids", s.WarningIDs}, {"finding_ids", s.FindingIDs}} {
		if len(l.ids) > MaxSnapshotIDs {
			return Errorf(EINVALID, "The snapshot lists %d %s; keep it to %d.", len(l.ids), l.name, MaxSnapshotIDs)
		}
		for _, id := range l.ids {
			if err := checkLine("context_snapshot."+l.name, id, 100, true); err != nil {
				return err
			}
		}
	}
	if len(s.Summaries) > MaxSnapshotIDs {
		return Errorf(EINVALID, "The snapshot has %d summaries; keep it to %d.", len(s.Summaries), MaxSnapshotIDs)
	}
	for _, line := range s.Summaries {
		if utf8.RuneCountInString(line) > MaxItemLen {
			return Errorf(EINVALID, "A snapshot summary is longer than %d characters.", MaxItemLen)
		}
	}
	return nil
}

// ResultCount is how many results the handoff carries.
func (h *AgentHandoff) ResultCount() int {
	var results []json.RawMessage
	json.Unmarshal(h.Results, &results)
	return len(results)
}

// SnapshotSources is what an assembled context snapshot is drawn from: the
// active decision records and the warning and finding entries whose scope
// matches the handoff's (all of them when it has none), newest first. Every
// item has its ID; only the first SourceLimits of each kind have their text.
type SnapshotSources struct {
	Decisions []SourceItem
	Warnings  []SourceItem
	Findings  []SourceItem
}

// SourceItem is a decision record or blackboard entry a snapshot may cite;
// Text is its content or summary, when loaded.
type SourceItem struct {
	ID   string
	Text string
}

// SourceLimits says how many items of each kind SnapshotSources carries the
// text of.
type SourceLimits struct {
	Decisions, Warnings, Findings int
}

// Assembly builds a handoff's context snapshot from what the workspace holds
// when the handoff is created, inside the creating transaction.
type Assembly struct {
	Limits SourceLimits
	Build  func(SnapshotSources) ContextSnapshot
}

// CreateAgentHandoff validates h and stores it with its status entry, in one
// transaction, filling in IDs, the workspace (the default one when empty),
// status pending and times. When assemble is set, h's snapshot is built by
// it from the workspace's state; otherwise h's snapshot is kept as given,
// after checking that each ID names a decision record, warning or finding
// (as listed) of h's workspace. status is stored in h's workspace and its ID
// kept in h.StatusEntryID. Returns ErrInvalid if h or status breaks a rule
// or the snapshot names something of another workspace or nothing.
func (db *DB) CreateAgentHandoff(ctx context.Context, h *AgentHandoff, status *BlackboardEntry, assemble *Assembly) error {
	h.WorkspaceID = db.workspace(h.WorkspaceID)
	h.normalize()
	if err := h.Validate(); err != nil {
		return err
	}
	status.WorkspaceID = h.WorkspaceID
	status.normalize()
	if err := status.Validate(); err != nil {
		return err
	}
	results, err := compactJSON(h.Results)
	if err != nil {
		return Errorf(EINVALID, "Results must be a JSON list.")
	}
	err = db.inTx(ctx, func(tx *txn) error {
		if assemble != nil {
			src, err := findSnapshotSources(ctx, tx, h.WorkspaceID, h.Scope, assemble.Limits)
			if err != nil {
				return err
			}
			h.Snapshot = assemble.Build(src).orEmpty()
		} else if err := checkSnapshotIDs(ctx, tx, h.WorkspaceID, h.Snapshot); err != nil {
			return err
		}
		snapshot, err := marshalSnapshot(h.Snapshot)
		if err != nil {
			return err
		}
		now := db.now()
		if err := insertBlackboardEntry(ctx, tx, status, now); err != nil {
			return err
		}
		h.ID, h.Status, h.CreatedAt, h.StatusEntryID, h.Results = newID(), AgentHandoffPending, now, status.ID, results
		_, err = tx.ExecContext(ctx,
			`INSERT INTO agent_handoffs (id, workspace_id, source_agent, target_agent, scope, summary, results,
			   context_snapshot, status, status_entry_id, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			h.ID, h.WorkspaceID, h.SourceAgent, nullIfEmpty(h.TargetAgent), h.Scope, h.Summary, string(results),
			snapshot, h.Status, h.StatusEntryID, formatTime(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("create agent handoff: %w", err)
	}
	return nil
}

func compactJSON(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// marshalSnapshot encodes s as json.Marshal would, without reflection and
// into one buffer sized up front: an assembled snapshot with no scope lists
// every active decision record, warning and finding, thousands of IDs.
func marshalSnapshot(s ContextSnapshot) (string, error) {
	lists := []struct {
		key  string
		list []string
	}{{"decision_ids", s.DecisionIDs}, {"warning_ids", s.WarningIDs}, {"finding_ids", s.FindingIDs}, {"summaries", s.Summaries}}
	size := 64
	for _, l := range lists {
		for _, v := range l.list {
			size += len(v) + 3
		}
	}
	var b strings.Builder
	b.Grow(size)
	for i, l := range lists {
		if i == 0 {
			b.WriteString(`{"`)
		} else {
			b.WriteString(`,"`)
		}
		b.WriteString(l.key)
		b.WriteString(`":`)
		if l.list == nil {
			b.WriteString("null")
			continue
		}
		b.WriteByte('[')
		for j, v := range l.list {
			if j > 0 {
				b.WriteByte(',')
			}
			if !plainJSONString(v) {
				q, err := json.Marshal(v)
				if err != nil {
					return "", err
				}
				b.Write(q)
				continue
			}
			b.WriteByte('"')
			b.WriteString(v)
			b.WriteByte('"')
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String(), nil
}

// plainJSONString reports whether json.Marshal writes s as is between
// quotes: printable ASCII with nothing it escapes.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// findSnapshotSources reads what an assembled snapshot draws from: every
// matching ID, and the text of the first lim of each kind.
func findSnapshotSources(ctx context.Context, tx *txn, workspaceID, scope string, lim SourceLimits) (SnapshotSources, error) {
	if scope = NormalizeScope(scope); scope == "" || scope == ProjectScope {
		return findAllSnapshotSources(ctx, tx, workspaceID, lim)
	}
	var src SnapshotSources
	var err error
	q, args := scopeUnion(`rid, id`, `decision_records`, `workspace_id = ? AND status = 'active'`, []any{workspaceID}, `scope`, scope)
	if src.Decisions, err = findSourceItems(ctx, tx, `decision_records`, `content`, q, args, lim.Decisions); err != nil {
		return src, err
	}
	for _, k := range []struct {
		typ   EntryType
		items *[]SourceItem
		limit int
	}{{EntryWarning, &src.Warnings, lim.Warnings}, {EntryFinding, &src.Findings, lim.Findings}} {
		q, args := scopeUnion(`rid, id`, `blackboard_entries`, `workspace_id = ? AND type = ?`, []any{workspaceID, k.typ}, `scope`, scope)
		if *k.items, err = findSourceItems(ctx, tx, `blackboard_entries`, `summary`, q, args, k.limit); err != nil {
			return src, err
		}
	}
	return src, nil
}

// findAllSnapshotSources is findSnapshotSources with no scope: every active
// decision record, warning and finding of the workspace.
func findAllSnapshotSources(ctx context.Context, tx *txn, workspaceID string, lim SourceLimits) (SnapshotSources, error) {
	var src SnapshotSources
	var err error
	if src.Decisions, err = findAllSourceItems(ctx, tx, `decision_records`, `content`,
		`workspace_id = ? AND status = 'active'`, []any{workspaceID}, lim.Decisions); err != nil {
		return src, err
	}
	if src.Warnings, err = findAllSourceItems(ctx, tx, `blackboard_entries`, `summary`,
		`workspace_id = ? AND type = ?`, []any{workspaceID, EntryWarning}, lim.Warnings); err != nil {
		return src, err
	}
	src.Findings, err = findAllSourceItems(ctx, tx, `blackboard_entries`, `summary`,
		`workspace_id = ? AND type = ?`, []any{workspaceID, EntryFinding}, lim.Findings)
	return src, err
}

// findAllSourceItems lists the IDs of table's rows that meet where, newest
// first, and the text of the first limit of them. The (…, rid, id) indexes
// of migration 0013 hold those IDs in that order, so SQLite joins them into
// one string from the index alone: no row visits, no sort. The ORDER BY of
// a subquery is kept by the aggregate over it (SQLite does not flatten it;
// PostgreSQL's aggregate sorts by itself, see engine.stringAgg).
// IDs are UUIDs: no commas.
func findAllSourceItems(ctx context.Context, tx *txn, table, text, where string, args []any, limit int) ([]SourceItem, error) {
	var joined sql.NullString
	if err := tx.QueryRowContext(ctx,
		`SELECT `+tx.eng.stringAgg(`id`, `,`, `rid DESC`)+` FROM (SELECT rid, id FROM `+table+` WHERE `+where+` ORDER BY rid DESC) AS s`,
		args...).Scan(&joined); err != nil {
		return nil, err
	}
	if joined.String == "" {
		return []SourceItem{}, nil
	}
	ids := strings.Split(joined.String, ",")
	items := make([]SourceItem, len(ids))
	for i, id := range ids {
		items[i].ID = id
	}
	if limit <= 0 {
		return items, nil
	}
	// The same rows in the same order, within the same transaction: the
	// first limit of them, with their text.
	rows, err := tx.QueryContext(ctx,
		`SELECT id, `+text+` FROM `+table+` WHERE `+where+` ORDER BY rid DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for i := 0; rows.Next(); i++ {
		var id, t string
		if err := rows.Scan(&id, &t); err != nil {
			return nil, err
		}
		if i >= len(items) || items[i].ID != id {
			return nil, fmt.Errorf("read %s: row %d is %s, not the one listed", table, i, id)
		}
		items[i].Text = t
	}
	return items, rows.Err()
}

// loadSourceTexts fills in the text of items from table's column text.
func loadSourceTexts(ctx context.Context, tx *txn, table, text string, items []SourceItem) error {
	for i := range items {
		if err := tx.QueryRowContext(ctx, `SELECT `+text+` FROM `+table+` WHERE id = ?`, items[i].ID).Scan(&items[i].Text); err != nil {
			return err
		}
	}
	return nil
}

// scopeUnion selects cols from table's rows that meet where and whose
// column col matches scope (see ScopeMatches), as a union of two index
// searches: the scopes scope starts with, and the range of scopes that
// start with it (both halves may find a project-wide row when scope is
// a prefix of "project"). One OR of the two would make SQLite scan every row.
func scopeUnion(cols, table, where string, args []any, col, scope string) (string, []any) {
	sel := `SELECT ` + cols + ` FROM ` + table + ` WHERE ` + where
	scope = NormalizeScope(scope)
	if scope == "" || scope == ProjectScope {
		return sel, args
	}
	prefixes := []any{"", ProjectScope}
	for i := range scope {
		if i > 0 {
			prefixes = append(prefixes, scope[:i])
		}
	}
	marks := strings.Repeat(", ?", len(prefixes))[2:]
	q := sel + ` AND ` + col + ` IN (` + marks + `) UNION ALL ` + sel + ` AND ` + col + ` >= ? AND ` + col + ` < ?`
	out := append(append(slices.Clone(args), prefixes...), args...)
	return q, append(out, scope, prefixEnd(scope))
}

// findSourceItems runs q (which selects rid, id), lists the IDs newest
// first, then loads the text of the first limit of them from table.
// SQLite joins the rows into one string, which costs a fraction of
// stepping through thousands of rows one by one; the order is made here,
// since an ORDER BY would make SQLite walk the rid index through every row
// instead of searching the scope index. IDs are UUIDs: no spaces or commas.
func findSourceItems(ctx context.Context, tx *txn, table, text, q string, args []any, limit int) ([]SourceItem, error) {
	type row struct {
		rid int64
		id  string
	}
	var joined sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT `+tx.eng.stringAgg(`rid || ' ' || id`, `,`, ``)+` FROM (`+q+`) AS s`, args...).Scan(&joined); err != nil {
		return nil, err
	}
	var found []row
	for part := range strings.SplitSeq(joined.String, ",") {
		ridText, id, ok := strings.Cut(part, " ")
		if !ok {
			continue // no rows: the aggregate gave NULL
		}
		rid, err := strconv.ParseInt(ridText, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("read %s row %q: %w", table, part, err)
		}
		found = append(found, row{rid, id})
	}
	slices.SortFunc(found, func(a, b row) int { return cmp.Compare(b.rid, a.rid) })
	found = slices.CompactFunc(found, func(a, b row) bool { return a.rid == b.rid }) // both halves of a union may find one row
	items := make([]SourceItem, len(found))
	for i, r := range found {
		items[i].ID = r.id
	}
	return items, loadSourceTexts(ctx, tx, table, text, items[:min(limit, len(items))])
}

// checkSnapshotIDs makes sure every ID of a snapshot given by hand names
// something of the workspace, of the kind it is listed as.
func checkSnapshotIDs(ctx context.Context, tx *txn, workspaceID string, s ContextSnapshot) error {
	for _, k := range []struct {
		ids   []string
		query string
		kind  string
	}{
		{s.DecisionIDs, `SELECT 1 FROM decision_records WHERE id = ? AND workspace_id = ?`, "decision record"},
		{s.WarningIDs, `SELECT 1 FROM blackboard_entries WHERE id = ? AND workspace_id = ? AND type = 'warning'`, "warning"},
		{s.FindingIDs, `SELECT 1 FROM blackboard_entries WHERE id = ? AND workspace_id = ? AND type = 'finding'`, "finding"},
	} {
		for _, id := range k.ids {
			var one int
			err := tx.QueryRowContext(ctx, k.query, id, workspaceID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return Errorf(EINVALID, "The context snapshot names %s %q, which this workspace does not have. Use IDs from this workspace, or leave the snapshot out to assemble it.", k.kind, id)
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}

const agentHandoffColumns = `id, workspace_id, source_agent, COALESCE(target_agent, ''), scope, summary, results,
	context_snapshot, status, COALESCE(acknowledged_by, ''), COALESCE(acknowledged_at, ''), COALESCE(claimed_by, ''),
	COALESCE(claimed_at, ''), COALESCE(status_entry_id, ''), created_at`

func scanAgentHandoff(s scanner) (*AgentHandoff, error) {
	var h AgentHandoff
	var results, snapshot, ackAt, claimAt, created string
	if err := s.Scan(&h.ID, &h.WorkspaceID, &h.SourceAgent, &h.TargetAgent, &h.Scope, &h.Summary, &results,
		&snapshot, &h.Status, &h.AcknowledgedBy, &ackAt, &h.ClaimedBy, &claimAt, &h.StatusEntryID, &created); err != nil {
		return nil, err
	}
	h.Results = json.RawMessage(results)
	if err := json.Unmarshal([]byte(snapshot), &h.Snapshot); err != nil {
		return nil, fmt.Errorf("agent handoff %s snapshot: %w", h.ID, err)
	}
	h.Snapshot = h.Snapshot.orEmpty()
	h.AcknowledgedAt, h.ClaimedAt, h.CreatedAt = parseTime(ackAt), parseTime(claimAt), parseTime(created)
	return &h, nil
}

// FindAgentHandoffByID returns a handoff of the workspace (the default one
// when empty). Returns ErrNotFound if the workspace has no such handoff.
func (db *DB) FindAgentHandoffByID(ctx context.Context, workspaceID, id string) (*AgentHandoff, error) {
	return findAgentHandoffByID(ctx, db.read, db.workspace(workspaceID), id)
}

func findAgentHandoffByID(ctx context.Context, q querier, workspaceID, id string) (*AgentHandoff, error) {
	h, err := scanAgentHandoff(q.QueryRowContext(ctx,
		`SELECT `+agentHandoffColumns+` FROM agent_handoffs WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("agent handoff %s: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("find agent handoff %s: %w", id, err)
	}
	return h, nil
}

// AgentHandoffFilter selects agent handoffs. Agent selects the handoffs an
// agent made, was sent or claimed; Status is "", pending or acknowledged.
type AgentHandoffFilter struct {
	WorkspaceID string // the default workspace when empty
	Agent       string
	Status      AgentHandoffStatus
	Limit       int // DefaultSearchLimit when zero, at most MaxSearchLimit
}

// FindAgentHandoffs returns the handoffs f selects, newest first. Returns
// ErrInvalid for an unknown status.
func (db *DB) FindAgentHandoffs(ctx context.Context, f AgentHandoffFilter) ([]*AgentHandoff, error) {
	where, args := []string{`workspace_id = ?`}, []any{db.workspace(f.WorkspaceID)}
	switch f.Status {
	case "":
	case AgentHandoffPending, AgentHandoffAcknowledged:
		where, args = append(where, `status = ?`), append(args, f.Status)
	default:
		return nil, Errorf(EINVALID, "Status must be pending or acknowledged, not %q.", f.Status)
	}
	if a := strings.TrimSpace(f.Agent); a != "" {
		where = append(where, `(source_agent = ? OR target_agent = ? OR claimed_by = ?)`)
		args = append(args, a, a, a)
	}
	return db.findAgentHandoffs(ctx, strings.Join(where, ` AND `), args, f.Limit)
}

// FindInbox returns what waits for agent: pending handoffs targeted at it or
// claimed by it, and pending unclaimed ones with no target, made by another
// agent, whose scope matches scope (every one when scope is empty); newest
// first. Returns ErrInvalid if agent is empty.
func (db *DB) FindInbox(ctx context.Context, workspaceID, agent, scope string, limit int) ([]*AgentHandoff, error) {
	agent = strings.TrimSpace(agent)
	if err := checkAgentID("agent", agent, true); err != nil {
		return nil, err
	}
	open := `(target_agent IS NULL AND claimed_by IS NULL AND source_agent <> ?`
	args := []any{db.workspace(workspaceID), agent, agent, agent}
	if c, a := scopeClause("scope", scope); c != "" {
		open, args = open+` AND `+c, append(args, a...)
	}
	return db.findAgentHandoffs(ctx,
		`workspace_id = ? AND status = 'pending' AND (target_agent = ? OR claimed_by = ? OR `+open+`))`, args, limit)
}

func (db *DB) findAgentHandoffs(ctx context.Context, where string, args []any, limit int) ([]*AgentHandoff, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+agentHandoffColumns+` FROM agent_handoffs WHERE `+where+` ORDER BY rid DESC LIMIT ?`,
		append(args, searchLimit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("find agent handoffs: %w", err)
	}
	defer rows.Close()
	out := []*AgentHandoff{}
	for rows.Next() {
		h, err := scanAgentHandoff(rows)
		if err != nil {
			return nil, fmt.Errorf("find agent handoffs: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// AcknowledgeAgentHandoff marks a handoff of the workspace as acknowledged
// by by, now, and returns it. Only the first acknowledgement counts: a
// second one changes nothing and returns ErrConflict naming the first.
// Returns ErrNotFound if the workspace has no such handoff and ErrInvalid
// if by is empty.
func (db *DB) AcknowledgeAgentHandoff(ctx context.Context, workspaceID, id, by string) (*AgentHandoff, error) {
	by = strings.TrimSpace(by)
	if err := checkAgentID("by", by, true); err != nil {
		return nil, err
	}
	return db.updateAgentHandoff(ctx, workspaceID, id, func(h *AgentHandoff) error {
		if h.Status == AgentHandoffAcknowledged {
			return Errorf(ECONFLICT, "Handoff %s was already acknowledged by %s at %s.",
				h.ID, h.AcknowledgedBy, h.AcknowledgedAt.Format(time.RFC3339))
		}
		return nil
	}, `status = 'acknowledged', acknowledged_by = ?1, acknowledged_at = ?2`, `status = 'pending'`, by)
}

// ClaimAgentHandoff gives a handoff of the workspace to by, now, and returns
// it. The first claim wins: a handoff already claimed, already
// acknowledged, or targeted at another agent returns ErrConflict and stays
// as it is. Returns ErrNotFound if the workspace has no such handoff and
// ErrInvalid if by is empty.
func (db *DB) ClaimAgentHandoff(ctx context.Context, workspaceID, id, by string) (*AgentHandoff, error) {
	by = strings.TrimSpace(by)
	if err := checkAgentID("by", by, true); err != nil {
		return nil, err
	}
	return db.updateAgentHandoff(ctx, workspaceID, id, func(h *AgentHandoff) error {
		switch {
		case h.ClaimedBy != "":
			return Errorf(ECONFLICT, "Handoff %s was already claimed by %s at %s.",
				h.ID, h.ClaimedBy, h.ClaimedAt.Format(time.RFC3339))
		case h.Status == AgentHandoffAcknowledged:
			return Errorf(ECONFLICT, "Handoff %s was already acknowledged by %s, so there is nothing left to claim.",
				h.ID, h.AcknowledgedBy)
		case h.TargetAgent != "" && h.TargetAgent != by:
			return Errorf(ECONFLICT, "Handoff %s is for %s; only a handoff with no target can be claimed by another agent.",
				h.ID, h.TargetAgent)
		}
		return nil
	}, `claimed_by = ?1, claimed_at = ?2`, `claimed_by IS NULL AND status = 'pending' AND (target_agent IS NULL OR target_agent = ?1)`, by)
}

// updateAgentHandoff sets columns (placeholders ?1: by, ?2: now) on a
// handoff that is still in the state guard describes, in one transaction.
// When the handoff is not in that state, check explains why as an error.
// The guard is part of the UPDATE, so of two racing calls only one changes
// the row.
func (db *DB) updateAgentHandoff(ctx context.Context, workspaceID, id string, check func(*AgentHandoff) error, set, guard, by string) (*AgentHandoff, error) {
	workspaceID = db.workspace(workspaceID)
	var out *AgentHandoff
	err := db.inTx(ctx, func(tx *txn) error {
		h, err := findAgentHandoffByID(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		if err := check(h); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx,
			`UPDATE agent_handoffs SET `+set+` WHERE id = ?3 AND workspace_id = ?4 AND `+guard,
			by, formatTime(db.now()), h.ID, workspaceID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return Errorf(ECONFLICT, "Handoff %s changed meanwhile; reload it.", id)
		}
		out, err = findAgentHandoffByID(ctx, tx, workspaceID, id)
		return err
	})
	return out, err
}
