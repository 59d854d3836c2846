package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestFindReviewPresence adds to a handoff, one list at a time, what each
// list of the review screen shows, and checks that FindReviewPresence
// tells it at once, and nothing of another handoff's lists; and that the
// handoff's ActivityRev moves on with each of them (each is on the
// timeline), and not with another handoff's.
func TestFindReviewPresence(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "baton.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	u, err := db.CreateUser(ctx, UserCreate{Email: "ana@example.com", Name: "Ana", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddMember(ctx, db.DefaultWorkspaceID(), u.ID, RoleOwner); err != nil {
		t.Fatal(err)
	}
	ana := Actor{UserID: u.ID, Name: u.Name}
	newHandoff := func(title string) *Handoff {
		th, err := db.CreateThread(ctx, ThreadCreate{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		h, err := db.EnsureHandoff(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CreateDecision(ctx, h.ID, DecisionCreate{Content: "Use Redis"}, 0); err != nil {
			t.Fatal(err)
		}
		return h
	}
	h, other := newHandoff("Limits"), newHandoff("Other")
	var rev int64 = -1
	check := func(step string, want ReviewPresence) {
		t.Helper()
		got, err := db.FindReviewPresence(ctx, h.ID)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		moved := got.ActivityRev > rev
		if elsewhere := step == "another handoff's comment"; moved == elsewhere {
			t.Errorf("%s: the activity revision went from %d to %d", step, rev, got.ActivityRev)
		}
		rev, got.ActivityRev = got.ActivityRev, 0
		if got != want {
			t.Errorf("%s: %+v, want %+v", step, got, want)
		}
	}
	check("nothing yet", ReviewPresence{})

	// Another handoff's lists do not count.
	if _, err := db.CreateComment(ctx, other.ID, CommentCreate{Anchor: Anchor{Kind: AnchorGeneral}, Body: "elsewhere", Author: ana}); err != nil {
		t.Fatal(err)
	}
	check("another handoff's comment", ReviewPresence{})

	var want ReviewPresence
	if _, err := db.CreateComment(ctx, h.ID, CommentCreate{Anchor: Anchor{Kind: AnchorGeneral}, Body: "Why?", Author: ana}); err != nil {
		t.Fatal(err)
	}
	want.Comments = true
	check("a comment", want)
	if _, err := db.CreateReview(ctx, h.ID, Review{Reviewer: ana, State: ReviewApproved}); err != nil {
		t.Fatal(err)
	}
	want.Reviews = true
	check("a review", want)
	if _, _, err := db.CreateShareLink(ctx, ShareCreate{HandoffID: h.ID, Mode: ShareView, ExpiresIn: "7d", By: ana}); err != nil {
		t.Fatal(err)
	}
	want.Shares = true
	check("a link", want)
	if _, err := db.StartExtractionRun(ctx, h.ID); err != nil {
		t.Fatal(err)
	}
	want.ExtractionRuns = true
	check("an extraction", want)
	cur, err := db.FindHandoffByID(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := db.Freeze(ctx, h.ID, cur.Version)
	if err != nil {
		t.Fatal(err)
	}
	want.Snapshots = true
	check("a snapshot", want)
	if _, err := db.CreatePlan(ctx, sn.ID); err != nil {
		t.Fatal(err)
	}
	want.Plans = true
	check("a plan", want)
}
