package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindThreadWithReadyState checks the one-statement read against
// FindThreadByID and FindReadyState: a thread without a handoff, with one
// and pins, after a failed and a newer extraction, and a deleted thread.
func TestFindThreadWithReadyState(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "baton.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	th, err := db.CreateThread(ctx, ThreadCreate{Title: "Limits"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		wantT, err := db.FindThreadByID(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantR, err := db.FindReadyState(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		gotT, gotR, err := db.FindThreadWithReadyState(ctx, th.ID)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if diff := cmp.Diff(wantT, gotT); diff != "" {
			t.Errorf("%s: thread (-FindThreadByID +got):\n%s", step, diff)
		}
		if gotR != wantR {
			t.Errorf("%s: ready state %+v, want %+v", step, gotR, wantR)
		}
	}
	check("no handoff")
	u, err := db.CreateMessage(ctx, MessageCreate{ThreadID: th.ID, Role: RoleUser, Content: "Limits?"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.CreateMessage(ctx, MessageCreate{ThreadID: th.ID, Role: RoleAssistant, Content: "Per key.", ReplyTo: u.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.PinMessage(ctx, th.ID, m.ID); err != nil {
		t.Fatal(err)
	}
	check("a pin")
	h, err := db.FindHandoffByThread(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	run, err := db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FailExtractionRun(ctx, run.ID, RunFailed, "the model is down"); err != nil {
		t.Fatal(err)
	}
	check("a failed extraction")
	if _, err := db.StartExtractionRun(ctx, h.ID); err != nil {
		t.Fatal(err)
	}
	check("a newer extraction")
	if err := db.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.FindThreadWithReadyState(ctx, th.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a deleted thread: %v, want ErrNotFound", err)
	}
}
