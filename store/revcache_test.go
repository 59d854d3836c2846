package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestKeptReadsFollowEveryWriter checks that the reads pages keep between
// views (message heads, handoff items, timelines: revcache.go) show every
// change on the next read, whoever made it. The changes come through a
// second DB opened on the same database, as another server or the CLI
// would make them, which this DB's caches never hear of: only the
// revisions the database bumps tell them. It also checks that a caller
// changing what it was given does not change what the next one reads.
func TestKeptReadsFollowEveryWriter(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	other := openTwin(t, db)
	check := stepChecker(t)

	// Message heads.
	th, err := db.CreateThread(ctx, ThreadCreate{Title: "Limits"})
	check("create thread", err)
	heads := func() []*Message {
		t.Helper()
		// As the page reads them: the thread, then its heads at the
		// thread's revision; twice, so that the second comes from the cache.
		var got []*Message
		for range 2 {
			page, _, err := db.FindThreadWithReadyState(ctx, th.ID)
			check("find thread", err)
			got, err = db.FindMessageHeadsOf(ctx, page)
			check("find heads", err)
		}
		byID, err := db.FindMessageHeads(ctx, th.ID)
		check("find heads by id", err)
		if len(byID) != len(got) {
			t.Fatalf("FindMessageHeads finds %d heads, FindMessageHeadsOf %d", len(byID), len(got))
		}
		return got
	}
	if got := heads(); len(got) != 0 {
		t.Fatalf("a new thread has %d heads", len(got))
	}
	q, err := other.CreateMessage(ctx, MessageCreate{ThreadID: th.ID, Role: RoleUser, Content: "How do we limit?"})
	check("create message", err)
	a, err := other.CreateMessage(ctx, MessageCreate{ThreadID: th.ID, Role: RoleAssistant, Content: "Use Redis.", ReplyTo: q.ID})
	check("create reply", err)
	if got := heads(); len(got) != 2 || got[0].ID != q.ID || got[1].ID != a.ID || got[1].Pinned {
		t.Fatalf("after two messages elsewhere, heads = %+v", got)
	}
	got := heads()
	got[0].Pinned, got[0].Role = true, RoleAssistant
	if again := heads(); again[0].Pinned || again[0].Role != RoleUser {
		t.Fatalf("changing the heads read changed the next read: %+v", again[0])
	}
	ready := func() ReadyState {
		t.Helper()
		var r ReadyState
		for range 2 { // as above: the second read comes from the cache
			var err error
			_, r, err = db.FindThreadWithReadyState(ctx, th.ID)
			check("find ready state", err)
		}
		if want, err := db.FindReadyState(ctx, th.ID); err != nil || want != r {
			t.Fatalf("FindThreadWithReadyState's ready state %+v, FindReadyState's %+v (%v)", r, want, err)
		}
		return r
	}
	if r := ready(); r.HandoffID != "" {
		t.Fatalf("a thread without a handoff is ready as %+v", r)
	}
	_, _, err = other.PinMessage(ctx, th.ID, a.ID)
	check("pin", err)
	if got := heads(); !got[1].Pinned {
		t.Fatalf("after a pin elsewhere, heads = %+v", got[1])
	}
	if r := ready(); r.HandoffID == "" || r.Pins != 1 {
		t.Fatalf("after a pin elsewhere, the thread is ready as %+v", r)
	}
	q2, err := other.CreateMessage(ctx, MessageCreate{ThreadID: th.ID, Role: RoleUser, Content: "And the burst?"})
	check("create message", err)
	failed, err := other.CreateMessage(ctx, MessageCreate{ThreadID: th.ID, Role: RoleAssistant, Status: StatusFailed, Content: "", ReplyTo: q2.ID})
	check("create failed reply", err)
	if got := heads(); len(got) != 4 || got[3].Status != StatusFailed {
		t.Fatalf("after a failed reply elsewhere, heads = %+v", got)
	}
	check("delete failed reply", other.DeleteFailedReply(ctx, th.ID, failed.ID))
	if got := heads(); len(got) != 3 {
		t.Fatalf("after deleting the failed reply elsewhere, %d heads", len(got))
	}

	// Handoff items: the pin made a handoff with one decision.
	u, err := other.CreateUser(ctx, UserCreate{Email: "ana@example.com", Name: "Ana", Password: "correct horse battery"})
	check("create user", err)
	handoff := func() *Handoff {
		t.Helper()
		var h *Handoff
		for range 2 {
			var err error
			h, err = db.FindHandoffByThread(ctx, th.ID)
			check("find handoff by thread", err)
			byID, err := db.FindHandoffByID(ctx, h.ID)
			check("find handoff by id", err)
			if len(byID.Decisions) != len(h.Decisions) || len(byID.Files) != len(h.Files) {
				t.Fatalf("by id and by thread differ: %+v, %+v", byID, h)
			}
		}
		return h
	}
	h := handoff()
	if len(h.Decisions) != 1 || h.Decisions[0].Content != "Use Redis." {
		t.Fatalf("after the pin, decisions = %+v", h.Decisions)
	}
	_, err = other.StartExtractionRun(ctx, h.ID)
	check("start extraction", err)
	if r := ready(); r.LastRunStatus != RunRunning || r.Pins != 1 {
		t.Fatalf("after an extraction started elsewhere, the thread is ready as %+v", r)
	}
	_, _, err = other.CreateDecision(ctx, h.ID, DecisionCreate{Content: "Answer 429 with Retry-After"}, 0)
	check("create decision", err)
	h = handoff()
	if len(h.Decisions) != 2 || h.Decisions[1].Content != "Answer 429 with Retry-After" || h.Decisions[1].Label != "D2" {
		t.Fatalf("after a decision added elsewhere, decisions = %+v", h.Decisions)
	}
	edited := "Use Valkey"
	_, _, err = other.UpdateDecision(WithActor(ctx, u.ID), h.ID, h.Decisions[0].ID, DecisionUpdate{Content: &edited, Version: h.Version})
	check("update decision", err)
	h = handoff()
	if h.Decisions[0].Content != edited || h.Decisions[0].UpdatedBy != "Ana" {
		t.Fatalf("after an edit elsewhere, D1 = %+v", h.Decisions[0])
	}
	h.Decisions[0].Content, h.Decisions = "changed by a caller", h.Decisions[:1]
	if h = handoff(); h.Decisions[0].Content != edited || len(h.Decisions) != 2 {
		t.Fatalf("changing the handoff read changed the next read: %+v", h.Decisions)
	}
	_, err = other.write.ExecContext(ctx, `UPDATE users SET name = 'Ana Lima' WHERE id = ?`, u.ID)
	check("rename user", err)
	if h = handoff(); h.Decisions[0].UpdatedBy != "Ana Lima" {
		t.Fatalf("after a rename elsewhere, D1 was last changed by %q", h.Decisions[0].UpdatedBy)
	}
	_, err = other.CreateFileRef(ctx, h.ID, FileRefInput{Path: "limit/redis.go", Relevance: LevelHigh}, 0)
	check("create file", err)
	_, err = other.CreateRisk(ctx, h.ID, RiskInput{Description: "Redis down", Severity: LevelHigh}, 0)
	check("create risk", err)
	if h = handoff(); len(h.Files) != 1 || len(h.Risks) != 1 {
		t.Fatalf("after a file and a risk added elsewhere: %+v, %+v", h.Files, h.Risks)
	}
	_, err = other.DeleteDecision(ctx, h.ID, h.Decisions[1].ID, h.Version)
	check("delete decision", err)
	if h = handoff(); len(h.Decisions) != 1 {
		t.Fatalf("after a decision deleted elsewhere, decisions = %+v", h.Decisions)
	}

	// The timeline, as the review panel reads it: at the revision read
	// with the presence of its lists.
	timeline := func() []*Activity {
		t.Helper()
		var got []*Activity
		for range 2 {
			p, err := db.FindReviewPresence(ctx, h.ID)
			check("find presence", err)
			got, err = db.FindActivityAt(ctx, h.ID, p.ActivityRev, 30)
			check("find activity", err)
		}
		plain, err := db.FindActivity(ctx, h.ID, 30)
		check("find activity", err)
		if len(plain) != len(got) {
			t.Fatalf("FindActivity finds %d entries, FindActivityAt %d", len(plain), len(got))
		}
		return got
	}
	kinds := func(acts []*Activity) []ActivityKind {
		var out []ActivityKind
		for _, a := range acts {
			out = append(out, a.Kind)
		}
		return out
	}
	before := kinds(timeline())
	if !slices.Contains(before, ActivityEdited) {
		t.Fatalf("the timeline misses the edit: %v", before)
	}
	_, err = other.CreateComment(ctx, h.ID, CommentCreate{Anchor: Anchor{Kind: AnchorSummary}, Body: "Why Valkey?", Author: Actor{UserID: u.ID, Name: "Ana Lima"}})
	check("create comment", err)
	acts := timeline()
	if len(acts) != len(before)+1 || acts[0].Kind != ActivityCommented {
		t.Fatalf("after a comment elsewhere, the timeline is %v, was %v", kinds(acts), before)
	}
	acts[0].Kind = ActivityShared
	if again := timeline(); again[0].Kind != ActivityCommented {
		t.Fatalf("changing the timeline read changed the next read: %v", kinds(again))
	}
	if _, err := db.FindActivityAt(ctx, "nope", -1, 30); err != nil {
		t.Fatalf("the timeline of no handoff: %v", err)
	}
}

