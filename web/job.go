package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Causes a job can be cancelled with; they end up in what people read
// ("Cancelled: the page was closed.").
var (
	// errStopped is the cancel cause when a person presses Stop or Cancel.
	errStopped = errors.New("stopped by the user")
	// errLeft is the cancel cause when nobody follows a job any more.
	errLeft = errors.New("the page was closed")
	// errShutdown is the cancel cause when the server shuts down.
	errShutdown = errors.New("server shutting down")
)

// errShuttingDown refuses new background work while the server stops.
var errShuttingDown = echo.NewHTTPError(http.StatusServiceUnavailable, "Baton is shutting down. Try again in a moment.")

// Default grace periods of jobs that end when nobody follows them.
const (
	defaultJobGrace        = 2 * time.Second
	defaultJobConnectGrace = 10 * time.Second
)

// A job is long work that runs in the background, apart from the request
// that started it: a reply, an extraction, a plan. It records what it
// emits, so that a page that follows it late gets every event from the
// start, and it ends with an error or nil.
type job struct {
	key  string
	kind string
	// ref is the ID of what the job writes to (a plan, a handoff), set by
	// its setup before anyone else can see the job.
	ref string

	cancel context.CancelCauseFunc
	done   chan struct{}
	err    error // how run ended; read after done is closed

	mu       sync.Mutex
	events   []jobEvent
	changed  chan struct{} // closed and replaced on every event
	watchers int
	orphan   *time.Timer   // cancels the job once nobody watches; nil if it runs regardless
	grace    time.Duration // how long the job runs after its last follower leaves

	// On a database several instances share (job_shared.go), id is the
	// job's row. A job this instance runs has shared set and writes its
	// events there (pending holds those not written yet); a job that runs
	// on another instance has remote set, and this instance only follows it.
	id      string
	shared  *sharedJobs
	pending []jobEvent
	flushAt *time.Timer // writes pending; nil when nothing waits
	flushMu sync.Mutex  // one write at a time, in order
	written int64       // how many rows of events are written
	remote  *remoteJob
}

// jobEvent is one server-sent event of a job: its name and its data.
type jobEvent struct{ name, data string }

// emit records an event and wakes the job's followers. On a shared
// database the event is written there too, with the others of a short
// while (sharedJobs.flushEvery), for followers on other instances.
func (j *job) emit(name, data string) {
	j.mu.Lock()
	j.events = append(j.events, jobEvent{name, data})
	close(j.changed)
	j.changed = make(chan struct{})
	if j.shared != nil {
		j.pending = append(j.pending, jobEvent{name, data})
		if j.flushAt == nil {
			j.flushAt = time.AfterFunc(j.shared.flushEvery, j.flush)
		}
	}
	j.mu.Unlock()
}

// since returns the events after the first n and a channel closed on the next one.
func (j *job) since(n int) ([]jobEvent, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.events[n:], j.changed
}

// watch counts a follower until the returned func is called. A job that
// ends when nobody follows it is cancelled with errLeft once its last
// follower has been gone for the grace period.
//
// Watching a job that runs on another instance follows it from the
// database while anyone here watches, and tells its instance so.
func (j *job) watch() (unwatch func()) {
	j.mu.Lock()
	j.watchers++
	if j.orphan != nil {
		j.orphan.Stop()
	}
	if j.remote != nil && j.watchers == 1 && !j.ended() {
		j.remote.follow(j)
	}
	j.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			j.mu.Lock()
			j.watchers--
			if j.watchers == 0 && j.orphan != nil && !j.ended() {
				j.orphan.Reset(j.grace)
			}
			if j.remote != nil && j.watchers == 0 {
				j.remote.unfollow()
			}
			j.mu.Unlock()
		})
	}
}

// ended reports whether the job has ended.
func (j *job) ended() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// stop cancels the job with cause; it still ends, and saves, by itself.
// A job on another instance is asked to stop through the database.
func (j *job) stop(cause error) {
	if j.remote != nil {
		j.remote.stop(j, cause)
		return
	}
	j.cancel(cause)
}

