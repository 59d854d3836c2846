package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

var (
	owner = store.Actor{Name: store.LocalOwnerName}
	ana   = store.Actor{UserID: "u-ana", Name: "Ana"}
	guest = store.Actor{Name: "Gail", Guest: true}
)

// reviewFixture is a handoff with one item of each kind and a finished
// plan with two sections, and a second handoff to test anchors against.
type reviewFixture struct {
	db    *store.DB
	h     *store.Handoff
	other *store.Handoff
	plan  *store.Plan
}

func newReviewFixture(t *testing.T) reviewFixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.MustOpen(t)
	planClock(db)
	items := storetest.Items{Title: "review", Decisions: storetest.Decisions("Use SQLite", "Ship weekly"),
		Files:   []store.FileRefInput{{Path: "store/store.go"}},
		Risks:   []store.RiskInput{{Description: "Lock contention"}},
		Summary: "A summary."}
	sn := storetest.FrozenSnapshot(t, db, items)
	h, err := db.FindHandoffByID(ctx, sn.HandoffID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanComplete,
		Markdown: "# Plan\n\n## Steps\n\nDo it (D1).\n\n```\n# not a heading\n```\n\n## Steps\n"}); err != nil {
		t.Fatal(err)
	}
	other := storetest.NewHandoff(t, db, storetest.Items{Title: "other", Decisions: storetest.Decisions("Elsewhere"),
		Files: []store.FileRefInput{{Path: "x.go"}}, Risks: []store.RiskInput{{Description: "r"}}})
	if other, err = db.FindHandoffByID(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	return reviewFixture{db: db, h: h, other: other, plan: p}
}

func TestPlanSections(t *testing.T) {
	got := store.PlanSections("# Plan: v1!\n\n## Steps\ntext\n```go\n## code\n```\n## Steps\n####### seven\n#nospace\n### Risks & roll-back ##\n")
	want := []string{"plan-v1", "steps", "steps-2", "risks-roll-back"}
	if len(got) != len(want) {
		t.Fatalf("PlanSections=%+v, want slugs %v", got, want)
	}
	for i := range want {
		if got[i].Slug != want[i] {
			t.Errorf("section %d slug=%q, want %q", i, got[i].Slug, want[i])
		}
	}
	if got[3].Title != "Risks & roll-back" || got[3].Level != 3 {
		t.Errorf("section 3=%+v, want title %q at level 3", got[3], "Risks & roll-back")
	}
}

