package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxCommentLen is the longest comment or review body, in characters.
const MaxCommentLen = 10000

// AnchorKind says what a comment is about.
type AnchorKind string

// Anchor kinds.
const (
	AnchorDecision    AnchorKind = "decision"
	AnchorFile        AnchorKind = "file"
	AnchorRisk        AnchorKind = "risk"
	AnchorSummary     AnchorKind = "summary"
	AnchorPlanSection AnchorKind = "plan-section"
	AnchorGeneral     AnchorKind = "general"
)

// Anchor is what a comment is about. For a decision, file or risk, ID is
// the item's id. For a plan section, ID is the plan's id and Section the
// slug of its heading (see PlanSections). A general comment is on the
// handoff, or on a plan when ID names one. The summary has no ID.
type Anchor struct {
	Kind    AnchorKind
	ID      string
	Section string
}

// Key names the anchor in one string made of letters, digits and dashes,
// usable as an HTML id: "decision-<id>", "summary", "plan-section-<plan
// id>-<slug>", "general" or "general-<plan id>".
func (a Anchor) Key() string {
	switch {
	case a.ID != "" && a.Section != "":
		return string(a.Kind) + "-" + a.ID + "-" + a.Section
	case a.ID != "":
		return string(a.Kind) + "-" + a.ID
	case a.Section != "":
		return string(a.Kind) + "-" + a.Section
	}
	return string(a.Kind)
}

// Validate checks the anchor's shape (not that what it names exists): a
// known kind, an ID where the kind needs one and none where it has none.
func (a *Anchor) Validate() error {
	a.ID, a.Section = strings.TrimSpace(a.ID), strings.TrimSpace(a.Section)
	switch a.Kind {
	case AnchorDecision, AnchorFile, AnchorRisk:
		if a.ID == "" {
			return Errorf(EINVALID, "Say which %s the comment is about (anchor id).", a.Kind)
		}
		if a.Section != "" {
			return Errorf(EINVALID, "Only plan-section anchors have a section.")
		}
	case AnchorSummary:
		if a.ID != "" || a.Section != "" {
			return Errorf(EINVALID, "A summary anchor has no id or section.")
		}
	case AnchorPlanSection:
		if a.ID == "" || a.Section == "" {
			return Errorf(EINVALID, "A plan-section anchor names the plan (id) and the heading's slug (section).")
		}
	case AnchorGeneral:
		if a.Section != "" {
			return Errorf(EINVALID, "Only plan-section anchors have a section.")
		}
	default:
		return Errorf(EINVALID, "An anchor is decision, file, risk, summary, plan-section or general, not %q.", a.Kind)
	}
	return nil
}

// Comment is a comment on a handoff or one of its plans, or a reply to one
// (ParentID set; replies are one level deep and share their thread's
// anchor). A thread is open until someone resolves it.
type Comment struct {
	ID        string
	HandoffID string
	PlanID    string // set for comments on a plan
	ParentID  string // set for replies
	Anchor    Anchor
	// AnchorLabel is what the anchor read as when the thread started: "D2",
	// a path, a risk, a heading.
	AnchorLabel string
	Author      Actor
	ShareID     string // the review link a guest commented through
	Body        string // markdown
	ResolvedAt  time.Time
	ResolvedBy  string
	CreatedAt   time.Time
	UpdatedAt   time.Time

	// Replies, oldest first; filled by FindComments and FindCommentByID
	// for a thread's first comment.
	Replies []*Comment
}

// Resolved reports whether the thread was resolved.
func (c *Comment) Resolved() bool { return !c.ResolvedAt.IsZero() }

// Edited reports whether the body was changed after it was written.
func (c *Comment) Edited() bool { return c.UpdatedAt.After(c.CreatedAt) }

// Validate trims and checks the comment: a valid anchor and author and a
// body of 1 to MaxCommentLen characters. Returns an EINVALID *Error.
func (c *Comment) Validate() error {
	if err := c.Anchor.Validate(); err != nil {
		return err
	}
	if err := c.Author.Validate(); err != nil {
		return err
	}
	body, err := checkBody(c.Body, true)
	c.Body = body
	return err
}

