package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A handoff and its items are read in one statement: the handoff's row
// and its decisions, files and risks as rows of one shape, told apart by
// their first column. One statement sees one state of the database, as a
// read transaction around four queries did, and costs a fourth of it: the
// review screen reads a handoff on every view.
//
// The rows come unsorted: sorting them in SQL costs more than running the
// four queries did; sortItems puts each kind in order (created_at, id).
//
// The shape: kind (0 handoff, 1 decision, 2 file, 3 risk), a key, three
// text columns (a, b, c), confidence, an integer (n) and the name of who
// last changed the item. The key joins the short, machine-made fields with
// "|" (id, source, pinned message id, created_at, updated_at, message ids):
// the driver copies and boxes every non-empty text column of every row, so
// one column in place of six is most of the read's cost saved. None of
// them can hold a "|": ids, sources and times are ours, and the message
// ids (a JSON array of ids) come last. The handoff row's key carries its
// status, thread id and workspace id in the source, pinned and message-ids
// places; its summary is in a, its thread's title in b, the revision of its
// items (handoffs.items_rev) in c and its version in n.
const handoffRowsQuery = `
	SELECT 0, id || '|' || status || '|' || thread_id || '|' || created_at || '|' || updated_at || '|' || workspace_id,
	       summary, (SELECT title FROM threads WHERE threads.id = handoffs.thread_id), '' || items_rev, NULL, version, ''
	  FROM handoffs WHERE id = %[1]s
	UNION ALL
	SELECT 1, d.id || '|' || d.source || '|' || COALESCE(d.pinned_message_id, '') || '|' || d.created_at || '|' || d.updated_at || '|' || d.message_ids,
	       d.content, '', '', d.confidence, d.during_planning, COALESCE(u.name, '')
	  FROM decisions d LEFT JOIN users u ON u.id = d.updated_by WHERE d.handoff_id = %[1]s
	UNION ALL
	SELECT 2, f.id || '|' || f.source || '||' || f.created_at || '|' || f.updated_at || '|' || f.message_ids,
	       f.path, f.relevance, f.context, NULL, 0, COALESCE(u.name, '')
	  FROM file_refs f LEFT JOIN users u ON u.id = f.updated_by WHERE f.handoff_id = %[1]s
	UNION ALL
	SELECT 3, r.id || '|' || r.source || '||' || r.created_at || '|' || r.updated_at || '|' || r.message_ids,
	       r.description, r.severity, r.mitigation, NULL, 0, COALESCE(u.name, '')
	  FROM risks r LEFT JOIN users u ON u.id = r.updated_by WHERE r.handoff_id = %[1]s`

// rowKey is the key column of a handoff row, split at its "|"s.
type rowKey struct {
	id, source, pinned, created, updated, ids string
}

// splitRowKey splits a key column; the parts share its memory.
func splitRowKey(s string) rowKey {
	var k rowKey
	k.id, s, _ = strings.Cut(s, "|")
	k.source, s, _ = strings.Cut(s, "|")
	k.pinned, s, _ = strings.Cut(s, "|")
	k.created, s, _ = strings.Cut(s, "|")
	k.updated, k.ids, _ = strings.Cut(s, "|")
	return k
}

// handoffRowsByID reads the rows of the handoff whose id is given four times.
var handoffRowsByID = fmt.Sprintf(handoffRowsQuery, `?`)

// handoffRowQuery reads a handoff's own row, with the revision of its items
// (handoffs.items_rev), in the shape of the handoff row of handoffRowsQuery
// without its first column.
const handoffRowQuery = `
	SELECT id || '|' || status || '|' || thread_id || '|' || created_at || '|' || updated_at || '|' || workspace_id,
	       summary, (SELECT title FROM threads WHERE threads.id = handoffs.thread_id), version, items_rev
	  FROM handoffs WHERE `

// handoffItems are a handoff's decisions (labelled), files and risks, in
// order, as the items cache keeps them.
type handoffItems struct {
	decisions []Decision
	files     []FileRef
	risks     []Risk
}

// own returns copies of the items for a caller to keep and change. The
// message ID lists and confidences are shared: nothing changes them in
// place, and decodeIDs clips the lists, so an append copies.
func (it handoffItems) own() (ds []*Decision, fs []*FileRef, rs []*Risk) {
	return pointers(slices.Clone(it.decisions)), pointers(slices.Clone(it.files)), pointers(slices.Clone(it.risks))
}

// kept returns the values of items, for the items cache.
func kept[T any](items []*T) []T {
	out := make([]T, len(items))
	for i, p := range items {
		out[i] = *p
	}
	return out
}

