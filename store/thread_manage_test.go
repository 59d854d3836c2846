package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

func TestUpdateThread(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "Use JWT.")

	got, err := db.UpdateThread(ctx, b.thread.ID, store.ThreadUpdate{Title: ptr("  JWT   migration ")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "JWT migration" || !got.ArchivedAt.IsZero() {
		t.Fatalf("renamed: %q archived %v, want %q, not archived", got.Title, got.ArchivedAt, "JWT migration")
	}

	if got, err = db.UpdateThread(ctx, b.thread.ID, store.ThreadUpdate{Archived: ptr(true)}); err != nil || got.ArchivedAt.IsZero() {
		t.Fatalf("archive: %v, ArchivedAt %v", err, got.ArchivedAt)
	}
	listed := func(archived bool) int {
		ts, err := db.FindThreads(ctx, store.ThreadFilter{Archived: archived})
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}
	if listed(false) != 0 || listed(true) != 1 {
		t.Fatalf("archived thread listed %d times among the others and %d among the archived, want 0 and 1", listed(false), listed(true))
	}
	if got, err = db.UpdateThread(ctx, b.thread.ID, store.ThreadUpdate{Archived: ptr(false)}); err != nil || !got.ArchivedAt.IsZero() {
		t.Fatalf("unarchive: %v, ArchivedAt %v", err, got.ArchivedAt)
	}
	if got.Title != "JWT migration" {
		t.Fatalf("title=%q after unarchiving, want it kept", got.Title)
	}

	for _, tt := range []struct {
		name string
		in   store.ThreadUpdate
		want error
	}{
		{"empty title", store.ThreadUpdate{Title: ptr("   ")}, store.ErrInvalid},
		{"long title", store.ThreadUpdate{Title: ptr(strings.Repeat("x", store.MaxTitleLen+1))}, store.ErrInvalid},
	} {
		if _, err := db.UpdateThread(ctx, b.thread.ID, tt.in); !errors.Is(err, tt.want) {
			t.Errorf("%s: err=%v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := db.UpdateThread(ctx, "nope", store.ThreadUpdate{Title: ptr("x")}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown thread: err=%v, want ErrNotFound", err)
	}
}

func TestDeleteThread(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)

	t.Run("draft only: everything goes", func(t *testing.T) {
		b := newBrainstorm(t, db, "Use JWT.")
		d, _, err := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteThread(ctx, b.thread.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindThreadByIDIncludingDeleted(ctx, b.thread.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("thread after delete: err=%v, want ErrNotFound", err)
		}
		if _, err := db.FindHandoffByID(ctx, d.HandoffID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("draft handoff after delete: err=%v, want ErrNotFound", err)
		}
		if err := db.DeleteThread(ctx, b.thread.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete again: err=%v, want ErrNotFound", err)
		}
	})

	t.Run("frozen: snapshots and plans stay", func(t *testing.T) {
		b := newBrainstorm(t, db, "Use JWT.")
		d, _, err := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
		if err != nil {
			t.Fatal(err)
		}
		sn, err := db.Freeze(ctx, d.HandoffID, 0)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := db.CreatePlan(ctx, sn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteThread(ctx, b.thread.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindThreadByID(ctx, b.thread.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("FindThreadByID after delete: err=%v, want ErrNotFound", err)
		}
		tomb, err := db.FindThreadByIDIncludingDeleted(ctx, b.thread.ID)
		if err != nil || tomb.DeletedAt.IsZero() || tomb.Title != "Auth" {
			t.Fatalf("tombstone %+v, %v; want the title kept and DeletedAt set", tomb, err)
		}
		if msgs, _ := db.FindMessages(ctx, store.MessageFilter{ThreadID: b.thread.ID}); len(msgs) != 0 {
			t.Fatalf("%d messages left, want none", len(msgs))
		}
		if h := mustHandoff(t, db, d.HandoffID); len(h.Decisions) != 0 {
			t.Fatalf("%d draft decisions left, want none", len(h.Decisions))
		}
		if got, err := db.FindSnapshotByID(ctx, sn.ID); err != nil || got.SHA256 != sn.SHA256 {
			t.Fatalf("snapshot after delete: %v", err)
		}
		if _, err := db.FindPlanByID(ctx, plan.ID); err != nil {
			t.Fatalf("plan after delete: %v", err)
		}
		ts, _ := db.FindThreads(ctx, store.ThreadFilter{})
		hs, _ := db.FindRecentHandoffs(ctx, "", 10)
		for _, th := range ts {
			if th.ID == b.thread.ID {
				t.Fatal("a deleted thread is listed")
			}
		}
		for _, h := range hs {
			if h.ThreadID == b.thread.ID {
				t.Fatal("a deleted thread's handoff is listed")
			}
		}
	})
}
