// Package mirror copies accepted thread-handoff summaries to a PostgreSQL
// table, thread_summaries, for teams that keep their records centrally
// (BATON_MIRROR_URL). SQLite stays the source of truth: accepting a
// handoff queues it in an outbox table in the same transaction, and the
// mirror drains the outbox. A mirror that is down never stops the local
// flow; it is retried, and catches up with nothing lost or doubled (rows
// are upserted by (workspace_id, handoff_id)).
package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-dev/baton/store"
)

// Outbox is what the mirror needs of the store: the queued handoffs and a
// way to settle each.
type Outbox interface {
	FindMirrorOutbox(ctx context.Context, limit int) ([]*store.MirrorItem, error)
	DeleteMirrorOutbox(ctx context.Context, handoffID string) error
	NoteMirrorFailure(ctx context.Context, handoffID, reason string) error
	CountMirrorOutbox(ctx context.Context) (int, error)
}

// Backoff is how long the mirror waits before each retry of a failed
// write: after the first try fails it retries three times, 1 s, 2 s and
// 4 s later, then gives up until the next handoff or the next minute.
var Backoff = []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second}

// RetryEvery is how often the mirror retries what waits in the outbox.
const RetryEvery = time.Minute

// Pool limits: the mirror is a side channel and keeps its footprint small.
const (
	maxConns        = 2
	maxConnIdleTime = 60 * time.Second
	maxConnLifetime = 10 * time.Minute
	// attemptTimeout bounds one write, connecting included.
	attemptTimeout = 10 * time.Second
)

// States of the mirror, as /healthz shows them.
const (
	StatusOK       = "ok"       // the outbox was drained on the last try (or nothing was queued yet)
	StatusDegraded = "degraded" // the last write failed after its retries; handoffs wait in the outbox
)

// Config configures a Mirror.
type Config struct {
	// URL is the PostgreSQL connection string (postgres://…).
	URL    string
	Outbox Outbox
	Logger *slog.Logger
	// Sleep waits for d or until ctx ends (returning its error); tests
	// replace it so that backoff takes no real time. Nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Ticker returns a channel that ticks every d and a func that stops it;
	// tests replace it. Nil means time.NewTicker.
	Ticker func(d time.Duration) (<-chan time.Time, func())
}

// Mirror copies the outbox to PostgreSQL. Run drains it on every Kick and
// every RetryEvery; Status reports how that goes.
type Mirror struct {
	pool   *pgxpool.Pool
	outbox Outbox
	log    *slog.Logger
	sleep  func(context.Context, time.Duration) error
	ticker func(time.Duration) (<-chan time.Time, func())
	kick   chan struct{}

	drain sync.Mutex // one drain at a time

	mu         sync.Mutex
	status     string
	lastError  string
	lastSyncAt time.Time
	ensured    bool // thread_summaries exists
}

// New returns a mirror for cfg.URL. It does not connect: the pool
// connects on first use, so that a mirror that is down does not stop
// Baton from starting. Returns an error for a URL that cannot be parsed.
func New(cfg Config) (*Mirror, error) {
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("BATON_MIRROR_URL is not a PostgreSQL connection string (%v): use postgres://user:password@host:5432/dbname", err)
	}
	pc.MaxConns = maxConns
	pc.MinConns = 0
	pc.MaxConnIdleTime = maxConnIdleTime
	pc.MaxConnLifetime = maxConnLifetime
	if pc.ConnConfig.ConnectTimeout == 0 || pc.ConnConfig.ConnectTimeout > attemptTimeout {
		pc.ConnConfig.ConnectTimeout = attemptTimeout
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		return nil, fmt.Errorf("mirror pool: %w", err)
	}
	m := &Mirror{pool: pool, outbox: cfg.Outbox, log: cfg.Logger, sleep: cfg.Sleep, ticker: cfg.Ticker,
		kick: make(chan struct{}, 1), status: StatusOK}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.sleep == nil {
		m.sleep = sleep
	}
	if m.ticker == nil {
		m.ticker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	return m, nil
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the pool. Call it after Run has returned.
func (m *Mirror) Close() { m.pool.Close() }

// Kick asks Run to drain the outbox now (after an accepted handoff). It
// never blocks.
func (m *Mirror) Kick() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Run drains the outbox once at start, then on every Kick and every
// RetryEvery, until ctx ends.
func (m *Mirror) Run(ctx context.Context) {
	tick, stop := m.ticker(RetryEvery)
	defer stop()
	for {
		m.Drain(ctx)
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		case <-tick:
		}
	}
}

// Status is the mirror's state for /healthz.
type Status struct {
	Status     string     `json:"status"` // StatusOK or StatusDegraded
	Pending    int        `json:"pending"`
	LastError  string     `json:"lastError,omitempty"`
	LastSyncAt *time.Time `json:"lastSyncAt,omitempty"`
}

// Status reports the mirror's state and how many handoffs wait for it.
func (m *Mirror) Status(ctx context.Context) Status {
	m.mu.Lock()
	st := Status{Status: m.status, LastError: m.lastError}
	if !m.lastSyncAt.IsZero() {
		t := m.lastSyncAt
		st.LastSyncAt = &t
	}
	m.mu.Unlock()
	st.Pending, _ = m.outbox.CountMirrorOutbox(ctx)
	return st
}