// openTwin opens a second handle on db's database, as another process
// would, closed when t ends.
func openTwin(t *testing.T, db *DB) *DB {
	t.Helper()
	other, err := Open(context.Background(), db.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// stepChecker returns a function that ends t when a named step failed.
func stepChecker(t *testing.T) func(step string, err error) {
	return func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
}

// TestRevCacheKeepsTheLatest checks the cache's own rules: a value is
// only returned at its revision, an older revision never replaces a newer
// one, and a full cache starts over.
func TestRevCacheKeepsTheLatest(t *testing.T) {
	c := newRevCache[string](2)
	c.put("a", 2, "a2")
	if _, ok := c.get("a", 1); ok {
		t.Error("revision 1 answered from revision 2")
	}
	c.put("a", 1, "a1")
	if v, ok := c.get("a", 2); !ok || v != "a2" {
		t.Errorf("after putting revision 1 back, get(a, 2) = %q, %v", v, ok)
	}
	c.put("a", 3, "a3")
	if v, ok := c.get("a", 3); !ok || v != "a3" {
		t.Errorf("get(a, 3) = %q, %v", v, ok)
	}
	c.put("b", 1, "b1")
	c.put("c", 1, "c1")
	if _, ok := c.get("a", 3); ok {
		t.Error("a full cache kept its entries")
	}
	if v, ok := c.get("c", 1); !ok || v != "c1" {
		t.Errorf("get(c, 1) = %q, %v", v, ok)
	}
}

// TestSessionReadsFollowEveryWriter checks that a session, read as every
// page reads it (FindSessionWithWorkspaces: its row on every call, the
// user and their workspaces kept under users.access_rev), shows each
// change to them on the next read when another handle on the same
// database makes it: a role changed, a workspace joined, renamed or left,
// the user renamed, the session switched or ended.
func TestSessionReadsFollowEveryWriter(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	other := openTwin(t, db)
	check := stepChecker(t)
	u, err := other.CreateUser(ctx, UserCreate{Email: "ana@example.com", Name: "Ana", Password: "correct horse battery"})
	check("create user", err)
	check("add member", other.AddMember(ctx, other.DefaultWorkspaceID(), u.ID, RoleEditor))
	sess, secret, err := other.CreateSession(ctx, SessionCreate{UserID: u.ID, WorkspaceID: other.DefaultWorkspaceID(), Lifetime: time.Hour})
	check("create session", err)
	read := func() (*Session, []*Membership) {
		t.Helper()
		var (
			s  *Session
			ms []*Membership
		)
		for range 2 { // the second read comes from the cache when nothing changed
			var err error
			s, ms, err = db.FindSessionWithWorkspaces(ctx, secret)
			check("find session", err)
		}
		return s, ms
	}
	s, ms := read()
	if s.Role != RoleEditor || len(ms) != 1 || s.User.Name != "Ana" {
		t.Fatalf("the new session reads as role %q, %d workspaces, user %q", s.Role, len(ms), s.User.Name)
	}
	s.User.Name, ms[0].Role = "changed by a caller", RoleOwner
	if s, ms = read(); s.User.Name != "Ana" || ms[0].Role != RoleEditor {
		t.Fatalf("changing the session read changed the next read: %q, %q", s.User.Name, ms[0].Role)
	}

	_, err = other.ChangeRole(ctx, other.DefaultWorkspaceID(), u.ID, RoleViewer)
	check("change role", err)
	if s, _ = read(); s.Role != RoleViewer {
		t.Fatalf("after a role change elsewhere, the role is %q", s.Role)
	}
	w, err := other.CreateWorkspace(ctx, "Platform")
	check("create workspace", err)
	check("add member", other.AddMember(ctx, w.ID, u.ID, RoleEditor))
	if _, ms = read(); len(ms) != 2 {
		t.Fatalf("after joining a workspace elsewhere, %d workspaces", len(ms))
	}
	_, err = other.write.ExecContext(ctx, `UPDATE workspaces SET name = 'Infrastructure' WHERE id = ?`, w.ID)
	check("rename workspace", err)
	if _, ms = read(); !slices.ContainsFunc(ms, func(m *Membership) bool { return m.WorkspaceName == "Infrastructure" }) {
		t.Fatalf("after a workspace renamed elsewhere: %+v", ms)
	}
	_, err = other.write.ExecContext(ctx, `UPDATE users SET name = 'Ana Lima' WHERE id = ?`, u.ID)
	check("rename user", err)
	if s, _ = read(); s.User.Name != "Ana Lima" {
		t.Fatalf("after a rename elsewhere, the user is %q", s.User.Name)
	}
	check("switch workspace", other.SetSessionWorkspace(ctx, sess.ID, w.ID))
	if s, _ = read(); s.WorkspaceID != w.ID || s.Role != RoleEditor || s.WorkspaceName != "Infrastructure" {
		t.Fatalf("after a switch elsewhere, the session shows %q as %q", s.WorkspaceName, s.Role)
	}
	check("remove member", other.RemoveMember(ctx, w.ID, u.ID))
	if s, ms = read(); s.WorkspaceID != "" || s.Role != "" || len(ms) != 1 {
		t.Fatalf("after leaving the workspace elsewhere, the session shows %q as %q with %d workspaces", s.WorkspaceID, s.Role, len(ms))
	}
	check("end session", other.EndSession(ctx, sess.ID))
	if _, _, err := db.FindSessionWithWorkspaces(ctx, secret); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("after the session ended elsewhere, reading it gives %v", err)
	}
}
