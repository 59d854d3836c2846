package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// TestFindThreadHandoffsOf checks the one-statement read of a thread's
// handoffs against FindThreadHandoffByChild, FindLastThreadHandoff and
// FindThreadByID: a chain A → B → C with a second, later handoff B → D,
// then with D and A deleted.
func TestFindThreadHandoffsOf(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	a := newParent(t, db)
	accept := func(parentID string) *store.ThreadHandoff {
		t.Helper()
		h, _, err := db.AcceptThreadHandoff(ctx, acceptInput(parentID))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ab := accept(a.ID)
	reply(t, db, ab.ChildThreadID, store.StatusComplete)
	accept(ab.ChildThreadID) // B → C
	bd := accept(ab.ChildThreadID)

	want := func(threadID string) store.ThreadHandoffs {
		t.Helper()
		var w store.ThreadHandoffs
		if in, err := db.FindThreadHandoffByChild(ctx, threadID); err == nil {
			w.In = in
			if p, err := db.FindThreadByID(ctx, in.ParentThreadID); err == nil {
				w.ParentTitle = p.Title
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		if out, err := db.FindLastThreadHandoff(ctx, threadID); err == nil {
			w.Out = out
			if c, err := db.FindThreadByID(ctx, out.ChildThreadID); err == nil {
				w.ChildTitle = c.Title
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		return w
	}
	check := func(step, threadID string) store.ThreadHandoffs {
		t.Helper()
		got, err := db.FindThreadHandoffsOf(ctx, threadID)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if diff := cmp.Diff(want(threadID), got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step, diff)
		}
		return got
	}
	check("A", a.ID)
	if got := check("B", ab.ChildThreadID); got.In == nil || got.Out == nil || got.Out.ID != bd.ID || got.ParentTitle == "" || got.ChildTitle == "" {
		t.Errorf("B: %+v, want both ends, the latest out and both titles", got)
	}
	check("D", bd.ChildThreadID)
	if err := db.DeleteThread(ctx, bd.ChildThreadID); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteThread(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	check("B, both ends deleted", ab.ChildThreadID)
}
