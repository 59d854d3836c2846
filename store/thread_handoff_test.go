package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// newParent makes a thread with one exchange to hand off.
func newParent(t *testing.T, db *store.DB) *store.Thread {
	t.Helper()
	ctx := context.Background()
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: "Storage"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "SQLite or Postgres?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, ReplyTo: u.ID, Content: "SQLite."}); err != nil {
		t.Fatal(err)
	}
	return th
}

func acceptInput(parentID string) store.ThreadHandoffAccept {
	return store.ThreadHandoffAccept{ID: uuid.NewString(), ParentThreadID: parentID,
		Summary:   store.ThreadSummary{Title: "Storage (continued)", TLDR: "SQLite.", Model: "offline-rules", TokensUsed: 0},
		SummaryMD: "**TL;DR** SQLite."}
}

// reply stores a user message and its complete reply in thread id.
func reply(t *testing.T, db *store.DB, threadID string, status store.MessageStatus) {
	t.Helper()
	ctx := context.Background()
	u, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: threadID, Role: store.RoleUser, Content: "Next?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: threadID, Role: store.RoleAssistant, ReplyTo: u.ID, Content: "Backups.", Status: status}); err != nil {
		t.Fatal(err)
	}
}

func TestAcceptThreadHandoff(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	parent := newParent(t, db)
	in := acceptInput(parent.ID)
	h, created, err := db.AcceptThreadHandoff(ctx, in)
	if err != nil || !created {
		t.Fatalf("AcceptThreadHandoff: created=%v err=%v", created, err)
	}
	child, err := db.FindThreadByID(ctx, h.ChildThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if child.ParentThreadID != parent.ID || child.Title != "Storage (continued)" {
		t.Fatalf("child = %+v, want parent %s and the summary's title", child, parent.ID)
	}
	var sum store.ThreadSummary
	if err := json.Unmarshal([]byte(h.SummaryJSON), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.SchemaVersion != 1 || sum.HandoffID != in.ID || sum.ChildThreadID != child.ID || sum.ParentThreadID != parent.ID ||
		sum.WorkspaceID != parent.WorkspaceID || sum.CreatedAt.IsZero() || sum.Body == nil {
		t.Fatalf("summary_json = %s", h.SummaryJSON)
	}
	if !h.Pending || !h.CleanupRequired || !h.LastCleanupAt.IsZero() {
		t.Fatalf("new handoff block = %+v, want pending and cleanup required", h)
	}
	for name, find := range map[string]func() (*store.ThreadHandoff, error){
		"ByID":    func() (*store.ThreadHandoff, error) { return db.FindThreadHandoffByID(ctx, h.ID) },
		"ByChild": func() (*store.ThreadHandoff, error) { return db.FindThreadHandoffByChild(ctx, child.ID) },
		"Last":    func() (*store.ThreadHandoff, error) { return db.FindLastThreadHandoff(ctx, parent.ID) },
	} {
		got, err := find()
		if err != nil || got.ID != h.ID {
			t.Fatalf("Find%s = %v, %v; want %s", name, got, err, h.ID)
		}
	}
	if _, err := db.FindThreadHandoffByChild(ctx, parent.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindThreadHandoffByChild(parent) err=%v, want ErrNotFound", err)
	}
	if n, _ := db.CountMirrorOutbox(ctx); n != 0 {
		t.Fatalf("outbox holds %d without a mirror, want 0", n)
	}
}

func TestAcceptThreadHandoffBadInput(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	parent := newParent(t, db)
	tests := []struct {
		name string
		edit func(*store.ThreadHandoffAccept)
		want error
		msg  string
	}{
		{"summary over 4,000 characters", func(in *store.ThreadHandoffAccept) { in.SummaryMD = strings.Repeat("x", 4001) }, store.ErrInvalid, "4001 characters"},
		{"blank summary", func(in *store.ThreadHandoffAccept) { in.SummaryMD = " \n " }, store.ErrInvalid, "empty"},
		{"title too long", func(in *store.ThreadHandoffAccept) { in.Summary.Title = strings.Repeat("t", 201) }, store.ErrInvalid, "title"},
		{"unknown thread", func(in *store.ThreadHandoffAccept) { in.ParentThreadID = "nope" }, store.ErrNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := acceptInput(parent.ID)
			tt.edit(&in)
			_, _, err := db.AcceptThreadHandoff(ctx, in)
			if !errors.Is(err, tt.want) || !strings.Contains(store.ErrorMessage(err), tt.msg) {
				t.Fatalf("err=%v, want %v saying %q", err, tt.want, tt.msg)
			}
			threads, _ := db.FindThreads(ctx, store.ThreadFilter{})
			if len(threads) != 1 {
				t.Fatalf("%d threads after a refused accept, want 1", len(threads))
			}
		})
	}
	// An edited summary of exactly 4,000 characters is fine.
	in := acceptInput(parent.ID)
	in.SummaryMD = strings.Repeat("é", store.MaxThreadSummaryChars)
	if _, _, err := db.AcceptThreadHandoff(ctx, in); err != nil {
		t.Fatalf("4,000 characters: %v", err)
	}
}

func TestAcceptThreadHandoffConcurrently(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	parent := newParent(t, db)
	in := acceptInput(parent.ID)
	in.Mirror = true
	var wg sync.WaitGroup
	results := make([]*store.ThreadHandoff, 8)
	createdCount := make([]bool, 8)
	for i := range results {
		wg.Go(func() {
			h, created, err := db.AcceptThreadHandoff(ctx, in)
			if err != nil {
				t.Error(err)
				return
			}
			results[i], createdCount[i] = h, created
		})
	}
	wg.Wait()
	var created int
	for i, h := range results {
		if h == nil || h.ChildThreadID != results[0].ChildThreadID {
			t.Fatalf("accept %d gave %+v, want child %s like the first", i, h, results[0].ChildThreadID)
		}
		if createdCount[i] {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d accepts created a child, want 1", created)
	}
	threads, _ := db.FindThreads(ctx, store.ThreadFilter{})
	if len(threads) != 2 {
		t.Fatalf("%d threads, want the parent and one child", len(threads))
	}
	if n, _ := db.CountMirrorOutbox(ctx); n != 1 {
		t.Fatalf("outbox holds %d, want 1", n)
	}
	// The same ID for another thread is a conflict.
	other := newParent(t, db)
	in.ParentThreadID = other.ID
	if _, _, err := db.AcceptThreadHandoff(ctx, in); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("same ID, other thread: err=%v, want ErrConflict", err)
	}
}

func TestThreadHandoffCleanupOnce(t *testing.T) {
	path := storetest.FreshDSN(t)
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	parent := newParent(t, db)
	h, _, err := db.AcceptThreadHandoff(ctx, acceptInput(parent.ID))
	if err != nil {
		t.Fatal(err)
	}
	child := h.ChildThreadID

	// Before any reply, and after a failed or stopped one, the summary is due.
	if got, err := db.FindPendingThreadSummary(ctx, child); err != nil || got.ID != h.ID {
		t.Fatalf("pending before a reply: %v, %v", got, err)
	}
	if cleared, _ := db.CleanupThreadHandoff(ctx, child); cleared {
		t.Fatal("cleanup without a reply cleared the block")
	}
	reply(t, db, child, store.StatusFailed)
	reply(t, db, child, store.StatusStopped)
	if _, err := db.FindPendingThreadSummary(ctx, child); err != nil {
		t.Fatalf("pending after a failed and a stopped reply: %v", err)
	}

	// The first complete reply is saved, then the process stops before
	// the cleanup: the block still says pending.
	reply(t, db, child, store.StatusComplete)
	if got, _ := db.FindThreadHandoffByID(ctx, h.ID); !got.Pending || !got.CleanupRequired {
		t.Fatalf("before the cleanup: %+v", got)
	}
	db.Close()

	// A restart: the sweep clears it once; the next call does not carry it.
	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.CleanupThreadHandoffs(ctx); err != nil || n != 1 {
		t.Fatalf("CleanupThreadHandoffs = %d, %v; want 1", n, err)
	}
	after, _ := db.FindThreadHandoffByID(ctx, h.ID)
	if after.Pending || after.CleanupRequired || after.LastCleanupAt.IsZero() {
		t.Fatalf("after the cleanup: %+v", after)
	}
	if _, err := db.FindPendingThreadSummary(ctx, child); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pending after the cleanup: err=%v, want ErrNotFound", err)
	}

	// A second reply and more cleanups change nothing.
	reply(t, db, child, store.StatusComplete)
	if cleared, _ := db.CleanupThreadHandoff(ctx, child); cleared {
		t.Fatal("a second cleanup cleared again")
	}
	if n, _ := db.CleanupThreadHandoffs(ctx); n != 0 {
		t.Fatalf("a second sweep cleared %d", n)
	}
	again, _ := db.FindThreadHandoffByID(ctx, h.ID)
	if !again.LastCleanupAt.Equal(after.LastCleanupAt) {
		t.Fatalf("last_cleanup_at moved from %v to %v", after.LastCleanupAt, again.LastCleanupAt)
	}
}

