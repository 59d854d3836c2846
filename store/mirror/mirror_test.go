package mirror_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/mirror"
	"github.com/baton-dev/baton/store/storetest"
)

// sleeper records the backoff the mirror asks for, without waiting.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) take() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.waits
	s.waits = nil
	return w
}

// accept makes a thread and accepts a handoff of it, queued for the mirror.
func accept(t *testing.T, db *store.DB, title string) *store.ThreadHandoff {
	t.Helper()
	ctx := context.Background()
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	h, created, err := db.AcceptThreadHandoff(ctx, store.ThreadHandoffAccept{
		ID: uuid.NewString(), ParentThreadID: th.ID, Mirror: true,
		Summary:   store.ThreadSummary{Title: title + " (continued)", TLDR: "We chose SQLite.", Model: "offline-rules"},
		SummaryMD: "**TL;DR** We chose SQLite.",
	})
	if err != nil || !created {
		t.Fatalf("AcceptThreadHandoff: created=%v, err=%v", created, err)
	}
	return h
}

// mirrored returns the handoff IDs in thread_summaries, each as often as
// it is there, with the child thread each names in its JSON.
func mirrored(t *testing.T, url string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT handoff_id, summary_json->>'child_thread_id' FROM thread_summaries`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for rows.Next() {
		var id, child string
		if err := rows.Scan(&id, &child); err != nil {
			t.Fatal(err)
		}
		out[id] = append(out[id], child)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMirrorThroughAnOutage(t *testing.T) {
	pg := storetest.NewPostgres(t)
	db := storetest.MustOpen(t)
	ctx := context.Background()
	sl := &sleeper{}
	ticks := make(chan time.Time)
	m, err := mirror.New(mirror.Config{URL: pg.URL, Outbox: db, Logger: slog.New(slog.DiscardHandler), Sleep: sl.sleep,
		Ticker: func(d time.Duration) (<-chan time.Time, func()) {
			if d != mirror.RetryEvery {
				t.Errorf("ticker every %v, want %v", d, mirror.RetryEvery)
			}
			return ticks, func() {}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	// Up: the first handoff goes straight through.
	h1 := accept(t, db, "First")
	if err := m.Drain(ctx); err != nil {
		t.Fatalf("Drain while up: %v", err)
	}
	if got := m.Status(ctx); got.Status != mirror.StatusOK || got.Pending != 0 || got.LastSyncAt == nil {
		t.Fatalf("Status after a copy = %+v, want ok, nothing pending, a sync time", got)
	}
	if got := sl.take(); len(got) != 0 {
		t.Fatalf("waits while up = %v, want none", got)
	}

	// Down: three retries with 1 s, 2 s, 4 s backoff, then degraded; the
	// handoffs wait in the outbox.
	pg.Stop()
	h2 := accept(t, db, "Second")
	if err := m.Drain(ctx); err == nil {
		t.Fatal("Drain while down: no error")
	}
	if got, want := sl.take(), []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; !cmp.Equal(got, want) {
		t.Fatalf("backoff = %v, want %v", got, want)
	}
	st := m.Status(ctx)
	if st.Status != mirror.StatusDegraded || st.Pending != 1 || st.LastError == "" {
		t.Fatalf("Status while down = %+v, want degraded with 1 pending and the error", st)
	}
	h3 := accept(t, db, "Third")
	m.Drain(ctx)
	items, err := db.FindMirrorOutbox(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Handoff.ID != h2.ID || items[0].Attempts != 2 || items[1].Handoff.ID != h3.ID {
		t.Fatalf("outbox while down: %d items, want h2 (2 failed drains) then h3", len(items))
	}

	// Back up: the minute's tick drains what waited, in Run.
	pg.Start()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { m.Run(runCtx); close(done) }()
	ticks <- time.Now() // Run has drained once at start; this tick is a second pass
	deadline := time.Now().Add(20 * time.Second)
	for m.Status(ctx).Pending != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	if st := m.Status(ctx); st.Status != mirror.StatusOK || st.Pending != 0 || st.LastError != "" {
		t.Fatalf("Status after the outage = %+v, want ok with nothing pending", st)
	}

	// A handoff copied twice (an acknowledgement lost) stays one row.
	if err := m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{h1.ID: {h1.ChildThreadID}, h2.ID: {h2.ChildThreadID}, h3.ID: {h3.ChildThreadID}}
	if got := mirrored(t, pg.URL); !cmp.Equal(got, want) {
		t.Fatalf("thread_summaries (-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestMirrorUpsertDoublesNothing(t *testing.T) {
	pg := storetest.NewPostgres(t)
	db := storetest.MustOpen(t)
	ctx := context.Background()
	m, err := mirror.New(mirror.Config{URL: pg.URL, Outbox: db, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h := accept(t, db, "Once")
	if err := m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	// The same handoff queued again, as after a crash between the upsert
	// and the outbox delete.
	if err := db.QueueForMirror(ctx, h.ID); err != nil {
		t.Fatal(err)
	}
	if err := m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mirrored(t, pg.URL); len(got) != 1 || len(got[h.ID]) != 1 {
		t.Fatalf("thread_summaries = %v, want %s once", got, h.ID)
	}
}

func TestMirrorRefusesABadURL(t *testing.T) {
	_, err := mirror.New(mirror.Config{URL: "postgres://x:y@host:notaport/db"})
	if err == nil {
		t.Fatal("New accepted a URL with a bad port")
	}
	if !strings.Contains(err.Error(), "BATON_MIRROR_URL") || strings.Contains(err.Error(), ":y@") {
		t.Fatalf("error %q: want it to name BATON_MIRROR_URL and not show the password", err)
	}
}
