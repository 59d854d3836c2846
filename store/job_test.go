package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// onBothEngines runs test against a fresh SQLite database and a fresh
// PostgreSQL 15 one. PostgreSQL is skipped while its schema migration is
// still the placeholder that the schema work replaces.
func onBothEngines(t *testing.T, test func(t *testing.T, db *store.DB, clock *jobClock)) {
	t.Run("sqlite", func(t *testing.T) {
		db := storetest.MustOpen(t)
		test(t, db, newJobClock(db))
	})
	t.Run("postgres", func(t *testing.T) {
		skipWithoutPostgresSchema(t)
		db := openPostgres(t, storetest.StartPostgres(t))
		test(t, db, newJobClock(db))
	})
}

// skipWithoutPostgresSchema skips a test while the PostgreSQL schema is
// the placeholder that the schema work replaces: no store opens on it.
func skipWithoutPostgresSchema(t *testing.T) {
	t.Helper()
	if schema, err := os.ReadFile("migrations/postgres/00001_schema.sql"); err == nil && strings.Contains(string(schema), "(placeholder)") {
		t.Skip("the PostgreSQL schema (migrations/postgres/00001_schema.sql) is still a placeholder")
	}
}

// openPostgres opens the PostgreSQL database at url for a test.
func openPostgres(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// jobClock is a store clock that tests move forward.
type jobClock struct {
	mu  sync.Mutex
	now time.Time
}

func newJobClock(dbs ...*store.DB) *jobClock {
	c := &jobClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, db := range dbs {
		db.SetClock(c.Now)
	}
	return c
}

func (c *jobClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jobClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const testLease = 30 * time.Second

func claim(t *testing.T, db *store.DB, key, instance string) *store.Job {
	t.Helper()
	j, err := db.ClaimJob(context.Background(), store.JobClaim{Key: key, Kind: "plan", Instance: instance, Lease: testLease})
	if err != nil {
		t.Fatalf("claim %s on %s: %v", key, instance, err)
	}
	return j
}

func TestJobClaimIsSingleFlightAndExpires(t *testing.T) {
	onBothEngines(t, func(t *testing.T, db *store.DB, clock *jobClock) {
		ctx := context.Background()
		a := claim(t, db, "plan:1", "instance-a")
		if a.State != store.JobRunning || a.Instance != "instance-a" || a.Previous != nil {
			t.Fatalf("claimed %+v", a)
		}
		_, err := db.ClaimJob(ctx, store.JobClaim{Key: "plan:1", Kind: "plan", Instance: "instance-b", Lease: testLease})
		if !errors.Is(err, store.ErrConflict) || !strings.Contains(store.ErrorMessage(err), "instance-a") {
			t.Fatalf("second claim: err=%v, want ECONFLICT naming instance-a", err)
		}
		claim(t, db, "plan:2", "instance-b") // another key is free

		// The heartbeat keeps the lease alive past its first expiry.
		clock.Add(testLease - time.Second)
		if renewed, err := db.RenewJobs(ctx, "instance-a", []string{a.ID}, testLease); err != nil || len(renewed) != 1 {
			t.Fatalf("renew: %d jobs, err=%v, want 1", len(renewed), err)
		}
		clock.Add(testLease - time.Second)
		if _, err := db.ClaimJob(ctx, store.JobClaim{Key: "plan:1", Kind: "plan", Instance: "instance-b", Lease: testLease}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("claim of a renewed lease: err=%v, want ECONFLICT", err)
		}

		// Without it, the lease expires and the key is taken over.
		clock.Add(2 * time.Second)
		b := claim(t, db, "plan:1", "instance-b")
		if b.ID == a.ID || b.Previous == nil || b.Previous.ID != a.ID || b.Previous.Instance != "instance-a" {
			t.Fatalf("takeover %+v (previous %+v), want a new job naming %s as previous", b, b.Previous, a.ID)
		}
		// The old instance has lost it: no renewal, no end.
		if renewed, err := db.RenewJobs(ctx, "instance-a", []string{a.ID}, testLease); err != nil || len(renewed) != 0 {
			t.Fatalf("renew a lost job: %d jobs, err=%v, want none", len(renewed), err)
		}
		if held, err := db.EndJob(ctx, a.ID, "instance-a", store.JobOutcome{}, time.Minute); err != nil || held {
			t.Fatalf("end a lost job: held=%v err=%v, want false", held, err)
		}
		got, err := db.FindJob(ctx, "plan:1")
		if err != nil || got.ID != b.ID || got.Instance != "instance-b" || !got.Live() {
			t.Fatalf("FindJob = %+v, %v; want B's running job", got, err)
		}
	})
}

func TestJobCancelWatchAndEvents(t *testing.T) {
	onBothEngines(t, func(t *testing.T, db *store.DB, clock *jobClock) {
		ctx := context.Background()
		j := claim(t, db, "reply:1", "instance-a")
		if err := db.SetJobRef(ctx, j.ID, "message-1"); err != nil {
			t.Fatal(err)
		}

		// A cancel request reaches the owner with its next renewal.
		if got, err := db.RequestJobCancel(ctx, j.ID, "stopped by the user"); err != nil || got.Instance != "instance-a" || got.Ref != "message-1" {
			t.Fatalf("RequestJobCancel = %+v, %v", got, err)
		}
		if _, err := db.RequestJobCancel(ctx, j.ID, "the page was closed"); err != nil {
			t.Fatal(err)
		}
		renewed, err := db.RenewJobs(ctx, "instance-a", []string{j.ID}, testLease)
		if err != nil || len(renewed) != 1 || renewed[0].Cancel != "stopped by the user" {
			t.Fatalf("renewed %v, err=%v; want the first cancel request", renewed, err)
		}

		// Watching lasts its time to live.
		if d, err := db.JobWatchedFor(ctx, j.ID); err != nil || d != 0 {
			t.Fatalf("watched for %v, %v before anyone watched", d, err)
		}
		if err := db.WatchJob(ctx, j.ID, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if d, err := db.JobWatchedFor(ctx, j.ID); err != nil || d != 10*time.Second {
			t.Fatalf("watched for %v, %v; want 10s", d, err)
		}
		clock.Add(11 * time.Second)
		if d, _ := db.JobWatchedFor(ctx, j.ID); d != 0 {
			t.Fatalf("watched for %v after the time to live", d)
		}

		// Events are read after a number, in order.
		var events []store.JobEvent
		for i := 1; i <= 5; i++ {
			events = append(events, store.JobEvent{Seq: int64(i), Name: "delta", Data: fmt.Sprintf("<%d>", i)})
		}
		if err := db.AppendJobEvents(ctx, j.ID, events[:3]); err != nil {
			t.Fatal(err)
		}
		if err := db.AppendJobEvents(ctx, j.ID, events[3:]); err != nil {
			t.Fatal(err)
		}
		got, err := db.JobEvents(ctx, j.ID, 2)
		if err != nil || len(got) != 3 || got[0] != events[2] || got[2] != events[4] {
			t.Fatalf("events after 2: %v, %v; want 3, 4, 5", got, err)
		}

		// An ended job says how it ended, keeps its events for late
		// followers, then is purged; its key is free at once.
		if held, err := db.EndJob(ctx, j.ID, "instance-a", store.JobOutcome{Error: "stopped", ErrorCode: store.EINTERNAL, Cancelled: true}, time.Minute); err != nil || !held {
			t.Fatalf("EndJob: held=%v err=%v", held, err)
		}
		ended, err := db.FindJob(ctx, "reply:1")
		if err != nil || ended.Live() || ended.Error != "stopped" || ended.ErrorCode != store.EINTERNAL || !ended.Cancelled {
			t.Fatalf("ended job %+v, %v", ended, err)
		}
		if got, _ := db.JobEvents(ctx, j.ID, 0); len(got) != 5 {
			t.Fatalf("%d events after the end, want 5 kept", len(got))
		}
		if n, err := db.PurgeEndedJobs(ctx); err != nil || n != 0 {
			t.Fatalf("purge before the keep: %d, %v", n, err)
		}
		clock.Add(time.Minute + time.Second)
		if n, err := db.PurgeEndedJobs(ctx); err != nil || n != 1 {
			t.Fatalf("purge after the keep: %d, %v; want 1", n, err)
		}
		if got, _ := db.JobEvents(ctx, j.ID, 0); len(got) != 0 {
			t.Fatalf("%d events after the purge, want none", len(got))
		}
		if _, err := db.FindJob(ctx, "reply:1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("FindJob after the purge: %v, want ErrNotFound", err)
		}

		// A key whose job ended runs again at once, with fresh events.
		again := claim(t, db, "extract:1", "instance-a")
		if err := db.AppendJobEvents(ctx, again.ID, events[:1]); err != nil {
			t.Fatal(err)
		}
		if _, err := db.EndJob(ctx, again.ID, "instance-a", store.JobOutcome{}, time.Minute); err != nil {
			t.Fatal(err)
		}
		third := claim(t, db, "extract:1", "instance-b")
		if third.Previous != nil {
			t.Fatalf("claim after an end names %+v as previous, want none", third.Previous)
		}
		if got, _ := db.JobEvents(ctx, again.ID, 0); len(got) != 0 {
			t.Fatalf("the ended job's events survived a new claim: %v", got)
		}
	})
}

func TestJobRecoverExpiredOnce(t *testing.T) {
	onBothEngines(t, func(t *testing.T, db *store.DB, clock *jobClock) {
		ctx := context.Background()
		const jobs = 6
		ids := map[string]bool{}
		for i := range jobs {
			ids[claim(t, db, fmt.Sprintf("plan:%d", i), "instance-dead").ID] = true
		}
		live := claim(t, db, "plan:live", "instance-live")
		if got, err := db.RecoverExpiredJobs(ctx, "instance-x", testLease); err != nil || len(got) != 0 {
			t.Fatalf("recovered %d live jobs, err=%v", len(got), err)
		}
		clock.Add(testLease + time.Second)
		if _, err := db.RenewJobs(ctx, "instance-live", []string{live.ID}, testLease); err != nil {
			t.Fatal(err)
		}

		// Several instances sweep at once: each job goes to exactly one.
		const sweepers = 6
		var (
			mu        sync.Mutex
			recovered = map[string]string{} // job ID -> instance
			wg        sync.WaitGroup
		)
		for i := range sweepers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				instance := fmt.Sprintf("sweeper-%d", i)
				got, err := db.RecoverExpiredJobs(ctx, instance, testLease)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, j := range got {
					if prev, dup := recovered[j.ID]; dup {
						t.Errorf("job %s recovered by %s and %s", j.Key, prev, instance)
					}
					if j.State != store.JobRecovering || j.Instance != instance {
						t.Errorf("recovered %+v, want recovering by %s", j, instance)
					}
					recovered[j.ID] = instance
				}
			}()
		}
		wg.Wait()
		if len(recovered) != jobs {
			t.Fatalf("recovered %d jobs, want %d", len(recovered), jobs)
		}
		for id := range recovered {
			if !ids[id] {
				t.Fatalf("recovered job %s, which was live", id)
			}
		}
		// Recovering holds a lease too: nobody else sweeps them meanwhile.
		if got, err := db.RecoverExpiredJobs(ctx, "instance-late", testLease); err != nil || len(got) != 0 {
			t.Fatalf("a later sweep recovered %d jobs, err=%v", len(got), err)
		}
		for id, instance := range recovered {
			if held, err := db.EndJob(ctx, id, instance, store.JobOutcome{Error: "interrupted"}, time.Minute); err != nil || !held {
				t.Fatalf("end recovered job: held=%v err=%v", held, err)
			}
		}
	})
}

func TestFailInterruptedByRef(t *testing.T) {
	onBothEngines(t, func(t *testing.T, db *store.DB, _ *jobClock) {
		ctx := context.Background()
		h := storetest.NewHandoff(t, db, storetest.Items{Decisions: storetest.Decisions("Use SQLite.")})
		other := storetest.NewHandoff(t, db, storetest.Items{Title: "Other"})
		run, err := db.StartExtractionRun(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		otherRun, err := db.StartExtractionRun(ctx, other.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := db.FailInterruptedExtraction(ctx, h.ID); err != nil || !ok {
			t.Fatalf("FailInterruptedExtraction: %v, %v", ok, err)
		}
		if ok, err := db.FailInterruptedExtraction(ctx, h.ID); err != nil || ok {
			t.Fatalf("FailInterruptedExtraction again: %v, %v; want nothing to fail", ok, err)
		}
		last, err := db.FindLatestExtractionRun(ctx, h.ID)
		if err != nil || last.ID != run.ID || last.Status != store.RunFailed || !strings.Contains(last.Error, "Run it again") {
			t.Fatalf("interrupted run %+v, %v", last, err)
		}
		if last, _ := db.FindLatestExtractionRun(ctx, other.ID); last.ID != otherRun.ID || last.Status != store.RunRunning {
			t.Fatalf("another handoff's run %+v, want it left running", last)
		}

		sn := planSnapshot(t, db, "Use SQLite.")
		p, err := db.CreatePlan(ctx, sn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := db.FailInterruptedPlan(ctx, p.ID); err != nil || !ok {
			t.Fatalf("FailInterruptedPlan: %v, %v", ok, err)
		}
		got, err := db.FindPlanByID(ctx, p.ID)
		if err != nil || got.Status != store.PlanFailed || !strings.Contains(got.Error, "Start planning again") || got.FinishedAt.IsZero() {
			t.Fatalf("interrupted plan %+v, %v", got, err)
		}
	})
}

func TestNotifyListen(t *testing.T) {
	onBothEngines(t, func(t *testing.T, db *store.DB, _ *jobClock) {
		ctx, cancel := context.WithCancel(context.Background())
		mine, err := db.Listen(ctx, "job:1")
		if err != nil {
			t.Fatal(err)
		}
		others, err := db.Listen(ctx, "job:2")
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Notify(ctx, "job:1", "seq 3"); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-mine:
			if got != "seq 3" {
				t.Fatalf("received %q, want %q", got, "seq 3")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no notification")
		}
		select {
		case got := <-others:
			t.Fatalf("another channel received %q", got)
		default:
		}
		if err := db.Notify(ctx, "bad\nchannel", ""); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("Notify with a newline: %v, want ErrInvalid", err)
		}
		cancel()
		for range mine { // closed when the context ends
		}
		for range others {
		}
	})
}

// TestListenAcrossInstances has one instance notify another through
// PostgreSQL, and the listener come back after the server restarts.
func TestListenAcrossInstances(t *testing.T) {
	skipWithoutPostgresSchema(t)
	pg := storetest.NewPostgres(t)
	a, b := openPostgres(t, pg.URL), openPostgres(t, pg.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes, err := b.Listen(ctx, "jobs:b")
	if err != nil {
		t.Fatal(err)
	}
	receive := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			if err := a.Notify(ctx, "jobs:b", want); err != nil {
				t.Log(err) // the server may still be starting
			}
			select {
			case got := <-notes:
				if got == want {
					return
				}
			case <-time.After(50 * time.Millisecond):
			case <-deadline:
				t.Fatalf("instance b never received %q", want)
			}
		}
	}
	receive("first")
	pg.Stop()
	pg.Start()
	receive("after restart")
}