func TestFindPendingThreadSummaryCleansUpAfterACrash(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	h, _, err := db.AcceptThreadHandoff(ctx, acceptInput(newParent(t, db).ID))
	if err != nil {
		t.Fatal(err)
	}
	// The reply was saved, the cleanup never ran, and no sweep either.
	reply(t, db, h.ChildThreadID, store.StatusComplete)
	if _, err := db.FindPendingThreadSummary(ctx, h.ChildThreadID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err=%v, want ErrNotFound: the thread has its reply", err)
	}
	if got, _ := db.FindThreadHandoffByID(ctx, h.ID); got.CleanupRequired || got.LastCleanupAt.IsZero() {
		t.Fatalf("block not cleared on the way: %+v", got)
	}
}

func TestAcceptedThreadHandoffCountsTowardTheBudget(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	parent := newParent(t, db)
	before, err := db.TokensUsed(ctx, parent.WorkspaceID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	in := acceptInput(parent.ID)
	in.Summary.TokensUsed = 420
	if _, _, err := db.AcceptThreadHandoff(ctx, in); err != nil {
		t.Fatal(err)
	}
	if after, _ := db.TokensUsed(ctx, parent.WorkspaceID, time.Time{}); after-before != 420 {
		t.Fatalf("TokensUsed grew by %d, want the summary's 420", after-before)
	}
}
