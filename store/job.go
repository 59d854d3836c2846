package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// Background jobs shared by several instances. On PostgreSQL several Baton
// instances serve one database; a job (a reply, an extraction, a plan)
// runs on one of them, and the others must see it: a second start joins
// it, a page on another instance follows its events, Stop there cancels
// it, and when its instance dies another one marks its work interrupted.
//
// A job is a row of jobs under its key, claimed by one instance for a
// lease that its heartbeat renews (RenewJobs). Its events are rows of
// job_events, numbered from 1, that followers read after the last one
// they have (JobEvents). Notify and Listen wake followers and owners
// instead of having them poll: on PostgreSQL through LISTEN/NOTIFY, on
// SQLite within the process. A job whose lease ran out is recovered by
// exactly one instance (RecoverExpiredJobs). An ended job keeps its row
// and events for a while (EndJob's keep), so that a follower that was
// behind reads the last events and how the job ended; PurgeEndedJobs
// removes them afterwards.

// JobState is where a shared job is in its life.
type JobState string

// States of a shared job.
const (
	// JobRunning jobs run on their instance, under its lease.
	JobRunning JobState = "running"
	// JobRecovering jobs lost their instance; another one, now named as
	// their instance, is marking their work interrupted.
	JobRecovering JobState = "recovering"
	// JobEnded jobs have ended; the row says how.
	JobEnded JobState = "ended"
)

// Job is a background job as the database shares it among instances.
type Job struct {
	ID   string // this run of the key: a key that runs again gets a new ID
	Key  string // one job runs per key ("extract:<thread ID>")
	Kind string // what it is, for logs and for recovery: "reply", "extraction", "plan"
	// Ref is the ID of what the job writes to (a handoff, a plan); empty
	// until the job's setup has set it.
	Ref string
	// Instance is the ID of the instance that runs the job, or recovers it.
	Instance   string
	State      JobState
	LeaseUntil time.Time
	// Cancel is the cause of a requested cancel ("stopped by the user"),
	// empty when nobody asked.
	Cancel string
	// How the job ended: its error's text and code, and whether it was
	// cancelled. All empty while it runs and when it succeeded.
	Error     string
	ErrorCode string
	Cancelled bool
	// Previous is the job whose expired lease ClaimJob took over, so that
	// the caller recovers it before it starts; nil otherwise.
	Previous *Job
}

// Live reports whether the job has not ended.
func (j *Job) Live() bool { return j.State != JobEnded }

// JobClaim asks for a key.
type JobClaim struct {
	Key, Kind string
	// Instance is the ID of the claiming instance.
	Instance string
	// Lease is how long the claim holds without being renewed.
	Lease time.Duration
}

// JobEvent is one event a job emitted: its number, name and data.
type JobEvent struct {
	Seq  int64
	Name string
	Data string
}

// JobOutcome is how a job ended.
type JobOutcome struct {
	Error     string // the error's text; empty on success
	ErrorCode string // the store code of the error (ErrorCode)
	Cancelled bool
}

const jobColumns = `id, key, kind, ref, instance, state, lease_until, cancel, error, error_code, cancelled`

func scanJob(s scanner) (*Job, error) {
	var j Job
	var state, lease string
	var cancelled int64
	if err := s.Scan(&j.ID, &j.Key, &j.Kind, &j.Ref, &j.Instance, &state, &lease,
		&j.Cancel, &j.Error, &j.ErrorCode, &cancelled); err != nil {
		return nil, err
	}
	j.State, j.LeaseUntil, j.Cancelled = JobState(state), parseTime(lease), cancelled != 0
	return &j, nil
}