// checkBody normalises line endings, trims and checks a markdown body.
func checkBody(s string, required bool) (string, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	if s == "" && required {
		return "", Errorf(EINVALID, "The comment is empty. Write something first.")
	}
	if n := utf8.RuneCountInString(s); n > MaxCommentLen {
		return "", Errorf(EINVALID, "The comment is %d characters long; keep it to %d.", n, MaxCommentLen)
	}
	if unsafeText(s) {
		return "", Errorf(EINVALID, "The comment contains control characters or text-direction overrides; remove them.")
	}
	return s, nil
}

// CommentCreate is the input of CreateComment.
type CommentCreate struct {
	Anchor  Anchor
	Body    string
	Author  Actor
	ShareID string // for guests: the review link they came through
}

// CreateComment starts a thread on a handoff or one of its plans. The
// anchor must belong to the handoff: its decision, file or risk, its plan
// and a section of that plan. Returns ErrNotFound if there is no such
// handoff, EINVALID for an empty or long body, a malformed anchor or one
// naming something of another handoff (nothing is stored then).
func (db *DB) CreateComment(ctx context.Context, handoffID string, in CommentCreate) (*Comment, error) {
	now := db.now()
	c := &Comment{ID: newID(), HandoffID: handoffID, Anchor: in.Anchor, Author: in.Author, ShareID: in.ShareID,
		Body: in.Body, CreatedAt: now, UpdatedAt: now}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	err := db.inTx(ctx, func(tx *txn) error {
		if err := handoffExists(ctx, tx, handoffID); err != nil {
			return err
		}
		var err error
		if c.PlanID, c.AnchorLabel, err = resolveAnchor(ctx, tx, handoffID, c.Anchor); err != nil {
			return err
		}
		if err := insertComment(ctx, tx, c); err != nil {
			return err
		}
		return addActivity(ctx, tx, handoffID, ActivityCommented, c.Author, c.AnchorLabel, now)
	})
	if err != nil {
		return nil, fmt.Errorf("comment on handoff %s: %w", handoffID, err)
	}
	return c, nil
}

