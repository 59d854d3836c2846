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
// matches the handoff's (all of them when it has none).
type SnapshotSources struct {
	Decisions, Warnings, Findings SourceList
}

// SourceList lists the decision records or blackboard entries of one kind
// that a snapshot may cite: every ID, newest first, and the texts (content
// or summary) of the first SourceLimits of them, Texts[i] being IDs[i]'s.
type SourceList struct {
	IDs   []string
	Texts []string
}

// SourceLimits says how many texts of each kind SnapshotSources carries.
type SourceLimits struct {
	Decisions, Warnings, Findings int
}

// Assembly builds a handoff's context snapshot from what the workspace holds
// when the handoff is created.
type Assembly struct {
	Limits SourceLimits
	Build  func(SnapshotSources) ContextSnapshot
}

// CreateAgentHandoff validates h and stores it with its status entry, in one
// transaction, filling in IDs, the workspace (the default one when empty),
// status pending and times. When assemble is set, h's snapshot is built by
// it from the workspace's state, read just before; otherwise h's snapshot
// is kept as given, after checking that each ID names a decision record,
// warning or finding (as listed) of h's workspace. status is stored in h's
// workspace and its ID kept in h.StatusEntryID. Returns ErrInvalid if h or
// status breaks a rule or the snapshot names something of another
// workspace or nothing.
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
	if assemble != nil {
		// An unscoped snapshot reads thousands of rows. Reading them in a
		// read-only transaction of their own, rather than in the write
		// transaction, keeps SQLite's single writer free meanwhile, and
		// keeps them out of the read set of PostgreSQL's serializable
		// write, which any decision or entry posted meanwhile would fail.
		src, err := db.findSnapshotSources(ctx, h.WorkspaceID, h.Scope, assemble.Limits)
		if err != nil {
			return fmt.Errorf("create agent handoff: %w", err)
		}
		h.Snapshot = assemble.Build(src).orEmpty()
	}
	snapshot := marshalSnapshot(h.Snapshot)
	err = db.inTx(ctx, func(tx *txn) error {
		if assemble == nil {
			if err := checkSnapshotIDs(ctx, tx, h.WorkspaceID, h.Snapshot); err != nil {
				return err
			}
		}
		now := db.now()
		if err := insertBlackboardEntry(ctx, tx, status, now); err != nil {
			return err
		}
		h.ID, h.Status, h.CreatedAt, h.StatusEntryID, h.Results = newID(), AgentHandoffPending, now, status.ID, results
		_, err := tx.ExecContext(ctx,
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
func marshalSnapshot(s ContextSnapshot) string {
	lists := [...]struct {
		key  string
		list []string
	}{{"decision_ids", s.DecisionIDs}, {"warning_ids", s.WarningIDs}, {"finding_ids", s.FindingIDs}, {"summaries", s.Summaries}}
	size := 64
	for _, l := range lists {
		size += len(l.key) + 6
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
				q, _ := json.Marshal(v) // a string always encodes
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
	return b.String()
}

// plainJSONString reports whether json.Marshal writes s as is between
// quotes: printable ASCII with nothing it escapes. It looks at eight bytes
// a step, without a branch each, since every ID of a snapshot goes through
// it.
func plainJSONString(s string) bool {
	ok := uint8(1)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		ok &= plainJSONByte[s[i]] & plainJSONByte[s[i+1]] & plainJSONByte[s[i+2]] & plainJSONByte[s[i+3]] &
			plainJSONByte[s[i+4]] & plainJSONByte[s[i+5]] & plainJSONByte[s[i+6]] & plainJSONByte[s[i+7]]
	}
	for ; i < len(s); i++ {
		ok &= plainJSONByte[s[i]]
	}
	return ok == 1
}

// plainJSONByte is 1 for the bytes json.Marshal writes as they are, 0 for
// the others.
var plainJSONByte = func() (t [256]uint8) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = 1
	}
	for _, c := range `"\<>&` {
		t[c] = 0
	}
	return t
}()

// sourceKind is one kind of thing an assembled snapshot cites (decision
// records, warnings, findings): where it is stored, and the list it fills.
type sourceKind struct {
	table, text string // the table, and its column with the text of a summary
	where       string // the condition that selects the kind, with one parameter
	arg         any    // that parameter
	ridIndex    string // (workspace_id, the column of where, rid, id)
	list        *SourceList
	limit       int
}

// findSnapshotSources reads what an assembled snapshot draws from, in
// read-only transactions: every matching ID, and the text of the first lim
// of each kind.
func (db *DB) findSnapshotSources(ctx context.Context, workspaceID, scope string, lim SourceLimits) (SnapshotSources, error) {
	var src SnapshotSources
	kinds := []sourceKind{
		{`decision_records`, `content`, `status = ?`, DecisionActive, `decision_records_active_rid`, &src.Decisions, lim.Decisions},
		{`blackboard_entries`, `summary`, `type = ?`, EntryWarning, `blackboard_entries_type_rid`, &src.Warnings, lim.Warnings},
		{`blackboard_entries`, `summary`, `type = ?`, EntryFinding, `blackboard_entries_type_rid`, &src.Findings, lim.Findings},
	}
	if scope = NormalizeScope(scope); scope != "" && scope != ProjectScope {
		err := db.inReadTx(ctx, func(tx *txn) error {
			for _, k := range kinds {
				if err := findScopedSourceList(ctx, tx, workspaceID, scope, k); err != nil {
					return err
				}
			}
			return nil
		})
		return src, err
	}
	// With no scope, every row of each kind is read, unless nothing of the
	// kind changed since the last time: the workspace's decisions_rev and
	// blackboard_rev, read first, move on with every change to its
	// decision records, and to its warnings and findings (migration 0017).
	var revs [2]int64
	if err := db.read.QueryRowContext(ctx, `SELECT decisions_rev, blackboard_rev FROM workspaces WHERE id = ?`,
		workspaceID).Scan(&revs[0], &revs[1]); errors.Is(err, sql.ErrNoRows) {
		return src, Errorf(ENOTFOUND, "Workspace %s not found.", workspaceID)
	} else if err != nil {
		return src, err
	}
	// The decision records, and the warnings and findings, are read on a
	// connection each, at once, which takes about half as long. Each is a
	// transaction of its own, so the lists may be a moment apart: no
	// change but deleting or copying a whole workspace writes decision
	// records and blackboard entries together, so each list is whole.
	// When only one of the two has changed, it is read in two halves at
	// once instead (findSourceListsSplit).
	groups := [][]sourceKind{kinds[:1], kinds[1:]}
	revCols := []string{`decisions_rev`, `blackboard_rev`}
	keys := make([]string, len(groups))
	var missing []int
	for i, g := range groups {
		keys[i] = workspaceID + "/" + g[0].table
		if kept, ok := db.sources.get(keys[i], revs[i]); !ok || !kept.fill(g) {
			missing = append(missing, i)
		}
	}
	errs := make(chan error, len(missing))
	for _, i := range missing {
		go func() {
			var err error
			if len(missing) == 1 {
				err = db.findSourceListsSplit(ctx, workspaceID, groups[i], revCols[i])
			} else {
				err = db.inReadTx(ctx, func(tx *txn) error { return findAllSourceLists(ctx, tx, workspaceID, groups[i]) })
			}
			if err == nil {
				db.sources.put(keys[i], revs[i], keepSources(groups[i]))
			}
			errs <- err
		}()
	}
	var err error
	for range missing {
		if gerr := <-errs; err == nil {
			err = gerr
		}
	}
	return src.clone(), err
}

// keptSources are the lists of some kinds of snapshot sources of a
// workspace, and the number of texts each was read with, as the sources
// cache keeps them.
type keptSources struct {
	limits []int
	lists  []SourceList
}

func keepSources(kinds []sourceKind) keptSources {
	var k keptSources
	for _, kind := range kinds {
		k.limits = append(k.limits, kind.limit)
		k.lists = append(k.lists, *kind.list)
	}
	return k
}

// fill fills in the lists of kinds with the kept ones, if they were read
// with the same limits.
func (k keptSources) fill(kinds []sourceKind) bool {
	if len(kinds) != len(k.lists) {
		return false
	}
	for i, kind := range kinds {
		if kind.limit != k.limits[i] {
			return false
		}
	}
	for i, kind := range kinds {
		*kind.list = k.lists[i]
	}
	return true
}

// clone copies s's lists, so that a caller may change what it is given.
func (s SnapshotSources) clone() SnapshotSources {
	for _, l := range []*SourceList{&s.Decisions, &s.Warnings, &s.Findings} {
		l.IDs, l.Texts = slices.Clone(l.IDs), slices.Clone(l.Texts)
	}
	return s
}

// inReadTx runs fn in a read-only transaction of the reader pool, whose
// statements all see one snapshot of the database: SQLite's read
// transactions do; PostgreSQL's must be asked for it (repeatable read),
// since by default each statement sees what was committed before it began.
func (db *DB) inReadTx(ctx context.Context, fn func(tx *txn) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if db.eng == enginePostgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// findAllSourceLists fills in the lists of kinds with every row of the
// workspace, whatever its scope. It costs two queries however many rows
// there are: one joins the IDs of each kind into a string, the other reads
// the first texts of each kind.
func findAllSourceLists(ctx context.Context, tx *txn, workspaceID string, kinds []sourceKind) error {
	ids, err := findSourceIDs(ctx, tx, workspaceID, kinds, nil, nil)
	if err != nil {
		return err
	}
	newest, err := findNewestTexts(ctx, tx, workspaceID, kinds)
	if err != nil {
		return err
	}
	return fillSourceLists(kinds, ids, newest)
}

// findSourceIDs returns the IDs of each of kinds' rows of the workspace,
// newest first, in one query. With above and upTo, only the rows whose rid
// is above above[i] (when set) and at most upTo[i] (when set).
func findSourceIDs(ctx context.Context, tx *txn, workspaceID string, kinds []sourceKind, above, upTo []int64) ([][]string, error) {
	var (
		sel    []string
		args   []any
		joined = make([]sql.NullString, len(kinds))
		dest   = make([]any, len(kinds))
	)
	for i, k := range kinds {
		where := k.where
		args = append(args, workspaceID, k.arg)
		if above != nil {
			where += ` AND rid > ?`
			args = append(args, above[i])
		}
		if upTo != nil {
			where += ` AND rid <= ?`
			args = append(args, upTo[i])
		}
		sel = append(sel, `(`+idsInRidOrder(tx.eng, k.table, k.ridIndex, where)+`)`)
		dest[i] = &joined[i]
	}
	if err := tx.QueryRowContext(ctx, `SELECT `+strings.Join(sel, `, `), args...).Scan(dest...); err != nil {
		return nil, err
	}
	ids := make([][]string, len(kinds))
	for i := range kinds {
		ids[i] = splitNewestFirst(joined[i].String)
	}
	return ids, nil
}

// newestRow is one of the newest rows of a kind: its ID and text.
type newestRow struct{ id, text string }

// findNewestTexts returns the IDs and texts of the first rows of each of
// kinds: the newest of the workspace, as many as the kind's limit.
func findNewestTexts(ctx context.Context, tx *txn, workspaceID string, kinds []sourceKind) ([][]newestRow, error) {
	var (
		arms []string
		args []any
	)
	for i, k := range kinds {
		arms = append(arms, `SELECT `+strconv.Itoa(i)+` AS k, rid, id, `+k.text+` AS text FROM (SELECT rid, id, `+k.text+
			` FROM `+k.table+` WHERE workspace_id = ? AND `+k.where+` ORDER BY rid DESC LIMIT ?) AS s`+strconv.Itoa(i))
		args = append(args, workspaceID, k.arg, max(k.limit, 0))
	}
	rows, err := tx.QueryContext(ctx, strings.Join(arms, ` UNION ALL `)+` ORDER BY k, rid DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	newest := make([][]newestRow, len(kinds))
	for rows.Next() {
		var (
			i   int
			rid int64
			r   newestRow
		)
		if err := rows.Scan(&i, &rid, &r.id, &r.text); err != nil {
			return nil, err
		}
		newest[i] = append(newest[i], r)
	}
	return newest, rows.Err()
}

// fillSourceLists fills in kinds' lists with their IDs and the texts of
// the newest rows, which must be the ones listed first: both are read in
// one transaction, or in two that saw the same revision.
func fillSourceLists(kinds []sourceKind, ids [][]string, newest [][]newestRow) error {
	for i, k := range kinds {
		l := SourceList{IDs: ids[i]}
		for n, r := range newest[i] {
			if n >= len(l.IDs) || l.IDs[n] != r.id {
				return fmt.Errorf("read %s: row %d is %s, not the one listed", k.table, n, r.id)
			}
			l.Texts = append(l.Texts, r.text)
		}
		*k.list = l
	}
	return nil
}

// findSourceListsSplit fills in the lists of kinds as findAllSourceLists
// does, in about half the time when a second connection is idle: the rows
// above the middle of each kind's rids and those below are read at once,
// in a read transaction each. Each first reads revCol, the workspace's
// revision of kinds' rows: if the two differ, a change came between them,
// and the lists are read again in one transaction.
func (db *DB) findSourceListsSplit(ctx context.Context, workspaceID string, kinds []sourceKind, revCol string) error {
	var (
		sel  []string
		args []any
		mids = make([]int64, len(kinds))
		dest = make([]any, len(kinds))
	)
	for i, k := range kinds {
		// Two subqueries, each found at one end of the kind's rid index.
		from := ` FROM ` + k.table + ` WHERE workspace_id = ? AND ` + k.where
		sel = append(sel, `((SELECT COALESCE(min(rid), 0)`+from+`) + (SELECT COALESCE(max(rid), 0)`+from+`)) / 2`)
		args = append(args, workspaceID, k.arg, workspaceID, k.arg)
		dest[i] = &mids[i]
	}
	if err := db.read.QueryRowContext(ctx, `SELECT `+strings.Join(sel, `, `), args...).Scan(dest...); err != nil {
		return err
	}
	rev := `SELECT ` + revCol + ` FROM workspaces WHERE id = ?`
	var (
		newer, older   [][]string
		newest         [][]newestRow
		newRev, oldRev int64
		olderDone      = make(chan error, 1)
	)
	go func() {
		olderDone <- db.inReadTx(ctx, func(tx *txn) (err error) {
			if err := tx.QueryRowContext(ctx, rev, workspaceID).Scan(&oldRev); err != nil {
				return err
			}
			older, err = findSourceIDs(ctx, tx, workspaceID, kinds, nil, mids)
			return err
		})
	}()
	err := db.inReadTx(ctx, func(tx *txn) (err error) {
		if err := tx.QueryRowContext(ctx, rev, workspaceID).Scan(&newRev); err != nil {
			return err
		}
		if newer, err = findSourceIDs(ctx, tx, workspaceID, kinds, mids, nil); err != nil {
			return err
		}
		newest, err = findNewestTexts(ctx, tx, workspaceID, kinds)
		return err
	})
	if oerr := <-olderDone; err == nil {
		err = oerr
	}
	if err != nil {
		return err
	}
	if newRev != oldRev {
		return db.inReadTx(ctx, func(tx *txn) error { return findAllSourceLists(ctx, tx, workspaceID, kinds) })
	}
	for i := range kinds {
		newer[i] = append(newer[i], older[i]...)
	}
	return fillSourceLists(kinds, newer, newest)
}

// idsInRidOrder is the SQL of a query that joins with commas the IDs of
// table's rows of a workspace (the first parameter) that meet where, in
// rid order, oldest first; NULL when there is none. PostgreSQL sorts them
// itself. SQLite aggregates rows in the order it walks them, so the query
// names the index to walk, which starts with (workspace_id, the column of
// where, rid) and holds id: walking it reads the IDs in rid order without
// visiting a row, and without the sorted subquery an ORDER BY would need
// (stepping through one costs SQLite a third more). TestCreateHandoffUnscoped
// checks the order. IDs are UUIDs: no commas.
func idsInRidOrder(eng engine, table, index, where string) string {
	if eng == enginePostgres {
		return `SELECT string_agg(id, ',' ORDER BY rid) FROM ` + table + ` WHERE workspace_id = ? AND ` + where
	}
	return `SELECT group_concat(id, ',') FROM ` + table + ` INDEXED BY ` + index + ` WHERE workspace_id = ? AND ` + where
}

// splitNewestFirst splits IDs joined oldest first, newest first.
func splitNewestFirst(joined string) []string {
	if joined == "" {
		return []string{}
	}
	n := strings.Count(joined, ",") + 1
	ids := make([]string, n)
	for i := n - 1; i >= 0; i-- {
		ids[i], joined, _ = strings.Cut(joined, ",")
	}
	return ids
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

// findScopedSourceList fills in k's list with the rows of the workspace
// whose scope matches scope. SQLite joins the rows the two index searches
// of scopeUnion find into one string, which costs a fraction of stepping
// through them one by one; the order is made here, since an ORDER BY would
// make SQLite walk the rid index through every row instead of searching
// the scope index. IDs are UUIDs: no spaces or commas.
func findScopedSourceList(ctx context.Context, tx *txn, workspaceID, scope string, k sourceKind) error {
	type row struct {
		rid int64
		id  string
	}
	q, args := scopeUnion(`rid, id`, k.table, `workspace_id = ? AND `+k.where, []any{workspaceID, k.arg}, `scope`, scope)
	var joined sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT `+tx.eng.stringAgg(`rid || ' ' || id`, `,`, ``)+` FROM (`+q+`) AS s`, args...).Scan(&joined); err != nil {
		return err
	}
	var found []row
	for part := range strings.SplitSeq(joined.String, ",") {
		ridText, id, ok := strings.Cut(part, " ")
		if !ok {
			continue // no rows: the aggregate gave NULL
		}
		rid, err := strconv.ParseInt(ridText, 10, 64)
		if err != nil {
			return fmt.Errorf("read %s row %q: %w", k.table, part, err)
		}
		found = append(found, row{rid, id})
	}
	slices.SortFunc(found, func(a, b row) int { return cmp.Compare(b.rid, a.rid) })
	found = slices.CompactFunc(found, func(a, b row) bool { return a.rid == b.rid }) // both halves of a union may find one row
	k.list.IDs = make([]string, len(found))
	for i, r := range found {
		k.list.IDs[i] = r.id
	}
	var err error
	k.list.Texts, err = findSourceTexts(ctx, tx, k.table, k.text, k.list.IDs[:min(max(k.limit, 0), len(found))])
	return err
}

// findSourceTexts returns the texts of table's rows ids, in the order of
// ids, from column text, in one query.
func findSourceTexts(ctx context.Context, tx *txn, table, text string, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := tx.QueryContext(ctx,
		`SELECT id, `+text+` FROM `+table+` WHERE id IN (`+strings.Repeat(", ?", len(ids))[2:]+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[string]string, len(ids))
	for rows.Next() {
		var id, t string
		if err := rows.Scan(&id, &t); err != nil {
			return nil, err
		}
		byID[id] = t
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	texts := make([]string, len(ids))
	for i, id := range ids {
		t, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("read %s: row %s is gone", table, id)
		}
		texts[i] = t
	}
	return texts, nil
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