// ClaimJob claims in.Key for in.Instance, for in.Lease, and returns the
// new job. Only one job runs per key across instances: while another
// holds a live lease on the key, the claim fails with ECONFLICT naming
// the holder. A key whose job ended is claimed afresh (its old events are
// removed); one whose lease expired is taken over, and the job returned
// names the expired one as Previous, for the caller to recover.
func (db *DB) ClaimJob(ctx context.Context, in JobClaim) (*Job, error) {
	if in.Key == "" || in.Instance == "" || in.Lease <= 0 {
		return nil, Errorf(EINVALID, "A job claim needs a key, an instance and a lease.")
	}
	var out *Job
	err := db.inTx(ctx, func(tx *txn) error {
		now := db.now()
		prev, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE key = ?`, in.Key))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			prev = nil
		case err != nil:
			return err
		case prev.Live() && prev.LeaseUntil.After(now):
			return Errorf(ECONFLICT, "The %s %s already runs on Baton instance %s (its lease holds until %s).",
				prev.Kind, in.Key, prev.Instance, prev.LeaseUntil.Format(time.RFC3339))
		default:
			if _, err := tx.ExecContext(ctx, `DELETE FROM job_events WHERE job_id = ?`, prev.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE id = ?`, prev.ID); err != nil {
				return err
			}
		}
		out = &Job{ID: newID(), Key: in.Key, Kind: in.Kind, Instance: in.Instance, State: JobRunning,
			LeaseUntil: now.Add(in.Lease)}
		if prev != nil && prev.Live() {
			out.Previous = prev
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO jobs (key, id, kind, instance, state, lease_until, created_at) VALUES (?, ?, ?, ?, 'running', ?, ?)`,
			out.Key, out.ID, out.Kind, out.Instance, formatTime(out.LeaseUntil), formatTime(now))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim job %s: %w", in.Key, err)
	}
	return out, nil
}

// FindJob returns the job of key, running or ended, or ENOTFOUND.
func (db *DB) FindJob(ctx context.Context, key string) (*Job, error) {
	j, err := scanJob(db.read.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE key = ?`, key))
	if err != nil {
		return nil, findErr(err, "job %s", key)
	}
	return j, nil
}

// SetJobRef records what a job writes to, once its setup has made it.
func (db *DB) SetJobRef(ctx context.Context, id, ref string) error {
	if _, err := db.write.ExecContext(ctx, `UPDATE jobs SET ref = ? WHERE id = ?`, ref, id); err != nil {
		return fmt.Errorf("set ref of job %s: %w", id, err)
	}
	return nil
}

// RenewJobs extends, to now+lease, the leases of those of the jobs ids
// names that instance still holds, and returns them: their Cancel says
// whether someone asked to cancel them. A job missing from the result was
// taken over by another instance after its lease expired, or ended.
func (db *DB) RenewJobs(ctx context.Context, instance string, ids []string, lease time.Duration) ([]*Job, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{formatTime(db.now().Add(lease)), instance}
	for _, id := range ids {
		args = append(args, id)
	}
	jobs, err := scanAll(scanJob)(db.write.QueryContext(ctx,
		`UPDATE jobs SET lease_until = ? WHERE instance = ? AND state = 'running'
		 AND id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) RETURNING `+jobColumns, args...))
	if err != nil {
		return nil, fmt.Errorf("renew the leases of %d jobs: %w", len(ids), err)
	}
	return jobs, nil
}