// resolveAnchor checks that the anchor names something of the handoff and
// returns the plan it is on (if any) and its label.
func resolveAnchor(ctx context.Context, tx *txn, handoffID string, a Anchor) (planID, label string, err error) {
	notHere := func() error {
		return Errorf(EINVALID, "The %s the comment is about is not part of this handoff. Reload the page and comment on what is there.", a.Kind)
	}
	switch a.Kind {
	case AnchorDecision:
		var n int
		err = tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM decisions d, decisions x
			 WHERE x.id = ? AND x.handoff_id = ? AND d.handoff_id = x.handoff_id
			   AND (d.created_at < x.created_at OR (d.created_at = x.created_at AND d.id <= x.id))`,
			a.ID, handoffID).Scan(&n)
		if err == nil && n == 0 {
			return "", "", notHere()
		}
		return "", "D" + strconv.Itoa(n), err
	case AnchorFile:
		err = tx.QueryRowContext(ctx, `SELECT path FROM file_refs WHERE id = ? AND handoff_id = ?`, a.ID, handoffID).Scan(&label)
	case AnchorRisk:
		err = tx.QueryRowContext(ctx, `SELECT description FROM risks WHERE id = ? AND handoff_id = ?`, a.ID, handoffID).Scan(&label)
		label = shorten(label, 80)
	case AnchorSummary:
		return "", "Summary", nil
	case AnchorGeneral:
		if a.ID == "" {
			return "", "Handoff", nil
		}
		var version int
		err = tx.QueryRowContext(ctx, `SELECT version FROM plans WHERE id = ? AND handoff_id = ?`, a.ID, handoffID).Scan(&version)
		planID, label = a.ID, "Plan v"+strconv.Itoa(version)
	case AnchorPlanSection:
		var md string
		err = tx.QueryRowContext(ctx, `SELECT markdown FROM plans WHERE id = ? AND handoff_id = ?`, a.ID, handoffID).Scan(&md)
		if err == nil {
			for _, s := range PlanSections(md) {
				if s.Slug == a.Section {
					return a.ID, s.Title, nil
				}
			}
			return "", "", Errorf(EINVALID, "The plan has no section %q. Reload the plan and comment on one of its headings.", a.Section)
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", notHere()
	}
	return planID, label, err
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func insertComment(ctx context.Context, tx *txn, c *Comment) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO comments (id, handoff_id, plan_id, parent_id, anchor_kind, anchor_id, anchor_label,
		     author_user_id, author_name, guest, share_id, body, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.HandoffID, nullString(c.PlanID), nullString(c.ParentID), c.Anchor.Kind, anchorColumn(c.Anchor), c.AnchorLabel,
		nullString(c.Author.UserID), c.Author.Name, c.Author.Guest, nullString(c.ShareID), c.Body,
		formatTime(c.CreatedAt), formatTime(c.UpdatedAt))
	return err
}

// anchorColumn is what comments.anchor_id holds: the item id or the
// section slug; plan_id holds the plan.
func anchorColumn(a Anchor) string {
	switch a.Kind {
	case AnchorPlanSection:
		return a.Section
	case AnchorGeneral:
		return ""
	}
	return a.ID
}

// CreateReply answers a thread. Replies are one level deep: parentID must
// be a thread's first comment. Returns ErrNotFound if there is no such
// comment and EINVALID for a bad body or a reply to a reply.
func (db *DB) CreateReply(ctx context.Context, parentID string, body string, author Actor, shareID string) (*Comment, error) {
	now := db.now()
	var c *Comment
	err := db.inTx(ctx, func(tx *txn) error {
		parent, err := findComment(ctx, tx, parentID)
		if err != nil {
			return err
		}
		if parent.ParentID != "" {
			return Errorf(EINVALID, "Replies are one level deep: answer the thread's first comment.")
		}
		c = &Comment{ID: newID(), HandoffID: parent.HandoffID, PlanID: parent.PlanID, ParentID: parent.ID,
			Anchor: parent.Anchor, AnchorLabel: parent.AnchorLabel, Author: author, ShareID: shareID,
			Body: body, CreatedAt: now, UpdatedAt: now}
		if err := c.Validate(); err != nil {
			return err
		}
		if err := insertComment(ctx, tx, c); err != nil {
			return err
		}
		return addActivity(ctx, tx, c.HandoffID, ActivityCommented, author, c.AnchorLabel, now)
	})
	if err != nil {
		return nil, fmt.Errorf("reply to comment %s: %w", parentID, err)
	}
	return c, nil
}

const commentColumns = `id, handoff_id, COALESCE(plan_id, ''), COALESCE(parent_id, ''), anchor_kind, anchor_id, anchor_label,
	COALESCE(author_user_id, ''), author_name, guest, COALESCE(share_id, ''), body,
	COALESCE(resolved_at, ''), resolved_by, created_at, updated_at`

func scanComment(s scanner) (*Comment, error) {
	var c Comment
	var anchorID, resolved, created, updated string
	if err := s.Scan(&c.ID, &c.HandoffID, &c.PlanID, &c.ParentID, &c.Anchor.Kind, &anchorID, &c.AnchorLabel,
		&c.Author.UserID, &c.Author.Name, &c.Author.Guest, &c.ShareID, &c.Body,
		&resolved, &c.ResolvedBy, &created, &updated); err != nil {
		return nil, err
	}
	switch c.Anchor.Kind {
	case AnchorPlanSection:
		c.Anchor.ID, c.Anchor.Section = c.PlanID, anchorID
	case AnchorGeneral:
		c.Anchor.ID = c.PlanID
	default:
		c.Anchor.ID = anchorID
	}
	if resolved != "" {
		c.ResolvedAt = parseTime(resolved)
	}
	c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
	return &c, nil
}

func findComment(ctx context.Context, q querier, id string) (*Comment, error) {
	c, err := scanComment(q.QueryRowContext(ctx, `SELECT `+commentColumns+` FROM comments WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("comment %s: %w", id, ErrNotFound)
	}
	return c, err
}

// FindCommentByID returns a comment, with its replies if it starts a
// thread. Returns ErrNotFound if there is none.
func (db *DB) FindCommentByID(ctx context.Context, id string) (*Comment, error) {
	c, err := findComment(ctx, db.read, id)
	if err != nil {
		return nil, err
	}
	if c.ParentID == "" {
		all, err := db.FindComments(ctx, CommentFilter{HandoffID: c.HandoffID, ThreadID: c.ID})
		if err != nil {
			return nil, err
		}
		if len(all) == 1 {
			c = all[0]
		}
	}
	return c, nil
}

