package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/baton-dev/baton/store"
)

// Jobs on a database several instances share (PostgreSQL behind a load
// balancer). The runner keeps running its jobs in memory, as on SQLite,
// and also:
//
//   - claims a job's key in the database before its setup, so that a job
//     started on two instances at once runs once: the second gets the
//     running one, which it follows from the database;
//   - holds the claim with a lease that a heartbeat renews; the renewal
//     also brings the cancel requests of other instances (Stop pressed on
//     a page served elsewhere), which a notification makes immediate;
//   - writes its jobs' events to the database in small batches and
//     notifies, so that pages on other instances follow them, from the
//     first event;
//   - sweeps for jobs whose lease expired (their instance died) and marks
//     their work interrupted, each job by exactly one instance.
//
// A page that follows a job of another instance renews a watched-until
// time of it, so that the job's instance does not cancel it as left alone.

// jobStore is what the runner needs of a shared database: *store.DB.
type jobStore interface {
	Shared() bool
	ClaimJob(ctx context.Context, in store.JobClaim) (*store.Job, error)
	FindJob(ctx context.Context, key string) (*store.Job, error)
	SetJobRef(ctx context.Context, id, ref string) error
	RenewJobs(ctx context.Context, instance string, ids []string, lease time.Duration) ([]*store.Job, error)
	RequestJobCancel(ctx context.Context, id, cause string) (*store.Job, error)
	WatchJob(ctx context.Context, id string, ttl time.Duration) error
	JobWatchedFor(ctx context.Context, id string) (time.Duration, error)
	AppendJobEvents(ctx context.Context, id string, events []store.JobEvent) error
	JobEvents(ctx context.Context, id string, after int64) ([]store.JobEvent, error)
	EndJob(ctx context.Context, id, instance string, out store.JobOutcome, keep time.Duration) (bool, error)
	RecoverExpiredJobs(ctx context.Context, instance string, lease time.Duration) ([]*store.Job, error)
	PurgeEndedJobs(ctx context.Context) (int, error)
	FailInterruptedExtraction(ctx context.Context, handoffID string) (bool, error)
	FailInterruptedPlan(ctx context.Context, id string) (bool, error)
	FindHandoffByThread(ctx context.Context, threadID string) (*store.Handoff, error)
	FindPlans(ctx context.Context, f store.PlanFilter) ([]*store.Plan, error)
	Notify(ctx context.Context, channel, payload string) error
	Listen(ctx context.Context, channel string) (<-chan string, error)
}

var _ jobStore = (*store.DB)(nil)

// Defaults of the Config fields of shared jobs.
const (
	defaultJobLease     = 30 * time.Second
	defaultJobHeartbeat = 5 * time.Second
)

const (
	// flushEvery is how long a job's events wait to be written together:
	// a reply streams many small deltas.
	flushEvery = 50 * time.Millisecond
	// endedKeep is how long an ended job's row and events stay, for
	// followers that were behind.
	endedKeep = time.Minute
	// dbTimeout bounds each database call of the runner's own.
	dbTimeout = 5 * time.Second
	// refWait is how long a start waits for another instance's job to
	// finish its setup (and name its ref).
	refWait = 5 * time.Second
)

// errLeaseLost is the cancel cause of a job whose lease ran out and that
// another instance recovered meanwhile.
var errLeaseLost = errors.New("its Baton instance lost the job to another one")

// interrupted is how a recovered job ended.
const interrupted = "Interrupted: the Baton instance running it stopped."

// sharedJobs is the part of a runner that works through the database.
type sharedJobs struct {
	r          *jobRunner
	db         jobStore
	log        *slog.Logger
	instance   string
	lease      time.Duration // how long a claim holds without renewal
	heartbeat  time.Duration // how often leases are renewed, expired jobs swept, remote jobs polled
	flushEvery time.Duration

	ctx    context.Context // ends at close
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool           // no goroutine starts once set
	wg     sync.WaitGroup // the heartbeat and the remote followers
	dead   atomic.Bool    // crash: nothing more is written (tests)

	// Counters of written events and recovered jobs, for tests and measures.
	flushes, events, rows, recovered atomic.Int64
}