// pointers returns pointers to the elements of s, or nil for an empty s
// (as a read that found none returns).
func pointers[T any](s []T) []*T {
	if len(s) == 0 {
		return nil
	}
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

// findHandoff reads the handoff whose column col (id or thread_id) is arg,
// with its items: from the items cache when they have not changed since
// they were last read, otherwise with handoffRowsByID. what names the
// handoff in errors.
func (db *DB) findHandoff(ctx context.Context, col, arg, what string) (*Handoff, error) {
	var (
		key, title string
		h          Handoff
		rev        int64
	)
	err := db.readRow(ctx, handoffRowQuery+col+` = ?`, arg).Scan(&key, &h.Summary, &title, &h.Version, &rev)
	if err != nil {
		return nil, findErr(err, "%s", what)
	}
	k := splitRowKey(key)
	items, ok := db.items.get(k.id, rev)
	if !ok {
		return db.findHandoffRows(ctx, k.id, what)
	}
	fillHandoffRow(&h, k, title)
	h.Decisions, h.Files, h.Risks = items.own()
	return &h, nil
}

// fillHandoffRow fills in h's fields from a handoff row's key and its
// thread's title.
func fillHandoffRow(h *Handoff, k rowKey, title string) {
	h.ID, h.ThreadID, h.WorkspaceID, h.Status, h.ThreadTitle = k.id, k.pinned, k.ids, HandoffStatus(k.source), title
	h.CreatedAt, h.UpdatedAt = parseStoredTime(k.created), parseStoredTime(k.updated)
}

// findHandoffRows reads handoff id and its items in one statement
// (handoffRowsByID), and keeps the items in the items cache under the
// revision read with them. what names the handoff in errors.
func (db *DB) findHandoffRows(ctx context.Context, id, what string) (*Handoff, error) {
	rows, err := db.readRows(ctx, handoffRowsByID, id, id, id, id)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", what, err)
	}
	defer rows.Close()
	var (
		h   *Handoff
		rev int64
	)
	// The scan targets live outside the loop: Scan takes their addresses,
	// so declared inside it they would be allocated again for every row.
	// Integers scan into int64, which database/sql assigns as it is; an
	// int would go through a string.
	var (
		kind, n          int64
		key, a, b, c, by string
		conf             sql.NullFloat64
	)
	for rows.Next() {
		if err := rows.Scan(&kind, &key, &a, &b, &c, &conf, &n, &by); err != nil {
			return nil, fmt.Errorf("find %s: %w", what, err)
		}
		k := splitRowKey(key)
		if kind == 0 {
			h = &Handoff{Summary: a, Version: int(n)}
			fillHandoffRow(h, k, b)
			rev, _ = strconv.ParseInt(c, 10, 64)
			continue
		}
		if h == nil {
			break // items of a handoff deleted since: none
		}
		switch kind {
		case 1:
			d := &Decision{ID: k.id, HandoffID: h.ID, Content: a, Source: Source(k.source),
				MessageIDs: decodeIDs(k.ids), PinnedMessageID: k.pinned, DuringPlanning: n != 0,
				CreatedAt: parseStoredTime(k.created), UpdatedAt: parseStoredTime(k.updated), UpdatedBy: by}
			if conf.Valid {
				v := conf.Float64
				d.Confidence = &v
			}
			h.Decisions = append(h.Decisions, d)
		case 2:
			h.Files = append(h.Files, &FileRef{ID: k.id, HandoffID: h.ID, Path: a, Relevance: Level(b), Context: c, Source: Source(k.source),
				MessageIDs: decodeIDs(k.ids), CreatedAt: parseStoredTime(k.created), UpdatedAt: parseStoredTime(k.updated), UpdatedBy: by})
		case 3:
			h.Risks = append(h.Risks, &Risk{ID: k.id, HandoffID: h.ID, Description: a, Severity: Level(b), Mitigation: c, Source: Source(k.source),
				MessageIDs: decodeIDs(k.ids), CreatedAt: parseStoredTime(k.created), UpdatedAt: parseStoredTime(k.updated), UpdatedBy: by})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find %s: %w", what, err)
	}
	if h == nil {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	sortItems(h.Decisions, func(d *Decision) (time.Time, string) { return d.CreatedAt, d.ID })
	sortItems(h.Files, func(f *FileRef) (time.Time, string) { return f.CreatedAt, f.ID })
	sortItems(h.Risks, func(r *Risk) (time.Time, string) { return r.CreatedAt, r.ID })
	for i, d := range h.Decisions {
		d.Label = "D" + strconv.Itoa(i+1)
	}
	// The cache keeps copies: the caller may change what it was given.
	db.items.put(h.ID, rev, handoffItems{kept(h.Decisions), kept(h.Files), kept(h.Risks)})
	return h, nil
}

// sortItems sorts items by creation time, then id: the order of the
// review screen and of the labels D1, D2….
func sortItems[T any](items []T, key func(T) (time.Time, string)) {
	slices.SortFunc(items, func(a, b T) int {
		ta, ia := key(a)
		tb, ib := key(b)
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return strings.Compare(ia, ib)
	})
}

// parseStoredTime is parseTime for the fixed-width timeFormat
// ("2006-01-02T15:04:05.000000000Z"), without time.Parse's generality; any
// other text goes to parseTime.
func parseStoredTime(s string) time.Time {
	if len(s) != len(timeFormat) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[29] != 'Z' {
		return parseTime(s)
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for _, c := range []byte(s[from:to]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	nsec, ok7 := num(20, 29)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 {
		return parseTime(s)
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
}