// RequestJobCancel asks the instance that runs job id to cancel it with
// cause, and returns the job (its Instance is whom to notify). A job that
// ended, or was asked already, keeps the first request.
func (db *DB) RequestJobCancel(ctx context.Context, id, cause string) (*Job, error) {
	if _, err := db.write.ExecContext(ctx,
		`UPDATE jobs SET cancel = ? WHERE id = ? AND state = 'running' AND cancel = ''`, cause, id); err != nil {
		return nil, fmt.Errorf("request to cancel job %s: %w", id, err)
	}
	j, err := scanJob(db.write.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	if err != nil {
		return nil, findErr(err, "job %s", id)
	}
	return j, nil
}

// WatchJob records that a page on some instance follows job id, for ttl
// from now: the job's instance does not cancel it as left alone meanwhile.
func (db *DB) WatchJob(ctx context.Context, id string, ttl time.Duration) error {
	until := formatTime(db.now().Add(ttl))
	if _, err := db.write.ExecContext(ctx,
		`UPDATE jobs SET watched_until = ? WHERE id = ? AND watched_until < ?`, until, id, until); err != nil {
		return fmt.Errorf("watch job %s: %w", id, err)
	}
	return nil
}

// JobWatchedFor returns how much longer a page on some instance follows
// job id, as WatchJob recorded; zero when none does.
func (db *DB) JobWatchedFor(ctx context.Context, id string) (time.Duration, error) {
	var until string
	if err := db.read.QueryRowContext(ctx, `SELECT watched_until FROM jobs WHERE id = ?`, id).Scan(&until); err != nil {
		return 0, findErr(err, "job %s", id)
	}
	if until == "" {
		return 0, nil
	}
	return max(0, parseTime(until).Sub(db.now())), nil
}

// AppendJobEvents stores events of job id, in one statement; their Seq
// must continue the job's numbering (1 for the first event).
func (db *DB) AppendJobEvents(ctx context.Context, id string, events []JobEvent) error {
	if len(events) == 0 {
		return nil
	}
	args := make([]any, 0, 4*len(events))
	for _, e := range events {
		args = append(args, id, e.Seq, e.Name, e.Data)
	}
	q := `INSERT INTO job_events (job_id, seq, name, data) VALUES (?, ?, ?, ?)` +
		strings.Repeat(", (?, ?, ?, ?)", len(events)-1)
	if _, err := db.write.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("store %d events of job %s: %w", len(events), id, err)
	}
	return nil
}

// JobEvents returns the events of job id numbered after after, in order.
func (db *DB) JobEvents(ctx context.Context, id string, after int64) ([]JobEvent, error) {
	events, err := scanAll(func(s scanner) (JobEvent, error) {
		var e JobEvent
		err := s.Scan(&e.Seq, &e.Name, &e.Data)
		return e, err
	})(db.read.QueryContext(ctx,
		`SELECT seq, name, data FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq`, id, after))
	if err != nil {
		return nil, fmt.Errorf("read events of job %s: %w", id, err)
	}
	return events, nil
}

