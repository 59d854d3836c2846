package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// Several instances on one database. Each test runs on PostgreSQL (two
// pools, LISTEN/NOTIFY: as two processes) and on SQLite with the runner
// told that the database is shared (one pool, notifications within the
// process), which exercises the same code without PostgreSQL.

// sharedSQLite is a SQLite database that the server treats as shared by
// several instances.
type sharedSQLite struct{ *store.DB }

func (sharedSQLite) Shared() bool { return true }

// sharedDB opens a database for one more instance: the store the server
// uses and the *store.DB under it.
type sharedDB func(t *testing.T) (web.Store, *store.DB)

// onSharedDatabases runs test on each engine with a database that several
// instances share.
func onSharedDatabases(t *testing.T, test func(t *testing.T, open sharedDB)) {
	t.Run("sqlite", func(t *testing.T) {
		db := storetest.MustOpen(t)
		test(t, func(*testing.T) (web.Store, *store.DB) { return sharedSQLite{db}, db })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := storetest.StartPostgres(t)
		test(t, func(t *testing.T) (web.Store, *store.DB) {
			db, err := store.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db, db
		})
	})
}

// newInstance starts one Baton instance named name on a shared database,
// as newBareApp does. The first instance of a database sets it up; each
// signs its own client in as the owner.
func newInstance(t *testing.T, open sharedDB, name string, cfg web.Config) *testApp {
	t.Helper()
	st, db := open(t)
	cfg.DB = st
	cfg.InstanceID = name
	if cfg.ModelRate == 0 {
		cfg.ModelRate = 100
	}
	if cfg.JobHeartbeat == 0 {
		cfg.JobHeartbeat = 20 * time.Millisecond
	}
	a := serveApp(t, db, cfg)
	owner, err := db.FindUserByEmail(context.Background(), "ana@example.com")
	if err != nil {
		owner = a.setUp()
	}
	a.Owner = owner
	req := a.newRequest(http.MethodPost, "/login", strings.NewReader(url.Values{
		"email": {owner.Email}, "password": {ownerPassword}}.Encode()), sameOrigin)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, body := a.do(req); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in on %s: status %d, want 303\n%s", name, res.StatusCode, body)
	}
	a.Token = a.newToken(owner, db.DefaultWorkspaceID(), store.ScopeWrite)
	return a
}

// feedModel streams the deltas a test sends on its feed, and ends when
// the feed is closed or the call is cancelled.
type feedModel struct {
	feed  chan string
	calls atomic.Int32
}

func newFeedModel() *feedModel { return &feedModel{feed: make(chan string)} }

// send streams d, failing the test if the reply is no longer being written.
func (m *feedModel) send(t *testing.T, d string) {
	t.Helper()
	select {
	case m.feed <- d:
	case <-time.After(10 * time.Second):
		t.Fatalf("the reply stopped before %q was streamed", d)
	}
}

func (m *feedModel) Name() string  { return "fake" }
func (m *feedModel) Model() string { return "fake-1" }

func (m *feedModel) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	m.calls.Add(1)
	var sent strings.Builder
	reply := func() *agent.Reply {
		return &agent.Reply{Parts: []agent.Part{agent.TextPart{Text: sent.String()}}, StopReason: agent.StopEnd, Model: m.Model()}
	}
	for {
		select {
		case d, ok := <-m.feed:
			if !ok {
				return reply(), nil
			}
			sent.WriteString(d)
			if err := emit(agent.Delta{Text: d}); err != nil {
				return reply(), err
			}
		case <-ctx.Done():
			return reply(), ctx.Err()
		}
	}
}

// deltasUntil reads a reply stream's deltas until their text is want.
func deltasUntil(t *testing.T, s *sseStream, want string) {
	t.Helper()
	var got strings.Builder
	for got.String() != want {
		ev, err := s.next()
		if err != nil || ev.Event != "delta" {
			t.Fatalf("after %q: event %+v, err=%v; want deltas up to %q", got.String(), ev, err, want)
		}
		got.WriteString(ev.Data)
	}
}