// Drain copies every queued handoff to PostgreSQL, oldest first. A write
// that fails is retried after each Backoff; if it still fails, the mirror
// is degraded (a WARN with handoff_store_status=degraded), the handoff
// stays queued and the drain stops until the next Kick or tick. It returns
// the last failure, or nil.
func (m *Mirror) Drain(ctx context.Context) error {
	m.drain.Lock()
	defer m.drain.Unlock()
	for {
		items, err := m.outbox.FindMirrorOutbox(ctx, 50)
		if err != nil {
			m.log.Error("mirror: read outbox", "err", err)
			return err
		}
		if len(items) == 0 {
			return nil
		}
		for _, it := range items {
			if err := m.writeWithRetries(ctx, it.Handoff); err != nil {
				if ctx.Err() != nil {
					return err
				}
				reason := err.Error()
				if err := m.outbox.NoteMirrorFailure(context.WithoutCancel(ctx), it.Handoff.ID, reason); err != nil {
					m.log.Error("mirror: note failure", "handoff_id", it.Handoff.ID, "err", err)
				}
				m.setState(StatusDegraded, reason)
				m.log.Warn("mirror: handoff not copied to PostgreSQL; it stays queued and is retried every minute",
					"handoff_store_status", StatusDegraded, "handoff_id", it.Handoff.ID,
					"attempts", len(Backoff)+1, "err", reason)
				return err
			}
			if err := m.outbox.DeleteMirrorOutbox(context.WithoutCancel(ctx), it.Handoff.ID); err != nil {
				m.log.Error("mirror: settle outbox", "handoff_id", it.Handoff.ID, "err", err)
				return err
			}
			m.mu.Lock()
			recovered := m.status == StatusDegraded
			m.status, m.lastError, m.lastSyncAt = StatusOK, "", time.Now().UTC()
			m.mu.Unlock()
			if recovered {
				m.log.Info("mirror: PostgreSQL reachable again", "handoff_store_status", StatusOK)
			}
			m.log.Info("mirror: handoff copied", "handoff_id", it.Handoff.ID)
		}
	}
}

func (m *Mirror) setState(status, lastError string) {
	m.mu.Lock()
	m.status, m.lastError = status, lastError
	m.mu.Unlock()
}

// writeWithRetries upserts h, retrying after each Backoff.
func (m *Mirror) writeWithRetries(ctx context.Context, h *store.ThreadHandoff) error {
	err := m.write(ctx, h)
	for _, d := range Backoff {
		if err == nil || ctx.Err() != nil {
			return err
		}
		m.log.Debug("mirror: write failed; retrying", "handoff_id", h.ID, "in", d, "err", err)
		if serr := m.sleep(ctx, d); serr != nil {
			return errors.Join(err, serr)
		}
		err = m.write(ctx, h)
	}
	return err
}

// createTable makes the mirror's table if it is missing.
const createTable = `CREATE TABLE IF NOT EXISTS thread_summaries (
    workspace_id     text        NOT NULL,
    handoff_id       text        NOT NULL,
    parent_thread_id text        NOT NULL,
    child_thread_id  text        NOT NULL,
    title            text        NOT NULL,
    summary_json     jsonb       NOT NULL,
    summary_md       text        NOT NULL,
    model            text        NOT NULL,
    response_id      text        NOT NULL,
    tokens_used      bigint      NOT NULL,
    created_at       timestamptz NOT NULL,
    mirrored_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, handoff_id)
)`

// upsert writes one summary; a second write of the same handoff replaces
// the first, so that a retry after a lost acknowledgement doubles nothing.
const upsert = `INSERT INTO thread_summaries (workspace_id, handoff_id, parent_thread_id, child_thread_id,
    title, summary_json, summary_md, model, response_id, tokens_used, created_at, mirrored_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now())
ON CONFLICT (workspace_id, handoff_id) DO UPDATE SET
    parent_thread_id = EXCLUDED.parent_thread_id, child_thread_id = EXCLUDED.child_thread_id,
    title = EXCLUDED.title, summary_json = EXCLUDED.summary_json, summary_md = EXCLUDED.summary_md,
    model = EXCLUDED.model, response_id = EXCLUDED.response_id, tokens_used = EXCLUDED.tokens_used,
    created_at = EXCLUDED.created_at, mirrored_at = now()`

// write upserts h once, making the table first if this mirror has not yet.
func (m *Mirror) write(ctx context.Context, h *store.ThreadHandoff) error {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	m.mu.Lock()
	ensured := m.ensured
	m.mu.Unlock()
	if !ensured {
		if _, err := m.pool.Exec(ctx, createTable); err != nil {
			return fmt.Errorf("create thread_summaries: %w", err)
		}
		m.mu.Lock()
		m.ensured = true
		m.mu.Unlock()
	}
	_, err := m.pool.Exec(ctx, upsert, h.WorkspaceID, h.ID, h.ParentThreadID, h.ChildThreadID, h.Title,
		h.SummaryJSON, h.SummaryMD, h.Model, h.ResponseID, h.TokensUsed, h.CreatedAt)
	if err != nil {
		return fmt.Errorf("upsert thread summary: %w", err)
	}
	return nil
}