// EndJob records how job id ended, if instance still holds it, and keeps
// it and its events for keep, for followers that are behind. It reports
// whether instance held the job: after an instance lost its lease, the
// job is another's to end.
func (db *DB) EndJob(ctx context.Context, id, instance string, out JobOutcome, keep time.Duration) (bool, error) {
	res, err := db.write.ExecContext(ctx,
		`UPDATE jobs SET state = 'ended', error = ?, error_code = ?, cancelled = ?, lease_until = ?
		 WHERE id = ? AND instance = ? AND state <> 'ended'`,
		out.Error, out.ErrorCode, out.Cancelled, formatTime(db.now().Add(keep)), id, instance)
	if err != nil {
		return false, fmt.Errorf("end job %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// RecoverExpiredJobs claims, for instance and for lease, the jobs whose
// lease has expired (their instance died, or a recovery did), and returns
// them for instance to recover and end. One statement claims them, so
// that of instances sweeping at once exactly one gets each job.
func (db *DB) RecoverExpiredJobs(ctx context.Context, instance string, lease time.Duration) ([]*Job, error) {
	now := db.now()
	jobs, err := scanAll(scanJob)(db.write.QueryContext(ctx,
		`UPDATE jobs SET state = 'recovering', instance = ?, lease_until = ?, cancel = ''
		 WHERE state IN ('running', 'recovering') AND lease_until < ?
		 RETURNING `+jobColumns, instance, formatTime(now.Add(lease)), formatTime(now)))
	if err != nil {
		return nil, fmt.Errorf("claim expired jobs: %w", err)
	}
	return jobs, nil
}

// PurgeEndedJobs removes the jobs that ended longer ago than EndJob's
// keep, with their events, and returns how many.
func (db *DB) PurgeEndedJobs(ctx context.Context) (int, error) {
	var n int64
	err := db.inTx(ctx, func(tx *txn) error {
		now := formatTime(db.now())
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM job_events WHERE job_id IN (SELECT id FROM jobs WHERE state = 'ended' AND lease_until < ?)`, now); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE state = 'ended' AND lease_until < ?`, now)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("purge ended jobs: %w", err)
	}
	return int(n), nil
}

// Messages of work that an instance left running when it stopped.
const (
	interruptedRun  = "Interrupted: the Baton instance running it stopped. Run it again."
	interruptedPlan = "Interrupted: the Baton instance running it stopped. Start planning again."
)

// FailInterruptedExtraction ends the running extraction of handoff
// handoffID, whose instance stopped, as failed, as RecoverInterrupted does
// for every run at start-up. It reports whether a run was running.
func (db *DB) FailInterruptedExtraction(ctx context.Context, handoffID string) (bool, error) {
	res, err := db.write.ExecContext(ctx,
		`UPDATE extraction_runs SET status = 'failed', error = ?, finished_at = ?
		 WHERE handoff_id = ? AND status = 'running'`, interruptedRun, formatTime(db.now()), handoffID)
	if err != nil {
		return false, fmt.Errorf("fail the interrupted extraction of handoff %s: %w", handoffID, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// FailInterruptedPlan ends plan id, whose instance stopped, as failed if it
// is still running, as RecoverInterrupted does for every plan at start-up.
// It reports whether the plan was running.
func (db *DB) FailInterruptedPlan(ctx context.Context, id string) (bool, error) {
	res, err := db.write.ExecContext(ctx,
		`UPDATE plans SET status = 'failed', error = ?, finished_at = ?
		 WHERE id = ? AND status = 'running'`, interruptedPlan, formatTime(db.now()), id)
	if err != nil {
		return false, fmt.Errorf("fail the interrupted plan %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Notifications. Notify sends a payload on a channel to every listener of
// the database, on every instance; Listen receives them. They are hints
// that something changed, to read from the database: a listener whose
// buffer is full misses payloads, and on PostgreSQL a lost connection
// loses those sent meanwhile (the listener then receives "" to say so).
// Listeners must poll now and then as well.

// pgChannel is the one PostgreSQL channel Baton notifies on; Notify's
// channel travels in the payload, before a newline.
const pgChannel = "baton"

// maxNotifyPayload is the longest payload Notify sends: PostgreSQL's
// limit is 8000 bytes.
const maxNotifyPayload = 7000

// Notify sends payload to the listeners of channel, on every instance of
// the database. channel must not hold a newline.
func (db *DB) Notify(ctx context.Context, channel, payload string) error {
	if strings.ContainsRune(channel, '\n') || len(channel)+len(payload) > maxNotifyPayload {
		return Errorf(EINVALID, "A notification's channel has no newline and its payload is at most %d bytes.", maxNotifyPayload)
	}
	if db.eng != enginePostgres {
		db.hub.deliver(channel, payload)
		return nil
	}
	if _, err := db.write.ExecContext(ctx, `SELECT pg_notify(?, ?)`, pgChannel, channel+"\n"+payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}

// Listen returns a channel that receives the payloads sent to channel from
// now until ctx ends; then it is closed. See Notify for what may be missed.
// On PostgreSQL, Listen waits (up to listenWait) until its connection
// listens, so that what is sent after it returns arrives.
func (db *DB) Listen(ctx context.Context, channel string) (<-chan string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, ready := db.hub.subscribe(ctx, db, channel)
	select {
	case <-ready:
	case <-ctx.Done():
	case <-time.After(listenWait):
	}
	return c, nil
}

// listenWait is how long Listen waits for PostgreSQL to listen; past it
// (the database is unreachable), Listen returns, and its channel receives
// "" once the listener connects.
const listenWait = 5 * time.Second

// hub delivers notifications to this process's listeners. On PostgreSQL
// it holds one connection of the pool that LISTENs while anyone listens,
// and opens another when that one breaks.
type hub struct {
	mu    sync.Mutex
	subs  map[string]map[chan string]struct{}
	n     int                // listeners
	stop  context.CancelFunc // ends the PostgreSQL listener; nil when none runs
	done  chan struct{}      // closed when the PostgreSQL listener has ended
	ready chan struct{}      // closed when the PostgreSQL listener first listens
}

// closedChan is a channel that is closed: SQLite's hub is always ready.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// hubBuffer is how many payloads a listener holds before it misses some.
const hubBuffer = 64

func (h *hub) subscribe(ctx context.Context, db *DB, channel string) (_ <-chan string, ready <-chan struct{}) {
	c := make(chan string, hubBuffer)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = make(map[string]map[chan string]struct{})
	}
	if h.subs[channel] == nil {
		h.subs[channel] = make(map[chan string]struct{})
	}
	h.subs[channel][c] = struct{}{}
	h.n++
	ready = closedChan
	if db.eng == enginePostgres {
		if h.stop == nil {
			lctx, stop := context.WithCancel(context.Background())
			h.stop, h.done, h.ready = stop, make(chan struct{}), make(chan struct{})
			go db.listenLoop(lctx, h.done, h.ready)
		}
		ready = h.ready
	}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		delete(h.subs[channel], c)
		if len(h.subs[channel]) == 0 {
			delete(h.subs, channel)
		}
		close(c)
		h.n--
		var done chan struct{}
		if h.n == 0 && h.stop != nil {
			h.stop()
			done, h.stop, h.done, h.ready = h.done, nil, nil, nil
		}
		h.mu.Unlock()
		if done != nil {
			<-done // the listener's connection is back in the pool
		}
	})
	return c, ready
}

// deliver passes payload to the listeners of channel, without waiting for
// any of them; "" as the channel reaches every listener.
func (h *hub) deliver(channel, payload string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	send := func(c chan string) {
		select {
		case c <- payload:
		default: // full: the listener polls anyway
		}
	}
	if channel == "" {
		for _, subs := range h.subs {
			for c := range subs {
				send(c)
			}
		}
		return
	}
	for c := range h.subs[channel] {
		send(c)
	}
}

// Reconnection delays of the PostgreSQL listener.
const (
	listenRetryMin = 50 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// listenLoop listens on PostgreSQL until ctx ends, connecting again after
// a failure; after each new connection every listener receives "", as
// notifications may have been lost in between.
func (db *DB) listenLoop(ctx context.Context, done, ready chan struct{}) {
	defer close(done)
	delay := listenRetryMin
	var once sync.Once
	for first := true; ; first = false {
		// A failure needs no report: the next attempt says whether the
		// database is back, and listeners poll meanwhile.
		connected := db.listenOnce(ctx, func() {
			if !first {
				db.hub.deliver("", "")
			}
			once.Do(func() { close(ready) })
		})
		if ctx.Err() != nil {
			return
		}
		if connected {
			delay = listenRetryMin
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		delay = min(2*delay, listenRetryMax)
	}
}

// listenOnce takes a connection from the pool, LISTENs on it and delivers
// what arrives until ctx ends or the connection fails, and reports whether
// it listened. The connection is closed afterwards rather than returned to
// the pool, still listening.
func (db *DB) listenOnce(ctx context.Context, connected func()) bool {
	conn, err := db.write.db.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	ok := false
	conn.Raw(func(dc any) error {
		sc, isPgx := dc.(*stdlib.Conn)
		if !isPgx {
			return errors.New("the PostgreSQL connection is not pgx's")
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, `LISTEN `+pgChannel); err != nil {
			return driver.ErrBadConn
		}
		ok = true
		connected()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return driver.ErrBadConn // never reuse it: it may still listen
			}
			channel, payload, found := strings.Cut(n.Payload, "\n")
			if found {
				db.hub.deliver(channel, payload)
			}
		}
	})
	return ok
}
