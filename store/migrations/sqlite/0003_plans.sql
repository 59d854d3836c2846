-- +goose Up
-- Plans written by the plan agent from a frozen snapshot. Running planning
-- again on the same snapshot makes a new version.
CREATE TABLE plans (
    id            TEXT PRIMARY KEY,
    handoff_id    TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    snapshot_id   TEXT NOT NULL REFERENCES snapshots(id),
    version       INTEGER NOT NULL CHECK (version >= 1),
    status        TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'complete', 'stopped', 'failed', 'cancelled')),
    markdown      TEXT NOT NULL DEFAULT '',
    summary       TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    coverage      TEXT NOT NULL DEFAULT '{"covered":[],"uncovered":[]}', -- JSON: decision labels the plan cites and misses
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    model         TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    finished_at   TEXT,
    UNIQUE (snapshot_id, version)
);
CREATE INDEX plans_handoff_created ON plans(handoff_id, created_at);
-- One running plan per snapshot: a double click never starts two agents.
CREATE UNIQUE INDEX plans_one_running ON plans(snapshot_id) WHERE status = 'running';

-- What the plan agent did, in order: model calls and tool calls.
CREATE TABLE plan_steps (
    plan_id       TEXT NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    n             INTEGER NOT NULL CHECK (n >= 1),
    kind          TEXT NOT NULL CHECK (kind IN ('model_call', 'tool_call')),
    tool          TEXT NOT NULL DEFAULT '',
    input         TEXT NOT NULL DEFAULT '', -- JSON the model sent, tool calls only
    result        TEXT NOT NULL DEFAULT '', -- truncated
    is_error      INTEGER NOT NULL DEFAULT 0,
    description   TEXT NOT NULL DEFAULT '',
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (plan_id, n)
);

-- +goose Down
DROP TABLE plan_steps;
DROP TABLE plans;
