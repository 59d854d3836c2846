package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	t.Run("creates folder and default workspace, stable across reopen", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nested", "baton.db")
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		ws := db.DefaultWorkspaceID()
		db.Close()
		db, err = store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if got := db.DefaultWorkspaceID(); got != ws {
			t.Fatalf("DefaultWorkspaceID=%q after reopen, want %q", got, ws)
		}
	})
	t.Run("not a sqlite file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "junk.db")
		os.WriteFile(path, []byte(strings.Repeat("this is not a database\n", 400)), 0o644)
		_, err := store.Open(ctx, path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a SQLite database") {
			t.Fatalf("err=%v, want one naming %s and 'not a SQLite database'", err, path)
		}
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		_, err := store.Open(ctx, dir)
		if err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("err=%v, want one naming %s", err, dir)
		}
	})
	t.Run("unwritable folder", func(t *testing.T) {
		if os.Geteuid() == 0 {
			// root writes anywhere; use a path under a regular file instead.
			f := filepath.Join(t.TempDir(), "file")
			os.WriteFile(f, nil, 0o644)
			_, err := store.Open(ctx, filepath.Join(f, "baton.db"))
			if err == nil || !strings.Contains(err.Error(), f) {
				t.Fatalf("err=%v, want one naming the path", err)
			}
			return
		}
		dir := t.TempDir()
		os.Chmod(dir, 0o500)
		_, err := store.Open(ctx, filepath.Join(dir, "baton.db"))
		if err == nil {
			t.Fatal("err=nil, want an error for a read-only folder")
		}
	})
}

func TestThreadsAndMessages(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)

	a, err := db.CreateThread(ctx, store.ThreadCreate{Title: "  Auth   rewrite "})
	if err != nil {
		t.Fatal(err)
	}
	if a.Title != "Auth rewrite" {
		t.Fatalf("Title=%q, want %q", a.Title, "Auth rewrite")
	}
	b, err := db.CreateThread(ctx, store.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Title != store.DefaultThreadTitle {
		t.Fatalf("Title=%q, want %q", b.Title, store.DefaultThreadTitle)
	}

	// A message makes its thread the most recent one.
	u, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: a.ID, Role: store.RoleUser, Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: a.ID, Role: store.RoleAssistant,
		Content: "hi", ReplyTo: u.ID, Model: "m", InputTokens: 3, OutputTokens: 1}); err != nil {
		t.Fatal(err)
	}
	threads, err := db.FindThreads(ctx, store.ThreadFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) != 2 || threads[0].ID != a.ID || threads[0].MessageCount != 2 {
		t.Fatalf("FindThreads: first=%v, want thread %s with 2 messages first", threads[0], a.ID)
	}

	// Ordering and Last.
	for i := range 5 {
		if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: b.ID, Role: store.RoleUser, Content: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ := db.FindMessages(ctx, store.MessageFilter{ThreadID: b.ID, Last: 3})
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content)
	}
	if strings.Join(got, ",") != "2,3,4" {
		t.Fatalf("Last 3=%v, want [2 3 4]", got)
	}

	// A second reply to the same user message is refused.
	_, err = db.CreateMessage(ctx, store.MessageCreate{ThreadID: a.ID, Role: store.RoleAssistant, Content: "again", ReplyTo: u.ID})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second reply err=%v, want ErrConflict", err)
	}
}

func TestMessageValidation(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	th, _ := db.CreateThread(ctx, store.ThreadCreate{Title: "t"})
	tests := []struct {
		name string
		in   store.MessageCreate
		want error
	}{
		{"empty", store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: ""}, store.ErrInvalid},
		{"whitespace", store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: " \n\t "}, store.ErrInvalid},
		{"too long", store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: strings.Repeat("x", 32<<10+1)}, store.ErrInvalid},
		{"bad role", store.MessageCreate{ThreadID: th.ID, Role: "system", Content: "x"}, store.ErrInvalid},
		{"unknown thread", store.MessageCreate{ThreadID: "nope", Role: store.RoleUser, Content: "x"}, store.ErrNotFound},
		{"unknown reply_to", store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, Content: "x", ReplyTo: "nope"}, store.ErrNotFound},
		{"at the limit", store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: strings.Repeat("x", 32<<10)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.CreateMessage(ctx, tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err=%v, want %v", err, tt.want)
			}
		})
	}
	msgs, _ := db.FindMessages(ctx, store.MessageFilter{ThreadID: th.ID})
	if len(msgs) != 1 {
		t.Fatalf("stored %d messages, want only the valid one", len(msgs))
	}
	if _, err := db.FindThreadByID(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindThreadByID err=%v, want ErrNotFound", err)
	}
	if _, err := db.CreateThread(ctx, store.ThreadCreate{Title: strings.Repeat("t", 201)}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("long title err=%v, want ErrInvalid", err)
	}
	if _, err := db.CreateThread(ctx, store.ThreadCreate{Title: "x", ParentThreadID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown parent err=%v, want ErrNotFound", err)
	}
}

func TestDeleteFailedReply(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	th, _ := db.CreateThread(ctx, store.ThreadCreate{Title: "t"})
	u, _ := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "q"})
	ok, _ := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, Content: "a", ReplyTo: u.ID})
	if err := db.DeleteFailedReply(ctx, th.ID, ok.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting a complete reply: err=%v, want ErrNotFound", err)
	}
	if err := db.DeleteFailedReply(ctx, th.ID, u.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting a user message: err=%v, want ErrNotFound", err)
	}
	u2, _ := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "q2"})
	failed, _ := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant,
		Status: store.StatusFailed, Error: "boom", ReplyTo: u2.ID})
	if err := db.DeleteFailedReply(ctx, th.ID, failed.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindMessageByID(ctx, th.ID, failed.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed reply still there: err=%v", err)
	}
}

// TestConcurrentWriters checks that busy handling keeps SQLITE_BUSY away
// from callers when several goroutines write at once.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	th, _ := db.CreateThread(ctx, store.ThreadCreate{Title: "t"})
	var wg sync.WaitGroup
	errs := make(chan error, 2*8*25) // room for every call to fail, so that no writer blocks
	for w := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser,
					Content: fmt.Sprintf("w%d-%d", w, i)}); err != nil {
					errs <- err
				}
				if _, err := db.FindMessages(ctx, store.MessageFilter{ThreadID: th.ID, Last: 5}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent write: %v", err)
	}
	msgs, _ := db.FindMessages(ctx, store.MessageFilter{ThreadID: th.ID})
	if len(msgs) != 200 {
		t.Fatalf("stored %d messages, want 200", len(msgs))
	}
}

func TestSettings(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	if _, err := db.Setting(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err=%v, want ErrNotFound", err)
	}
	v, _ := db.EnsureSetting(ctx, "k", "first")
	v2, _ := db.EnsureSetting(ctx, "k", "second")
	if v != "first" || v2 != "first" {
		t.Fatalf("EnsureSetting=%q,%q, want first,first", v, v2)
	}
}
