package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/goleak"
)

// checkLeaks fails t if goroutines it started outlive it and its cleanups
// (call it first, so that it runs after the runner's shutdown).
func checkLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// newTestRunner is a job runner with short grace periods; its jobs are
// stopped when the test ends.
func newTestRunner(t *testing.T, grace time.Duration) *jobRunner {
	t.Helper()
	r := newJobRunner(slog.New(slog.DiscardHandler), grace, grace)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return r
}

// untilCancelled is a job that runs until it is cancelled and returns the cause.
func untilCancelled(ctx context.Context, _ *job) error {
	<-ctx.Done()
	return context.Cause(ctx)
}

// ended waits a little for j to end and reports whether it did.
func ended(j *job) bool {
	select {
	case <-j.done:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

func TestJobSingleFlight(t *testing.T) {
	checkLeaks(t)
	r := newTestRunner(t, time.Hour)
	var runs atomic.Int32
	release := make(chan struct{})
	spec := jobSpec{key: "k", kind: "test",
		setup: func(context.Context) (string, error) { return "row", nil },
		run: func(ctx context.Context, j *job) error {
			runs.Add(1)
			<-release
			return nil
		}}
	first, started, err := r.start(context.Background(), spec)
	if err != nil || !started || first.ref != "row" {
		t.Fatalf("first start: started=%v ref=%q err=%v, want a new job with ref row", started, first.ref, err)
	}
	second, started, err := r.start(context.Background(), spec)
	if err != nil || started || second != first {
		t.Fatalf("second start: job=%p started=%v err=%v, want the first job %p", second, started, err, first)
	}
	if got := r.find("k"); got != first {
		t.Fatalf("find=%p, want %p", got, first)
	}
	close(release)
	if !ended(first) {
		t.Fatal("the job did not end")
	}
	if got, want := runs.Load(), int32(1); got != want {
		t.Fatalf("runs=%d, want %d", got, want)
	}
	if got := r.find("k"); got != nil {
		t.Fatalf("find after the end=%p, want nil", got)
	}
	// Once it has ended, the key is free again.
	third, started, err := r.start(context.Background(), jobSpec{key: "k", run: func(context.Context, *job) error { return nil }})
	if err != nil || !started || third == first {
		t.Fatalf("start after the end: started=%v err=%v, want a new job", started, err)
	}
	<-third.done
}

func TestJobSetupFails(t *testing.T) {
	checkLeaks(t)
	r := newTestRunner(t, time.Hour)
	want := errors.New("no row")
	var ran bool
	j, started, err := r.start(context.Background(), jobSpec{key: "k",
		setup: func(context.Context) (string, error) { return "", want },
		run:   func(context.Context, *job) error { ran = true; return nil }})
	if !errors.Is(err, want) || j != nil || started {
		t.Fatalf("start: job=%v started=%v err=%v, want no job and %v", j, started, err, want)
	}
	if r.find("k") != nil || ran {
		t.Fatal("a job whose setup failed was registered or ran")
	}
}

// follow serves j's events as an SSE handler would and returns what it
// wrote and whether the job ended.
func follow(ctx context.Context, j *job) (string, bool) {
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/events", nil).WithContext(ctx), rec)
	ok := followJob(ctx, startSSE(c), j)
	return rec.Body.String(), ok
}

func TestJobReplaysToLateFollowers(t *testing.T) {
	checkLeaks(t)
	r := newTestRunner(t, time.Hour)
	emitted := make(chan struct{})
	release := make(chan struct{})
	j, _, err := r.start(context.Background(), jobSpec{key: "k", orphan: graceOrphan,
		run: func(ctx context.Context, j *job) error {
			j.emit("delta", "one ")
			j.emit("delta", "two")
			close(emitted)
			<-release
			j.emit("step", "three")
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	<-emitted
	// A follower that arrives late gets what was emitted before it came,
	// then what comes after, in order.
	type result struct {
		body  string
		ended bool
	}
	late := make(chan result)
	go func() {
		body, ok := follow(context.Background(), j)
		late <- result{body, ok}
	}()
	close(release)
	got := <-late
	want := "event: delta\ndata: one \n\nevent: delta\ndata: two\n\nevent: step\ndata: three\n\n"
	if !got.ended || !strings.HasSuffix(got.body, want) {
		t.Fatalf("late follower got %q (ended %v), want it to end with %q", got.body, got.ended, want)
	}
	// One that arrives after the end gets the whole log too.
	if body, ok := follow(context.Background(), j); !ok || !strings.HasSuffix(body, want) {
		t.Fatalf("follower after the end got %q (ended %v), want %q", body, ok, want)
	}
}

func TestJobFollowerLeaves(t *testing.T) {
	checkLeaks(t)
	r := newTestRunner(t, time.Hour)
	j, _, err := r.start(context.Background(), jobSpec{key: "k", run: untilCancelled})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := follow(ctx, j); ok {
		t.Fatal("followJob reported the end of a job that still runs")
	}
	// A job that runs whether or not anyone follows it keeps running.
	select {
	case <-j.done:
		t.Fatal("a keepOrphan job ended when its follower left")
	case <-time.After(20 * time.Millisecond):
	}
}

func TestJobGrace(t *testing.T) {
	checkLeaks(t)
	const grace = 20 * time.Millisecond
	tests := []struct {
		name   string
		orphan orphanPolicy
	}{
		{"after the grace period", graceOrphan},
		{"at once", cancelOrphan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRunner(t, grace)
			j, _, err := r.start(context.Background(), jobSpec{key: "k", orphan: tt.orphan, run: untilCancelled})
			if err != nil {
				t.Fatal(err)
			}
			// Followed for longer than the grace period: it keeps running.
			unwatch := j.watch()
			time.Sleep(3 * grace)
			if j.ended() {
				t.Fatalf("the job ended while followed: %v", j.err)
			}
			unwatch()
			if !ended(j) {
				t.Fatal("the job ran on with nobody following it")
			}
			if !errors.Is(j.err, errLeft) {
				t.Fatalf("err=%v, want %v", j.err, errLeft)
			}
		})
	}
	t.Run("nobody ever follows", func(t *testing.T) {
		r := newTestRunner(t, grace)
		j, _, err := r.start(context.Background(), jobSpec{key: "k", orphan: graceOrphan, run: untilCancelled})
		if err != nil {
			t.Fatal(err)
		}
		if !ended(j) || !errors.Is(j.err, errLeft) {
			t.Fatalf("err=%v, want %v after the connect grace", j.err, errLeft)
		}
	})
}

func TestJobShutdown(t *testing.T) {
	checkLeaks(t)
	r := newJobRunner(slog.New(slog.DiscardHandler), time.Hour, time.Hour)
	saved := make(chan error, 1)
	j, _, err := r.start(context.Background(), jobSpec{key: "running", orphan: graceOrphan,
		run: func(ctx context.Context, j *job) error {
			<-ctx.Done()
			time.Sleep(10 * time.Millisecond) // saving how it ended
			saved <- context.Cause(ctx)
			return context.Cause(ctx)
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	// Shutdown returned only after the running job had saved, and it was
	// cancelled as shut down.
	select {
	case cause := <-saved:
		if !errors.Is(cause, errShutdown) {
			t.Fatalf("cause=%v, want %v", cause, errShutdown)
		}
	default:
		t.Fatal("shutdown returned before the job had saved")
	}
	if !j.ended() {
		t.Fatal("shutdown returned before the job ended")
	}
	// No job starts any more, and nothing is written for one.
	var setup bool
	_, _, err = r.start(context.Background(), jobSpec{key: "new",
		setup: func(context.Context) (string, error) { setup = true; return "", nil },
		run:   untilCancelled})
	if !errors.Is(err, errShuttingDown) || setup {
		t.Fatalf("start after shutdown: err=%v setup=%v, want %v and no setup", err, setup, errShuttingDown)
	}
}

func TestJobPanic(t *testing.T) {
	checkLeaks(t)
	r := newTestRunner(t, time.Hour)
	j, _, err := r.start(context.Background(), jobSpec{key: "k", kind: "test",
		run: func(context.Context, *job) error { panic("boom") }})
	if err != nil {
		t.Fatal(err)
	}
	if !ended(j) || j.err == nil || !strings.Contains(j.err.Error(), "boom") {
		t.Fatalf("err=%v, want the panic as an error", j.err)
	}
	if r.find("k") != nil {
		t.Fatal("a job that panicked is still registered")
	}
}