// sharedConfig configures sharedJobs; zero fields take their defaults.
type sharedConfig struct {
	instance         string
	lease, heartbeat time.Duration
}

// share makes the runner work through db, which other instances share,
// and starts its heartbeat.
func (r *jobRunner) share(db jobStore, cfg sharedConfig) {
	if cfg.lease <= 0 {
		cfg.lease = defaultJobLease
	}
	if cfg.heartbeat <= 0 {
		cfg.heartbeat = min(defaultJobHeartbeat, cfg.lease/3)
	}
	if cfg.instance == "" {
		cfg.instance = newInstanceID()
	}
	ctx, cancel := context.WithCancel(context.Background())
	sh := &sharedJobs{r: r, db: db, log: r.log.With("instance", cfg.instance), instance: cfg.instance,
		lease: cfg.lease, heartbeat: cfg.heartbeat, flushEvery: flushEvery, ctx: ctx, cancel: cancel}
	r.shared = sh
	sh.goRun(sh.beat)
}

// newInstanceID names this process among the instances: its host, its
// process ID and a random part, as the jobs table and logs show it.
func newInstanceID() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "baton"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
}

// close stops the heartbeat and the remote followers, and waits for them.
func (sh *sharedJobs) close() {
	sh.mu.Lock()
	sh.closed = true
	sh.mu.Unlock()
	sh.cancel()
	sh.wg.Wait()
}

// goRun runs fn in a goroutine that close waits for, unless closing has begun.
func (sh *sharedJobs) goRun(fn func()) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.closed {
		return false
	}
	sh.wg.Add(1)
	go func() {
		defer sh.wg.Done()
		fn()
	}()
	return true
}

// crash stops the heartbeat and every write of this instance, as if its
// process had died, while its jobs go on in memory. Tests use it.
func (sh *sharedJobs) crash() {
	sh.dead.Store(true)
	sh.close()
}

// dbCtx is a context for one database call of the runner's own.
func (sh *sharedJobs) dbCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(sh.ctx), dbTimeout)
}

// claim claims j's key for this instance. If another instance runs a job
// under it, claim returns that one, once its setup has named its ref when
// needRef. A job of the key whose lease expired is recovered first.
func (sh *sharedJobs) claim(ctx context.Context, j *job, needRef bool) (holder *job, err error) {
	for attempt := 0; ; attempt++ {
		row, err := sh.db.ClaimJob(ctx, store.JobClaim{Key: j.key, Kind: j.kind, Instance: sh.instance, Lease: sh.lease})
		if err == nil {
			if row.Previous != nil {
				sh.recover(ctx, row.Previous)
			}
			j.id, j.shared = row.ID, sh
			return nil, nil
		}
		if store.ErrorCode(err) != store.ECONFLICT || attempt == 2 {
			return nil, err
		}
		holder, err := sh.holder(ctx, j.key, needRef)
		if err != nil || holder != nil {
			return holder, err
		}
		// The holder ended meanwhile: claim again.
	}
}