func TestCreateComment(t *testing.T) {
	f := newReviewFixture(t)
	ctx := context.Background()
	h, o := f.h, f.other
	tests := []struct {
		name      string
		handoff   string
		anchor    store.Anchor
		body      string
		author    store.Actor
		wantCode  string
		wantLabel string
	}{
		{"decision", h.ID, store.Anchor{Kind: store.AnchorDecision, ID: h.Decisions[1].ID}, "Why weekly?", owner, "", "D2"},
		{"file", h.ID, store.Anchor{Kind: store.AnchorFile, ID: h.Files[0].ID}, "ok", ana, "", "store/store.go"},
		{"risk", h.ID, store.Anchor{Kind: store.AnchorRisk, ID: h.Risks[0].ID}, "ok", guest, "", "Lock contention"},
		{"summary", h.ID, store.Anchor{Kind: store.AnchorSummary}, "ok", owner, "", "Summary"},
		{"general", h.ID, store.Anchor{Kind: store.AnchorGeneral}, "ok", owner, "", "Handoff"},
		{"general on plan", h.ID, store.Anchor{Kind: store.AnchorGeneral, ID: f.plan.ID}, "ok", owner, "", "Plan v1"},
		{"plan section", h.ID, store.Anchor{Kind: store.AnchorPlanSection, ID: f.plan.ID, Section: "steps-2"}, "ok", owner, "", "Steps"},
		{"empty", h.ID, store.Anchor{Kind: store.AnchorSummary}, " \n ", owner, store.EINVALID, ""},
		{"too long", h.ID, store.Anchor{Kind: store.AnchorSummary}, strings.Repeat("é", store.MaxCommentLen+1), owner, store.EINVALID, ""},
		{"longest", h.ID, store.Anchor{Kind: store.AnchorSummary}, strings.Repeat("é", store.MaxCommentLen), owner, "", "Summary"},
		{"bidi override", h.ID, store.Anchor{Kind: store.AnchorSummary}, "a\u202Eb", owner, store.EINVALID, ""},
		{"decision of another handoff", h.ID, store.Anchor{Kind: store.AnchorDecision, ID: o.Decisions[0].ID}, "x", owner, store.EINVALID, ""},
		{"file of another handoff", h.ID, store.Anchor{Kind: store.AnchorFile, ID: o.Files[0].ID}, "x", owner, store.EINVALID, ""},
		{"risk of another handoff", h.ID, store.Anchor{Kind: store.AnchorRisk, ID: o.Risks[0].ID}, "x", owner, store.EINVALID, ""},
		{"plan of another handoff", o.ID, store.Anchor{Kind: store.AnchorPlanSection, ID: f.plan.ID, Section: "steps"}, "x", owner, store.EINVALID, ""},
		{"unknown section", h.ID, store.Anchor{Kind: store.AnchorPlanSection, ID: f.plan.ID, Section: "nope"}, "x", owner, store.EINVALID, ""},
		{"heading in code", h.ID, store.Anchor{Kind: store.AnchorPlanSection, ID: f.plan.ID, Section: "not-a-heading"}, "x", owner, store.EINVALID, ""},
		{"unknown kind", h.ID, store.Anchor{Kind: "line"}, "x", owner, store.EINVALID, ""},
		{"decision without id", h.ID, store.Anchor{Kind: store.AnchorDecision}, "x", owner, store.EINVALID, ""},
		{"unknown decision", h.ID, store.Anchor{Kind: store.AnchorDecision, ID: "nope"}, "x", owner, store.EINVALID, ""},
		{"guest without name", h.ID, store.Anchor{Kind: store.AnchorSummary}, "x", store.Actor{Guest: true}, store.EINVALID, ""},
		{"unknown handoff", "nope", store.Anchor{Kind: store.AnchorSummary}, "x", owner, store.ENOTFOUND, ""},
	}
	stored := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := f.db.CreateComment(ctx, tt.handoff, store.CommentCreate{Anchor: tt.anchor, Body: tt.body, Author: tt.author})
			if got := store.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("code=%q (%v), want %q", got, err, tt.wantCode)
			}
			if err != nil {
				if store.ErrorMessage(err) == store.ErrInternal.Message {
					t.Errorf("message %q says nothing to act on", store.ErrorMessage(err))
				}
				return
			}
			stored++
			if c.AnchorLabel != tt.wantLabel {
				t.Errorf("AnchorLabel=%q, want %q", c.AnchorLabel, tt.wantLabel)
			}
			got, err := f.db.FindCommentByID(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Anchor != c.Anchor || got.Author != tt.author || got.Body != strings.TrimSpace(tt.body) {
				t.Errorf("stored %+v, want anchor %+v author %+v", got, c.Anchor, tt.author)
			}
		})
	}
	all, err := f.db.FindComments(ctx, store.CommentFilter{HandoffID: h.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != stored {
		t.Errorf("%d threads stored, want %d: a refused comment must store nothing", len(all), stored)
	}
	if others, _ := f.db.FindComments(ctx, store.CommentFilter{HandoffID: o.ID}); len(others) != 0 {
		t.Errorf("the other handoff has %d threads, want 0", len(others))
	}
	onPlan, _ := f.db.FindComments(ctx, store.CommentFilter{HandoffID: h.ID, PlanID: f.plan.ID})
	if len(onPlan) != 2 {
		t.Errorf("%d threads on the plan, want 2", len(onPlan))
	}
}

func TestCommentThreads(t *testing.T) {
	f := newReviewFixture(t)
	ctx := context.Background()
	anchor := store.Anchor{Kind: store.AnchorDecision, ID: f.h.Decisions[0].ID}
	c, err := f.db.CreateComment(ctx, f.h.ID, store.CommentCreate{Anchor: anchor, Body: "Why SQLite?", Author: ana})
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.db.CreateReply(ctx, c.ID, "Because one file.", owner, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Anchor != anchor || r.ParentID != c.ID {
		t.Errorf("reply anchor=%+v parent=%q, want %+v and %q", r.Anchor, r.ParentID, anchor, c.ID)
	}
	if _, err := f.db.CreateReply(ctx, r.ID, "deeper", owner, ""); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("reply to a reply: %v, want EINVALID", err)
	}
	if _, err := f.db.CreateReply(ctx, c.ID, "", owner, ""); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("empty reply: %v, want EINVALID", err)
	}
	if _, err := f.db.CreateReply(ctx, "nope", "x", owner, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("reply to unknown: %v, want ErrNotFound", err)
	}

	counts, err := f.db.CountComments(ctx, f.h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := counts[anchor.Key()], (store.CommentCount{Threads: 1, Open: 1, Total: 2}); got != want {
		t.Errorf("count=%+v, want %+v", got, want)
	}

	// Resolve and reopen.
	if _, err := f.db.ResolveComment(ctx, r.ID, true, owner); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("resolving a reply: %v, want EINVALID", err)
	}
	got, err := f.db.ResolveComment(ctx, c.ID, true, owner)
	if err != nil || !got.Resolved() || got.ResolvedBy != "You" || len(got.Replies) != 1 {
		t.Fatalf("resolve=%+v, %v; want resolved by You with its reply", got, err)
	}
	if open, _ := f.db.FindComments(ctx, store.CommentFilter{HandoffID: f.h.ID, OpenOnly: true}); len(open) != 0 {
		t.Errorf("%d open threads after resolving, want 0", len(open))
	}
	if counts, _ := f.db.CountComments(ctx, f.h.ID); counts[anchor.Key()].Open != 0 {
		t.Errorf("open count=%d after resolving, want 0", counts[anchor.Key()].Open)
	}
	if got, err = f.db.ResolveComment(ctx, c.ID, false, owner); err != nil || got.Resolved() {
		t.Fatalf("reopen=%+v, %v; want open", got, err)
	}

	// Only authors edit and delete.
	if _, err := f.db.UpdateComment(ctx, c.ID, "Why not Postgres?", owner); !errors.Is(err, store.ErrForbidden) {
		t.Errorf("owner editing Ana's comment: %v, want ErrForbidden", err)
	}
	if _, err := f.db.UpdateComment(ctx, c.ID, "Why not Postgres?", guest); !errors.Is(err, store.ErrForbidden) {
		t.Errorf("guest editing Ana's comment: %v, want ErrForbidden", err)
	}
	if _, err := f.db.UpdateComment(ctx, c.ID, "", ana); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("editing to empty: %v, want EINVALID", err)
	}
	e, err := f.db.UpdateComment(ctx, c.ID, "Why not Postgres?", ana)
	if err != nil || e.Body != "Why not Postgres?" || !e.Edited() {
		t.Fatalf("edit=%+v, %v", e, err)
	}
	if _, err := f.db.DeleteComment(ctx, c.ID, owner); !errors.Is(err, store.ErrForbidden) {
		t.Errorf("owner deleting Ana's comment: %v, want ErrForbidden", err)
	}
	if _, err := f.db.DeleteComment(ctx, r.ID, owner); err != nil {
		t.Errorf("owner deleting their reply: %v", err)
	}
	if _, err := f.db.DeleteComment(ctx, c.ID, ana); err != nil {
		t.Errorf("Ana deleting her comment: %v", err)
	}
	if _, err := f.db.FindCommentByID(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted comment: %v, want ErrNotFound", err)
	}
}