// CommentFilter selects threads for FindComments.
type CommentFilter struct {
	HandoffID string // required
	// PlanID, when set, keeps the threads on that plan; NoPlan keeps the
	// threads on the handoff itself. Neither keeps all.
	PlanID string
	NoPlan bool
	// ThreadID keeps one thread.
	ThreadID string
	OpenOnly bool // leave out resolved threads
}

// FindComments returns a handoff's threads, oldest first, each with its
// replies, oldest first.
func (db *DB) FindComments(ctx context.Context, f CommentFilter) ([]*Comment, error) {
	q := `SELECT ` + commentColumns + ` FROM comments WHERE handoff_id = ?`
	args := []any{f.HandoffID}
	thread := `COALESCE(parent_id, id)`
	if f.PlanID != "" {
		q += ` AND plan_id = ?`
		args = append(args, f.PlanID)
	}
	if f.NoPlan {
		q += ` AND plan_id IS NULL`
	}
	if f.ThreadID != "" {
		q += ` AND ` + thread + ` = ?`
		args = append(args, f.ThreadID)
	}
	if f.OpenOnly {
		q += ` AND ` + thread + ` IN (SELECT id FROM comments WHERE handoff_id = ? AND parent_id IS NULL AND resolved_at IS NULL)`
		args = append(args, f.HandoffID)
	}
	q += ` ORDER BY created_at, id`
	rows, err := db.readRows(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("find comments of handoff %s: %w", f.HandoffID, err)
	}
	defer rows.Close()
	var threads []*Comment
	byID := map[string]*Comment{}
	for rows.Next() {
		c, err := scanComment(rows)
		if err != nil {
			return nil, err
		}
		if c.ParentID == "" {
			threads = append(threads, c)
			byID[c.ID] = c
		} else if p := byID[c.ParentID]; p != nil {
			p.Replies = append(p.Replies, c)
		}
	}
	return threads, rows.Err()
}

// CommentCount is how much is said about one anchor.
type CommentCount struct {
	Threads int // threads, resolved or not
	Open    int // open threads
	Total   int // comments, replies included
}

// CountComments returns, by Anchor.Key, how many threads and comments a
// handoff and its plans have.
func (db *DB) CountComments(ctx context.Context, handoffID string) (map[string]CommentCount, error) {
	rows, err := db.readRows(ctx,
		`SELECT t.anchor_kind, t.anchor_id, COALESCE(t.plan_id, ''), t.resolved_at IS NULL,
		        (SELECT COUNT(*) FROM comments r WHERE r.parent_id = t.id)
		 FROM comments t WHERE t.handoff_id = ? AND t.parent_id IS NULL`, handoffID)
	if err != nil {
		return nil, fmt.Errorf("count comments of handoff %s: %w", handoffID, err)
	}
	defer rows.Close()
	out := map[string]CommentCount{}
	for rows.Next() {
		var a Anchor
		var anchorID, planID string
		var open bool
		var replies int
		if err := rows.Scan(&a.Kind, &anchorID, &planID, &open, &replies); err != nil {
			return nil, err
		}
		switch a.Kind {
		case AnchorPlanSection:
			a.ID, a.Section = planID, anchorID
		case AnchorGeneral:
			a.ID = planID
		default:
			a.ID = anchorID
		}
		n := out[a.Key()]
		n.Threads++
		n.Total += 1 + replies
		if open {
			n.Open++
		}
		out[a.Key()] = n
	}
	return out, rows.Err()
}

