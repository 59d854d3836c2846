-- +goose Up
-- A thread's handoff: what the brainstorm decided, reviewed by people before planning.
CREATE TABLE handoffs (
    id           TEXT PRIMARY KEY,
    thread_id    TEXT NOT NULL UNIQUE REFERENCES threads(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    status       TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'frozen')),
    summary      TEXT NOT NULL DEFAULT '',
    version      INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);

CREATE TABLE decisions (
    id                TEXT PRIMARY KEY,
    handoff_id        TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    content           TEXT NOT NULL,
    source            TEXT NOT NULL CHECK (source IN ('ai-extracted', 'user-pinned', 'user-edited')),
    confidence        REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
    message_ids       TEXT NOT NULL DEFAULT '[]', -- JSON array: the messages it came from
    pinned_message_id TEXT REFERENCES messages(id) ON DELETE SET NULL,
    during_planning   INTEGER NOT NULL DEFAULT 0,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX decisions_handoff ON decisions(handoff_id, created_at, id);
CREATE UNIQUE INDEX decisions_one_pin ON decisions(handoff_id, pinned_message_id) WHERE pinned_message_id IS NOT NULL;

CREATE TABLE file_refs (
    id          TEXT PRIMARY KEY,
    handoff_id  TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    relevance   TEXT NOT NULL CHECK (relevance IN ('high', 'medium', 'low')),
    context     TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL CHECK (source IN ('ai-extracted', 'user-pinned', 'user-edited')),
    message_ids TEXT NOT NULL DEFAULT '[]',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (handoff_id, path)
);

CREATE TABLE risks (
    id          TEXT PRIMARY KEY,
    handoff_id  TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    description TEXT NOT NULL,
    severity    TEXT NOT NULL CHECK (severity IN ('high', 'medium', 'low')),
    mitigation  TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL CHECK (source IN ('ai-extracted', 'user-pinned', 'user-edited')),
    message_ids TEXT NOT NULL DEFAULT '[]',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX risks_handoff ON risks(handoff_id, created_at, id);

-- One extraction at a time per handoff, enforced here and not only in memory.
CREATE TABLE extraction_runs (
    id          TEXT PRIMARY KEY,
    handoff_id  TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    status      TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
    error       TEXT NOT NULL DEFAULT '',
    added       INTEGER NOT NULL DEFAULT 0,
    started_at  TEXT NOT NULL,
    finished_at TEXT
);
CREATE UNIQUE INDEX extraction_runs_one_running ON extraction_runs(handoff_id) WHERE status = 'running';

-- Frozen handoffs: canonical JSON and its sha256. Never changed, never removed.
CREATE TABLE snapshots (
    id         TEXT PRIMARY KEY,
    handoff_id TEXT NOT NULL REFERENCES handoffs(id),
    payload    TEXT NOT NULL,
    sha256     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX snapshots_handoff ON snapshots(handoff_id, created_at);

-- +goose StatementBegin
CREATE TRIGGER snapshots_no_update BEFORE UPDATE ON snapshots
BEGIN
    SELECT RAISE(ABORT, 'snapshots are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER snapshots_no_delete BEFORE DELETE ON snapshots
BEGIN
    SELECT RAISE(ABORT, 'snapshots are immutable');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER snapshots_no_delete;
DROP TRIGGER snapshots_no_update;
DROP TABLE snapshots;
DROP TABLE extraction_runs;
DROP TABLE risks;
DROP TABLE file_refs;
DROP TABLE decisions;
DROP TABLE handoffs;