// holder returns the job another instance runs under key, waiting for its
// setup to name its ref when needRef; nil if it ended.
func (sh *sharedJobs) holder(ctx context.Context, key string, needRef bool) (*job, error) {
	deadline := time.Now().Add(refWait)
	for {
		row, err := sh.db.FindJob(ctx, key)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !row.Live()) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if row.Ref != "" || !needRef {
			return sh.remoteJob(row), nil
		}
		if time.Now().After(deadline) {
			return nil, store.Errorf(store.ECONFLICT, "The %s is starting on another Baton instance. Try again in a moment.", row.Kind)
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// setRef records j's ref for followers on other instances. A failure only
// keeps them from finding the job: it is logged, and the job runs.
func (sh *sharedJobs) setRef(ctx context.Context, j *job) {
	if j.ref == "" {
		return
	}
	if err := sh.db.SetJobRef(ctx, j.id, j.ref); err != nil {
		sh.log.Error("job ref", "kind", j.kind, "key", j.key, "ref", j.ref, "err", err)
	}
}

// abandon releases the claim of a job whose setup failed.
func (sh *sharedJobs) abandon(j *job, cause error) {
	ctx, cancel := sh.dbCtx()
	defer cancel()
	if _, err := sh.db.EndJob(ctx, j.id, sh.instance, jobOutcome(cause), 0); err != nil {
		sh.log.Error("job end", "kind", j.kind, "key", j.key, "err", err)
	}
}

// flush writes the job's pending events to the database, and tells its
// followers. Consecutive "delta" events (text to append) are written as
// one. A failed write is tried again a heartbeat later.
func (j *job) flush() {
	sh := j.shared
	j.flushMu.Lock()
	defer j.flushMu.Unlock()
	j.mu.Lock()
	batch := j.pending
	j.pending, j.flushAt = nil, nil
	j.mu.Unlock()
	if len(batch) == 0 || sh.dead.Load() {
		return
	}
	rows := coalesce(batch, j.written)
	ctx, cancel := sh.dbCtx()
	defer cancel()
	if err := sh.db.AppendJobEvents(ctx, j.id, rows); err != nil {
		sh.log.Warn("job events", "kind", j.kind, "key", j.key, "events", len(batch), "err", err)
		j.mu.Lock()
		j.pending = append(batch, j.pending...)
		if j.flushAt == nil && !j.ended() {
			j.flushAt = time.AfterFunc(sh.heartbeat, j.flush)
		}
		j.mu.Unlock()
		return
	}
	j.written += int64(len(rows))
	sh.flushes.Add(1)
	sh.events.Add(int64(len(batch)))
	sh.rows.Add(int64(len(rows)))
	sh.notify(ctx, jobChannel(j.id), strconv.FormatInt(j.written, 10))
}

// coalesce numbers events as rows after the first, joining consecutive
// "delta" events, whose data a page appends.
func coalesce(events []jobEvent, first int64) []store.JobEvent {
	rows := make([]store.JobEvent, 0, len(events))
	for i := 0; i < len(events); i++ {
		e := events[i]
		if e.name == "delta" && i+1 < len(events) && events[i+1].name == "delta" {
			var b strings.Builder
			for ; i < len(events) && events[i].name == "delta"; i++ {
				b.WriteString(events[i].data)
			}
			i--
			e.data = b.String()
		}
		rows = append(rows, store.JobEvent{Seq: first + int64(len(rows)) + 1, Name: e.name, Data: e.data})
	}
	return rows
}

// end writes the job's last events and how it ended, and tells its followers.
func (sh *sharedJobs) end(j *job) {
	j.mu.Lock()
	if j.flushAt != nil {
		j.flushAt.Stop()
	}
	j.mu.Unlock()
	j.flush()
	if sh.dead.Load() {
		return
	}
	ctx, cancel := sh.dbCtx()
	defer cancel()
	held, err := sh.db.EndJob(ctx, j.id, sh.instance, jobOutcome(j.err), endedKeep)
	switch {
	case err != nil:
		sh.log.Error("job end", "kind", j.kind, "key", j.key, "err", err)
	case !held:
		sh.log.Warn("job ended after another instance took it over", "kind", j.kind, "key", j.key, "ref", j.ref)
	}
	sh.notify(ctx, jobChannel(j.id), "end")
}

// jobOutcome is how err ends a job, as the database keeps it.
func jobOutcome(err error) store.JobOutcome {
	if err == nil {
		return store.JobOutcome{}
	}
	out := store.JobOutcome{Error: err.Error(), ErrorCode: store.ErrorCode(err), Cancelled: errors.Is(err, context.Canceled)}
	if out.ErrorCode != store.EINTERNAL {
		out.Error = store.ErrorMessage(err)
	}
	return out
}

// outcomeErr is the error of a job that ended as row says.
func outcomeErr(row *store.Job) error {
	if row.Error == "" && !row.Cancelled {
		return nil
	}
	var err error = errors.New(row.Error)
	if row.ErrorCode != "" && row.ErrorCode != store.EINTERNAL {
		err = &store.Error{Code: row.ErrorCode, Message: row.Error}
	}
	if row.Cancelled {
		err = fmt.Errorf("%w: %w", context.Canceled, err)
	}
	return err
}

// jobChannel is where a job's events and end are announced.
func jobChannel(id string) string { return "job:" + id }

// instanceChannel is where an instance hears that one of its jobs is
// asked to stop.
func instanceChannel(instance string) string { return "jobs:" + instance }

// notify sends a notification; a lost one only delays a follower until
// its next poll, so failures are logged, not returned.
func (sh *sharedJobs) notify(ctx context.Context, channel, payload string) {
	if err := sh.db.Notify(ctx, channel, payload); err != nil {
		sh.log.Warn("job notify", "channel", channel, "err", err)
	}
}

// beat renews the leases of this instance's jobs and applies the cancel
// requests they bring, every heartbeat and whenever another instance
// asks; and it sweeps for expired jobs every heartbeat.
func (sh *sharedJobs) beat() {
	asked, err := sh.db.Listen(sh.ctx, instanceChannel(sh.instance))
	if err != nil {
		sh.log.Error("job listen", "err", err)
	}
	tick := time.NewTicker(sh.heartbeat)
	defer tick.Stop()
	sh.sweep()
	for {
		select {
		case <-sh.ctx.Done():
			return
		case _, ok := <-asked:
			if !ok {
				asked = nil
				continue
			}
			sh.renew()
		case <-tick.C:
			sh.renew()
			sh.sweep()
		}
	}
}

// renew renews the leases of the jobs this instance runs, cancels those
// that someone asked to stop, and those it no longer holds.
func (sh *sharedJobs) renew() {
	sh.r.mu.Lock()
	running := make(map[string]*job, len(sh.r.jobs))
	ids := make([]string, 0, len(sh.r.jobs))
	for _, j := range sh.r.jobs {
		if j.shared != nil {
			running[j.id] = j
			ids = append(ids, j.id)
		}
	}
	sh.r.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := sh.dbCtx()
	defer cancel()
	rows, err := sh.db.RenewJobs(ctx, sh.instance, ids, sh.lease)
	if err != nil {
		sh.log.Error("job lease", "jobs", len(ids), "err", err)
		return
	}
	held := make(map[string]bool, len(rows))
	for _, row := range rows {
		held[row.ID] = true
		if row.Cancel != "" {
			running[row.ID].cancel(cancelCause(row.Cancel))
		}
	}
	for id, j := range running {
		if !held[id] && !j.ended() {
			sh.log.Warn("job lease lost", "kind", j.kind, "key", j.key, "ref", j.ref)
			j.cancel(errLeaseLost)
		}
	}
}

// cancelCause is the cause a cancel request names, as the error this
// package cancels with.
func cancelCause(text string) error {
	for _, cause := range []error{errStopped, errLeft, errShutdown, errCancelled, errLeaseLost} {
		if cause.Error() == text {
			return cause
		}
	}
	return errors.New(text)
}

// sweep recovers the jobs whose lease expired, then purges the jobs that
// ended a while ago.
func (sh *sharedJobs) sweep() {
	ctx, cancel := sh.dbCtx()
	defer cancel()
	rows, err := sh.db.RecoverExpiredJobs(ctx, sh.instance, sh.lease)
	if err != nil {
		sh.log.Error("job sweep", "err", err)
	}
	for _, row := range rows {
		sh.recovered.Add(1)
		sh.recover(ctx, row)
		if _, err := sh.db.EndJob(ctx, row.ID, sh.instance, store.JobOutcome{Error: interrupted, ErrorCode: store.EINTERNAL}, endedKeep); err != nil {
			sh.log.Error("job end", "kind", row.Kind, "key", row.Key, "err", err)
		}
		sh.notify(ctx, jobChannel(row.ID), "end")
	}
	if _, err := sh.db.PurgeEndedJobs(ctx); err != nil {
		sh.log.Error("job purge", "err", err)
	}
}

// recover marks the work of a job whose instance died as interrupted, as
// store.RecoverInterrupted does at the start of a single instance: its
// extraction run or its plan fails with a message saying to run it again.
// A reply stored nothing yet: the person retries it.
//
// A job whose instance died between its setup and recording its ref names
// its work by its key alone: as one job runs per key, the extraction
// running for the key's thread, or the plan running for its snapshot, is
// that job's.
func (sh *sharedJobs) recover(ctx context.Context, row *store.Job) {
	var err error
	switch row.Kind {
	case "extraction":
		ref := row.Ref
		if threadID, ok := strings.CutPrefix(row.Key, extractKey("")); ok && ref == "" {
			var h *store.Handoff
			if h, err = sh.db.FindHandoffByThread(ctx, threadID); err == nil {
				ref = h.ID
			}
		}
		if ref != "" {
			_, err = sh.db.FailInterruptedExtraction(ctx, ref)
		}
	case "plan":
		var refs []string
		if row.Ref != "" {
			refs = []string{row.Ref}
		} else if snapshotID, ok := strings.CutPrefix(row.Key, planKey("")); ok {
			var plans []*store.Plan
			plans, err = sh.db.FindPlans(ctx, store.PlanFilter{SnapshotID: snapshotID})
			for _, p := range plans {
				if p.Status == store.PlanRunning {
					refs = append(refs, p.ID)
				}
			}
		}
		for _, ref := range refs {
			if _, ferr := sh.db.FailInterruptedPlan(ctx, ref); ferr != nil {
				err = errors.Join(err, ferr)
			}
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		err = nil // nothing was made before the instance died
	}
	if err != nil {
		sh.log.Error("job recovery", "kind", row.Kind, "key", row.Key, "ref", row.Ref, "err", err)
		return
	}
	sh.log.Warn("job recovered: its instance stopped", "kind", row.Kind, "key", row.Key, "ref", row.Ref, "from", row.Instance)
}

// find returns the job another instance runs under key, or nil.
func (sh *sharedJobs) find(key string) *job {
	ctx, cancel := sh.dbCtx()
	defer cancel()
	row, err := sh.db.FindJob(ctx, key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			sh.log.Error("job find", "key", key, "err", err)
		}
		return nil
	}
	if !row.Live() || row.Instance == sh.instance {
		return nil
	}
	return sh.remoteJob(row)
}

// watchedFor returns how much longer a page on another instance is known
// to follow j; zero if none.
func (sh *sharedJobs) watchedFor(j *job) time.Duration {
	ctx, cancel := sh.dbCtx()
	defer cancel()
	left, err := sh.db.JobWatchedFor(ctx, j.id)
	if err != nil {
		sh.log.Error("job watchers", "kind", j.kind, "key", j.key, "err", err)
		return 0
	}
	return left
}

// watchTTL is how long a remote follower's watch lasts unless renewed:
// three heartbeats, and at least minWatchTTL, so that late renewals (a
// busy machine) do not end it. A job whose only follower on another
// instance leaves runs on up to that long.
func (sh *sharedJobs) watchTTL() time.Duration { return max(3*sh.heartbeat, minWatchTTL) }

// minWatchTTL is the shortest time a remote follower's watch lasts.
const minWatchTTL = time.Second

// remoteJob is the part of a job that another instance runs: this one
// follows it from the database while anyone here watches it.
type remoteJob struct {
	sh       *sharedJobs
	instance string // the job's instance
	// Guarded by the job's mu: the running follower, if any.
	stopFollow context.CancelFunc
	followed   chan struct{} // closed when the last follower has returned
	read       int64         // rows read; only the follower touches it
}

// remoteJob returns a job that follows the job of row from the database.
func (sh *sharedJobs) remoteJob(row *store.Job) *job {
	return &job{key: row.Key, kind: row.Kind, ref: row.Ref, id: row.ID,
		done: make(chan struct{}), changed: make(chan struct{}),
		cancel: func(error) {}, remote: &remoteJob{sh: sh, instance: row.Instance}}
}

// follow starts following j from the database; called with j.mu held.
func (rj *remoteJob) follow(j *job) {
	ctx, stop := context.WithCancel(rj.sh.ctx)
	prev, followed := rj.followed, make(chan struct{})
	started := rj.sh.goRun(func() {
		defer close(followed)
		if prev != nil {
			<-prev // one follower at a time reads the events
		}
		if !j.ended() {
			rj.run(ctx, j)
		}
	})
	if !started {
		stop()
		return
	}
	rj.stopFollow, rj.followed = stop, followed
}

// unfollow stops following; called with j.mu held.
func (rj *remoteJob) unfollow() {
	if rj.stopFollow != nil {
		rj.stopFollow()
		rj.stopFollow = nil
	}
}

// run reads j's events from the database as its instance announces them
// (or every heartbeat, in case an announcement was lost), renews the
// watch, and ends j when the job has ended there.
func (rj *remoteJob) run(ctx context.Context, j *job) {
	sh := rj.sh
	notes, err := sh.db.Listen(ctx, jobChannel(j.id))
	if err != nil {
		return // ctx ended
	}
	tick := time.NewTicker(sh.heartbeat)
	defer tick.Stop()
	rj.watch(ctx, j)
	checkEnd := true
	for {
		if !rj.readEvents(ctx, j) {
			return
		}
		if checkEnd && rj.ended(ctx, j) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case p, ok := <-notes:
			if !ok {
				return
			}
			// A number announces events; anything else may be the end,
			// or a lost connection.
			_, err := strconv.ParseInt(p, 10, 64)
			checkEnd = err != nil
		case <-tick.C:
			rj.watch(ctx, j)
			checkEnd = true
		}
	}
}

// watch tells j's instance that a page here follows it.
func (rj *remoteJob) watch(ctx context.Context, j *job) {
	if err := rj.sh.db.WatchJob(ctx, j.id, rj.sh.watchTTL()); err != nil && ctx.Err() == nil {
		rj.sh.log.Warn("job watch", "kind", j.kind, "key", j.key, "err", err)
	}
}

// readEvents adds the events written since the last read to j; false if
// ctx ended.
func (rj *remoteJob) readEvents(ctx context.Context, j *job) bool {
	events, err := rj.sh.db.JobEvents(ctx, j.id, rj.read)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		rj.sh.log.Warn("job events", "kind", j.kind, "key", j.key, "err", err)
		return true
	}
	if len(events) == 0 {
		return true
	}
	rj.read = events[len(events)-1].Seq
	j.mu.Lock()
	for _, e := range events {
		j.events = append(j.events, jobEvent{e.Name, e.Data})
	}
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
	return true
}