// UpdateComment changes a comment's body. Only its author may: others get
// EFORBIDDEN. Returns ErrNotFound if there is no such comment.
func (db *DB) UpdateComment(ctx context.Context, id, body string, by Actor) (*Comment, error) {
	var c *Comment
	err := db.inTx(ctx, func(tx *txn) error {
		var err error
		if c, err = findComment(ctx, tx, id); err != nil {
			return err
		}
		if !by.same(c.Author.UserID, c.Author.Guest) {
			return Errorf(EFORBIDDEN, "Only %s can edit this comment.", c.Author.Name)
		}
		if c.Body, err = checkBody(body, true); err != nil {
			return err
		}
		c.UpdatedAt = db.now()
		_, err = tx.ExecContext(ctx, `UPDATE comments SET body = ?, updated_at = ? WHERE id = ?`, c.Body, formatTime(c.UpdatedAt), id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("edit comment %s: %w", id, err)
	}
	return c, nil
}

// DeleteComment removes a comment, and its replies with a thread's first
// comment. Only its author may: others get EFORBIDDEN. Returns ErrNotFound
// if there is no such comment.
func (db *DB) DeleteComment(ctx context.Context, id string, by Actor) (*Comment, error) {
	var c *Comment
	err := db.inTx(ctx, func(tx *txn) error {
		var err error
		if c, err = findComment(ctx, tx, id); err != nil {
			return err
		}
		if !by.same(c.Author.UserID, c.Author.Guest) {
			return Errorf(EFORBIDDEN, "Only %s can delete this comment.", c.Author.Name)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM comments WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("delete comment %s: %w", id, err)
	}
	return c, nil
}

// ResolveComment resolves a thread (resolved true) or reopens it. Replies
// cannot be resolved on their own: EINVALID. Returns ErrNotFound if there
// is no such comment, and the thread with its replies.
func (db *DB) ResolveComment(ctx context.Context, id string, resolved bool, by Actor) (*Comment, error) {
	err := db.inTx(ctx, func(tx *txn) error {
		c, err := findComment(ctx, tx, id)
		if err != nil {
			return err
		}
		if c.ParentID != "" {
			return Errorf(EINVALID, "Resolve the thread, not one of its replies.")
		}
		now := db.now()
		if resolved {
			_, err = tx.ExecContext(ctx, `UPDATE comments SET resolved_at = COALESCE(resolved_at, ?), resolved_by = ? WHERE id = ?`,
				formatTime(now), by.Name, id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE comments SET resolved_at = NULL, resolved_by = '' WHERE id = ?`, id)
		}
		if err != nil {
			return err
		}
		kind := ActivityResolved
		if !resolved {
			kind = ActivityReopened
		}
		return addActivity(ctx, tx, c.HandoffID, kind, by, c.AnchorLabel, now)
	})
	if err != nil {
		return nil, fmt.Errorf("resolve comment %s: %w", id, err)
	}
	return db.FindCommentByID(ctx, id)
}

// PlanSection is a heading of a plan: the unit plan comments anchor to.
type PlanSection struct {
	Slug  string // unique in the plan: "risks", "risks-2"
	Title string
	Level int // 1 for #, 2 for ##, …
}

// PlanSections returns the ATX headings of a plan's markdown in document
// order, outside fenced code, with unique slugs.
func PlanSections(markdown string) []PlanSection {
	var out []PlanSection
	seen := map[string]int{}
	fence := ""
	for line := range strings.SplitSeq(markdown, "\n") {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		level := 0
		for level < len(t) && level < 7 && t[level] == '#' {
			level++
		}
		if level == 0 || level > 6 || (len(t) > level && t[level] != ' ') {
			continue
		}
		title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[level:]), "#"))
		if title == "" {
			continue
		}
		slug := slugify(title)
		seen[slug]++
		if n := seen[slug]; n > 1 {
			slug += "-" + strconv.Itoa(n)
		}
		out = append(out, PlanSection{Slug: slug, Title: title, Level: level})
	}
	return out
}

// slugify keeps letters and digits (lower-cased) and turns runs of
// anything else into one dash.
func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return "section"
	}
	return out
}

// FindItemAnchors returns the anchors of a handoff's decisions, files and
// risks in the order its pages show them, without loading the items.
func (db *DB) FindItemAnchors(ctx context.Context, handoffID string) ([]Anchor, error) {
	rows, err := db.readRows(ctx,
		`SELECT kind, id FROM (
		     SELECT 1 AS k, 'decision' AS kind, id, created_at FROM decisions WHERE handoff_id = ?1
		     UNION ALL SELECT 2, 'file', id, created_at FROM file_refs WHERE handoff_id = ?1
		     UNION ALL SELECT 3, 'risk', id, created_at FROM risks WHERE handoff_id = ?1) AS items
		 ORDER BY k, created_at, id`, handoffID)
	if err != nil {
		return nil, fmt.Errorf("find items of handoff %s: %w", handoffID, err)
	}
	defer rows.Close()
	var out []Anchor
	for rows.Next() {
		var a Anchor
		if err := rows.Scan(&a.Kind, &a.ID); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