// wait waits, as a follower, for the job to end and returns how it ended,
// or ctx's error if ctx ends first.
func (j *job) wait(ctx context.Context) error {
	unwatch := j.watch()
	defer unwatch()
	select {
	case <-j.done:
		return j.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// orphanPolicy says what becomes of a job nobody follows.
type orphanPolicy int

const (
	// keepOrphan jobs run to their end whether anyone follows them or not
	// (plans: the page can come back to them).
	keepOrphan orphanPolicy = iota
	// cancelOrphan jobs are cancelled with errLeft as soon as their last
	// follower leaves (replies: closing the tab stops the model).
	cancelOrphan
	// graceOrphan jobs are cancelled with errLeft once nobody has followed
	// them for the runner's grace period, so that a reload can rejoin them
	// (extractions).
	graceOrphan
)

// jobSpec says what job to start.
type jobSpec struct {
	// key names the job: one runs per key at a time ("reply:<message ID>").
	key string
	// kind is what the job is, for logs: "reply", "extraction", "plan".
	kind string
	// orphan says what happens when nobody follows the job.
	orphan orphanPolicy
	// setup, if set, writes what the job needs before it runs (a row for
	// its progress) and returns the ID of it, which becomes the job's ref.
	// It runs under the runner's lock, so that nothing else starts under
	// the same key and shutdown does not begin halfway; it must not call
	// the runner. If it fails, no job starts.
	setup func(ctx context.Context) (ref string, err error)
	// run does the work with a context that ends when the job is stopped,
	// is left alone or the server shuts down. It must save how it ended
	// (stopped, cancelled) before it returns.
	run func(ctx context.Context, j *job) error
}

// jobRunner runs jobs, one per key, and stops them all at shutdown. After
// shutdown has begun, no job starts: start returns errShuttingDown.
type jobRunner struct {
	log *slog.Logger
	// grace is how long a watched job runs after its last follower leaves,
	// and connectGrace how long it waits for its first one.
	grace, connectGrace time.Duration

	mu     sync.Mutex
	jobs   map[string]*job
	closed bool
	wg     sync.WaitGroup

	// shared is set when several instances share the database: jobs are
	// claimed, leased and followed through it (job_shared.go).
	shared *sharedJobs
}

func newJobRunner(log *slog.Logger, grace, connectGrace time.Duration) *jobRunner {
	return &jobRunner{log: log, grace: grace, connectGrace: connectGrace, jobs: make(map[string]*job)}
}

// start starts the job spec describes, in the background, unless one runs
// under its key already: then it returns that one and started is false.
// ctx is the starting request's: setup runs with it, and run with its
// values but not its cancellation.
//
// On a shared database the key is claimed there first: if another
// instance runs a job under it, start returns that one (followed from the
// database), and started is false.
func (r *jobRunner) start(ctx context.Context, spec jobSpec) (j *job, started bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, false, errShuttingDown
	}
	if j := r.jobs[spec.key]; j != nil {
		return j, false, nil
	}
	j = &job{key: spec.key, kind: spec.kind, done: make(chan struct{}), changed: make(chan struct{})}
	if r.shared != nil {
		holder, err := r.shared.claim(ctx, j, spec.setup != nil)
		if err != nil || holder != nil {
			return holder, false, err
		}
	}
	if spec.setup != nil {
		if j.ref, err = spec.setup(ctx); err != nil {
			if r.shared != nil {
				r.shared.abandon(j, err)
			}
			return nil, false, err
		}
		if r.shared != nil {
			r.shared.setRef(ctx, j)
		}
	}
	jobCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	j.cancel = cancel
	if spec.orphan != keepOrphan {
		// The first follower gets longer to arrive: the page that started
		// the job has to load and connect first.
		j.orphan = time.AfterFunc(r.connectGrace, func() { r.orphaned(j) })
		if spec.orphan == graceOrphan {
			j.grace = r.grace
		}
	}
	r.jobs[spec.key] = j
	r.wg.Add(1)
	go r.run(jobCtx, j, spec.run)
	return j, true, nil
}

// run runs a job to its end and unregisters it.
func (r *jobRunner) run(ctx context.Context, j *job, run func(context.Context, *job) error) {
	defer r.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("job panicked", "kind", j.kind, "key", j.key, "panic", p, "stack", string(debug.Stack()))
			j.err = fmt.Errorf("the %s failed unexpectedly: %v", j.kind, p)
		}
		if j.shared != nil {
			r.shared.end(j)
		}
		r.mu.Lock()
		delete(r.jobs, j.key)
		r.mu.Unlock()
		j.mu.Lock()
		if j.orphan != nil {
			j.orphan.Stop()
		}
		j.mu.Unlock()
		j.cancel(nil)
		close(j.done)
	}()
	j.err = run(ctx, j)
}

// find returns the job running under key, or nil. On a shared database
// that may be a job another instance runs.
func (r *jobRunner) find(key string) *job {
	r.mu.Lock()
	j := r.jobs[key]
	r.mu.Unlock()
	if j == nil && r.shared != nil {
		return r.shared.find(key)
	}
	return j
}

// orphaned cancels j with errLeft: nobody has followed it for its grace
// period. On a shared database a page on another instance may follow it:
// then it runs on for as long as that page is known to watch.
func (r *jobRunner) orphaned(j *job) {
	if r.shared == nil {
		j.cancel(errLeft)
		return
	}
	left := r.shared.watchedFor(j)
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.watchers > 0 || j.ended(): // a page came back while the database answered
	case left > 0:
		j.orphan.Reset(left)
	default:
		j.cancel(errLeft)
	}
}

// shutdown refuses new jobs, cancels the running ones with errShutdown and
// waits until they have saved how they ended, or ctx ends.
func (r *jobRunner) shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	for _, j := range r.jobs {
		j.cancel(errShutdown)
	}
	r.mu.Unlock()
	err := wait(ctx, &r.wg)
	if r.shared != nil {
		r.shared.close()
	}
	return err
}

// wait waits for wg, or until ctx ends.
func wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// followJob sends j's events to sse, from the first, following it as a
// watcher until it ends (true), or until the client leaves or a write
// fails (false). The caller then sends what the page shows of the result.
func followJob(ctx context.Context, sse *sseWriter, j *job) bool {
	unwatch := j.watch()
	defer unwatch()
	n := 0
	for {
		events, changed := j.since(n)
		for _, e := range events {
			if err := sse.send(e.name, e.data); err != nil {
				return false
			}
		}
		n += len(events)
		select {
		case <-changed:
		case <-j.done:
			if rest, _ := j.since(n); len(rest) == 0 {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}