func TestReviews(t *testing.T) {
	f := newReviewFixture(t)
	ctx := context.Background()
	if err := f.db.RequestReview(ctx, f.h.ID, owner, []store.Actor{ana, {UserID: "u-bo", Name: "Bo"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.db.RequestReview(ctx, f.h.ID, owner, []store.Actor{{Name: "No id"}}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("request of a non-member: %v, want EINVALID", err)
	}
	if err := f.db.RequestReview(ctx, f.h.ID, owner, nil); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("request of nobody: %v, want EINVALID", err)
	}
	if _, err := f.db.CreateReview(ctx, f.h.ID, store.Review{Reviewer: ana, State: store.ReviewChangesRequested, Body: "D2 is vague"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		r    store.Review
		code string
	}{
		{"unknown state", store.Review{Reviewer: ana, State: "lgtm"}, store.EINVALID},
		{"guest", store.Review{Reviewer: guest, State: store.ReviewApproved}, store.EFORBIDDEN},
		{"long body", store.Review{Reviewer: ana, State: store.ReviewApproved, Body: strings.Repeat("x", store.MaxCommentLen+1)}, store.EINVALID},
	} {
		if _, err := f.db.CreateReview(ctx, f.h.ID, tt.r); store.ErrorCode(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
	if _, err := f.db.CreateReview(ctx, "nope", store.Review{Reviewer: ana, State: store.ReviewApproved}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("review of unknown handoff: %v, want ErrNotFound", err)
	}
	states, err := f.db.FindReviewerStates(ctx, f.h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !store.ChangesRequested(states) {
		t.Error("ChangesRequested=false after Ana asked for changes")
	}
	if len(states) != 2 || states[0].Reviewer.Name != "Ana" || states[0].State != store.ReviewChangesRequested || !states[0].Requested ||
		states[1].Reviewer.Name != "Bo" || states[1].State != "" {
		t.Fatalf("states=%+v %+v, want Ana changes_requested and Bo pending", states[0], states[1])
	}
	if _, err := f.db.CreateReview(ctx, f.h.ID, store.Review{Reviewer: ana, State: store.ReviewApproved}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.CreateReview(ctx, f.h.ID, store.Review{Reviewer: owner, State: store.ReviewCommented, Body: "fine"}); err != nil {
		t.Fatal(err)
	}
	states, _ = f.db.FindReviewerStates(ctx, f.h.ID)
	if store.ChangesRequested(states) || len(states) != 3 || states[0].State != store.ReviewApproved || states[2].State != store.ReviewCommented {
		t.Errorf("after approving: %d states, changes requested %v", len(states), store.ChangesRequested(states))
	}

	acts, err := f.db.FindActivity(ctx, f.h.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[store.ActivityKind]int{}
	for _, a := range acts {
		kinds[a.Kind]++
	}
	for k, n := range map[store.ActivityKind]int{store.ActivityReviewRequested: 2, store.ActivityChangesRequested: 1,
		store.ActivityApproved: 1, store.ActivityReviewed: 1, store.ActivityFrozen: 1, store.ActivityPlanned: 1} {
		if kinds[k] != n {
			t.Errorf("%d %s entries, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	for i := 1; i < len(acts); i++ {
		if acts[i].At.After(acts[i-1].At) {
			t.Fatalf("activity not newest first at %d", i)
		}
	}
}

func TestShareLinks(t *testing.T) {
	f := newReviewFixture(t)
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	f.db.SetClock(func() time.Time { return now })
	ws := f.h.WorkspaceID

	for _, tt := range []struct {
		name string
		in   store.ShareCreate
		code string
	}{
		{"bad expiry", store.ShareCreate{HandoffID: f.h.ID, Mode: store.ShareView, ExpiresIn: "2d", By: owner}, store.EINVALID},
		{"bad mode", store.ShareCreate{HandoffID: f.h.ID, Mode: "edit", ExpiresIn: "1d", By: owner}, store.EINVALID},
		{"long label", store.ShareCreate{HandoffID: f.h.ID, Mode: store.ShareView, ExpiresIn: "1d", By: owner, Label: strings.Repeat("x", 101)}, store.EINVALID},
		{"guest", store.ShareCreate{HandoffID: f.h.ID, Mode: store.ShareView, ExpiresIn: "1d", By: guest}, store.EFORBIDDEN},
		{"unknown handoff", store.ShareCreate{HandoffID: "nope", Mode: store.ShareView, ExpiresIn: "1d", By: owner}, store.ENOTFOUND},
		{"unknown plan", store.ShareCreate{PlanID: "nope", Mode: store.ShareView, ExpiresIn: "1d", By: owner}, store.ENOTFOUND},
	} {
		if _, _, err := f.db.CreateShareLink(ctx, tt.in); store.ErrorCode(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
	if links, _ := f.db.FindShareLinks(ctx, store.ShareFilter{WorkspaceID: ws}); len(links) != 0 {
		t.Fatalf("%d links after refused creates, want 0", len(links))
	}

	mk := func(mode store.ShareMode, expires string) (*store.ShareLink, string) {
		l, tok, err := f.db.CreateShareLink(ctx, store.ShareCreate{PlanID: f.plan.ID, Mode: mode, ExpiresIn: expires, Label: " QA ", By: ana})
		if err != nil {
			t.Fatal(err)
		}
		return l, tok
	}
	for _, mode := range []store.ShareMode{store.ShareView, store.ShareReview} {
		valid, validTok := mk(mode, "7d")
		if len(validTok) < 22 || valid.TokenLast4 != validTok[len(validTok)-4:] || valid.HandoffID != f.h.ID || valid.Label != "QA" {
			t.Fatalf("link=%+v token=%q", valid, validTok)
		}
		revoked, revokedTok := mk(mode, "never")
		if _, err := f.db.RevokeShareLink(ctx, ws, revoked.ID); err != nil {
			t.Fatal(err)
		}
		_, expiredTok := mk(mode, "1d")
		for _, tt := range []struct {
			name, token string
			ok          bool
		}{
			{"valid", validTok, true},
			{"revoked", revokedTok, false},
			{"wrong", otherLast(validTok), false},
			{"empty", "", false},
		} {
			l, err := f.db.FindShareLinkByToken(ctx, tt.token)
			if tt.ok && (err != nil || l.ID != valid.ID || l.Mode != mode) {
				t.Errorf("%s %s: %+v, %v", mode, tt.name, l, err)
			}
			if !tt.ok && (!errors.Is(err, store.ErrNotFound) || store.ErrorMessage(err) != store.ErrNotFound.Message) {
				t.Errorf("%s %s: %v, want the one ErrNotFound", mode, tt.name, err)
			}
		}
		now = now.Add(25 * time.Hour)
		if _, err := f.db.FindShareLinkByToken(ctx, expiredTok); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s expired: %v, want ErrNotFound", mode, err)
		}
		if _, err := f.db.FindShareLinkByToken(ctx, validTok); err != nil {
			t.Errorf("%s 7d link after a day: %v", mode, err)
		}
	}
	if _, err := f.db.RevokeShareLink(ctx, "other-workspace", f.h.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoke in another workspace: %v, want ErrNotFound", err)
	}
	links, err := f.db.FindShareLinks(ctx, store.ShareFilter{WorkspaceID: ws})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.RecordShareView(ctx, links[0].ID); err != nil {
		t.Fatal(err)
	}
	links, _ = f.db.FindShareLinks(ctx, store.ShareFilter{WorkspaceID: ws, HandoffID: f.h.ID})
	if len(links) != 6 || links[0].Views != 1 || links[0].LastViewedAt.IsZero() || links[0].CreatedBy != ana {
		t.Errorf("links=%d, first %+v; want 6, one view, by Ana", len(links), links[0])
	}
}

func TestPlanReviewComments(t *testing.T) {
	f := newReviewFixture(t)
	ctx := context.Background()
	c, err := f.db.CreateComment(ctx, f.h.ID, store.CommentCreate{Anchor: store.Anchor{Kind: store.AnchorPlanSection, ID: f.plan.ID, Section: "steps"}, Body: "More detail", Author: owner})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.LinkPlanReviewComments(ctx, f.plan.ID, []string{c.ID, c.ID}); err != nil {
		t.Fatal(err)
	}
	got, err := f.db.FindPlanReviewComments(ctx, f.plan.ID)
	if err != nil || len(got) != 1 || got[0].ID != c.ID {
		t.Fatalf("FindPlanReviewComments=%v, %v; want the one comment", got, err)
	}
}

// otherLast returns tok with its last character replaced by another one,
// so the result never equals tok (a fixed "A" would, one time in 64).
func otherLast(tok string) string {
	last := "A"
	if strings.HasSuffix(tok, "A") {
		last = "B"
	}
	return tok[:len(tok)-1] + last
}