func TestInstancesExtractOnce(t *testing.T) {
	onSharedDatabases(t, func(t *testing.T, open sharedDB) {
		release, started := make(chan struct{}), make(chan struct{}, 2)
		model := extractionModel(extractionJSON(t, "Sessions", "Use JWT in a cookie."), release, started)
		cfg := web.Config{Provider: model}
		a, b := newInstance(t, open, "a", cfg), newInstance(t, open, "b", cfg)
		ex := a.seedExchange("Auth", "How do we keep sessions?", "Use JWT in a cookie.")

		// Both instances are asked at once; one runs it, the other joins.
		var wg sync.WaitGroup
		for _, app := range []*testApp{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, body := app.postForm("/t/"+ex.Thread.ID+"/extract", nil, htmxSameOrigin)
				if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="extracting"`) {
					t.Errorf("extract: Status=%d; body: %s", res.StatusCode, body)
				}
			}()
		}
		wg.Wait()
		recvWithin(t, started, "the model call")
		h, err := a.DB.EnsureHandoff(context.Background(), ex.Thread.ID)
		if err != nil {
			t.Fatal(err)
		}
		a.waitRun(h.ID, store.RunRunning, 5*time.Second)

		// Each instance's page follows the one run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		streams := []*sseStream{a.openEvents(ctx, ex.Thread.ID), b.openEvents(ctx, ex.Thread.ID)}
		for i, s := range streams {
			if ev := mustNext(t, s); ev.Event != "progress" || ev.Data != "Starting…" {
				t.Fatalf("instance %d: first event %+v, want the first progress replayed", i, ev)
			}
		}
		close(release)
		for i, s := range streams {
			evs := s.all(t)
			if len(evs) < 2 || evs[len(evs)-1].Event != "done" {
				t.Fatalf("instance %d events %+v, want progress then done", i, evs)
			}
			if done := evs[len(evs)-1].Data; !strings.Contains(done, "/h/"+h.ID) {
				t.Fatalf("instance %d done=%s, want the review to open", i, done)
			}
		}
		if got := model.Calls(); got != 1 {
			t.Fatalf("model calls=%d after starts on two instances, want 1", got)
		}
		if run := a.waitRun(h.ID, store.RunSucceeded, 5*time.Second); run.Added == 0 {
			t.Fatalf("run %+v added nothing", run)
		}
	})
}

func TestInstancesFollowReplyAndStop(t *testing.T) {
	onSharedDatabases(t, func(t *testing.T, open sharedDB) {
		model := newFeedModel()
		// A follower gone stops a reply: here only after the grace, so that
		// the follower on b counts.
		cfg := web.Config{Provider: model, JobConnectGrace: 50 * time.Millisecond}
		a, b := newInstance(t, open, "a", cfg), newInstance(t, open, "b", cfg)
		th := a.createThread("Follow")
		user := a.sendHTMX(th.ID, "Tell me everything")

		// The reply runs on a, whose page sees the first words.
		streamA := a.openStream(context.Background(), th.ID, user.ID)
		model.send(t, "one ")
		model.send(t, "two ")
		deltasUntil(t, streamA, "one two ")

		// A page on b, opened late, gets them replayed, then what follows.
		ctxB, leaveB := context.WithCancel(context.Background())
		defer leaveB()
		streamB := b.openStream(ctxB, th.ID, user.ID)
		deltasUntil(t, streamB, "one two ")
		// a's page leaves: b's page keeps the reply going.
		streamA.Res.Body.Close()
		time.Sleep(100 * time.Millisecond) // past a's grace for its own followers
		const n = 200
		for i := range n {
			model.send(t, string(rune('a'+i%26)))
		}
		var rest strings.Builder
		for i := range n {
			rest.WriteString(string(rune('a' + i%26)))
		}
		deltasUntil(t, streamB, rest.String())
		flushes, events, rows := a.Srv.JobWrites()
		t.Logf("reply on a: %d events written in %d rows, %d batches (%.1f events per batch)",
			events, rows, flushes, float64(events)/float64(max(flushes, 1)))
		if rows >= events {
			t.Errorf("%d rows for %d events: consecutive deltas were not written together", rows, events)
		}
		if got := model.calls.Load(); got != 1 {
			t.Fatalf("model calls=%d, want 1: b followed a's reply", got)
		}

		// Stop pressed on b stops the reply on a; b's page ends with it.
		res, body := b.postForm("/t/"+th.ID+"/messages/"+user.ID+"/stop", nil, htmxSameOrigin)
		if got, want := res.StatusCode, http.StatusNoContent; got != want {
			t.Fatalf("stop on b: Status=%d, want %d; body: %s", got, want, body)
		}
		evs := streamB.all(t)
		if len(evs) == 0 || evs[len(evs)-1].Event != "done" {
			t.Fatalf("b's stream after the stop: %+v, want it to end with done", evs)
		}
		findOne(t, parseHTML(t, evs[len(evs)-1].Data), "article", "data-status", "stopped")
		reply := a.waitForReply(th.ID, user.ID, 5*time.Second)
		if reply.Status != store.StatusStopped || reply.Content != "one two "+rest.String() {
			t.Fatalf("stored %q %q, want stopped with what arrived", reply.Status, reply.Content)
		}
	})
}

func TestInstanceDiesDuringPlan(t *testing.T) {
	onSharedDatabases(t, func(t *testing.T, open sharedDB) {
		model := newPlanModel()
		started := make(chan struct{}, 1)
		model.before = func(ctx context.Context, call, turn int) error {
			if call == 2 { // blocks until a's job is cancelled at its shutdown
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}
		cfg := web.Config{Provider: model, JobLease: time.Second}
		a := newInstance(t, open, "a", cfg)
		s := newPlanSetup(t, a)
		pid := s.freeze(t, a)
		recvWithin(t, started, "the second model call")
		b, c := newInstance(t, open, "b", cfg), newInstance(t, open, "c", cfg)

		// b's page follows the plan that a writes.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stream := b.openPlanEvents(ctx, pid)
		if ev := mustNext(t, stream); ev.Event != "step" {
			t.Fatalf("first event on b: %+v, want a step replayed", ev)
		}

		// a dies: its lease runs out, b and c both sweep, one recovers it.
		a.Srv.Crash()
		p := b.waitPlan(pid, store.PlanFailed)
		if !strings.Contains(p.Error, "Interrupted") || !strings.Contains(p.Error, "Start planning again") {
			t.Fatalf("recovered plan error %q, want it interrupted", p.Error)
		}
		evs := stream.all(t)
		if len(evs) == 0 || evs[len(evs)-1].Event != "done" || textOf(findOne(t, parseHTML(t, evs[len(evs)-1].Data), "span", "data-testid", "plan-status")) != "failed" {
			t.Fatalf("b's page after the recovery: %+v, want done with the plan failed", evs)
		}
		time.Sleep(100 * time.Millisecond) // more sweeps: none recovers it again
		if got := b.Srv.JobsRecovered() + c.Srv.JobsRecovered(); got != 1 {
			t.Fatalf("recovered %d times (b %d, c %d), want once", got, b.Srv.JobsRecovered(), c.Srv.JobsRecovered())
		}

		// The snapshot plans again, on another instance.
		res, _ := c.postForm("/p/"+pid+"/rerun", nil, sameOrigin)
		pid2 := planIDFrom(t, res.Header.Get("Location"))
		if pid2 == pid {
			t.Fatalf("rerun on c went to the interrupted plan %s", pid)
		}
		c.waitPlan(pid2, store.PlanComplete)
	})
}
