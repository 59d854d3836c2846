-- +goose Up
-- Background jobs (replies, extractions, plans, thread-handoff summaries)
-- as several Baton instances on one database share them: one job runs per
-- key, on the instance that claimed it, which holds a lease and renews it
-- while the job runs; its events are kept for followers on the other
-- instances. Times are text of fixed width, compared in byte order
-- (COLLATE "C"). Nothing refers to other tables: a job's ref names what
-- it writes to (a handoff, a plan) without a foreign key, so that this
-- migration stands on its own.
CREATE TABLE jobs (
    key           TEXT PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE, -- this run of the key; events belong to it
    kind          TEXT NOT NULL,
    ref           TEXT NOT NULL DEFAULT '',
    instance      TEXT NOT NULL,        -- the instance that runs it (or recovers it)
    state         TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'recovering', 'ended')),
    lease_until   TEXT COLLATE "C" NOT NULL, -- running: the lease; ended: kept until then for late followers
    watched_until TEXT COLLATE "C" NOT NULL DEFAULT '',
    cancel        TEXT NOT NULL DEFAULT '', -- a requested cancel's cause, '' when none
    error         TEXT NOT NULL DEFAULT '',
    error_code    TEXT NOT NULL DEFAULT '',
    cancelled     INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
);
CREATE INDEX jobs_instance ON jobs(instance, state);
CREATE INDEX jobs_lease ON jobs(state, lease_until);

CREATE TABLE job_events (
    job_id TEXT NOT NULL,
    seq    BIGINT NOT NULL,
    name   TEXT NOT NULL,
    data   TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
);

-- +goose Down
DROP TABLE job_events;
DROP TABLE jobs;