// ended reports whether j has ended on its instance; then it has read j's
// last events, set how it ended and closed j.done.
func (rj *remoteJob) ended(ctx context.Context, j *job) bool {
	row, err := rj.sh.db.FindJob(ctx, j.key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		row = nil // purged: how it ended is gone
	case err != nil:
		if ctx.Err() == nil {
			rj.sh.log.Warn("job state", "kind", j.kind, "key", j.key, "err", err)
		}
		return false
	case row.ID == j.id && row.Live():
		return false
	case row.ID != j.id:
		row = nil // the key runs again: this job ended long ago
	}
	if row != nil {
		if !rj.readEvents(ctx, j) {
			return false
		}
		j.err = outcomeErr(row)
	}
	close(j.done)
	j.mu.Lock()
	close(j.changed) // wake followers waiting on events
	j.changed = make(chan struct{})
	j.mu.Unlock()
	return true
}

// stop asks j's instance to cancel it with cause, and tells it at once.
func (rj *remoteJob) stop(j *job, cause error) {
	ctx, cancel := rj.sh.dbCtx()
	defer cancel()
	row, err := rj.sh.db.RequestJobCancel(ctx, j.id, cause.Error())
	if err != nil {
		rj.sh.log.Error("job cancel", "kind", j.kind, "key", j.key, "err", err)
		return
	}
	rj.sh.notify(ctx, instanceChannel(row.Instance), j.key)
}
