-- +goose Up
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE threads (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    parent_thread_id TEXT REFERENCES threads(id) ON DELETE SET NULL,
    title            TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX threads_workspace_updated ON threads(workspace_id, updated_at DESC);

CREATE TABLE messages (
    id            TEXT PRIMARY KEY,
    thread_id     TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    role          TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content       TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'stopped', 'failed')),
    error         TEXT NOT NULL DEFAULT '',
    model         TEXT NOT NULL DEFAULT '',
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    response_id   TEXT NOT NULL DEFAULT '',
    reply_to      TEXT REFERENCES messages(id) ON DELETE CASCADE,
    pinned        INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
);
CREATE INDEX messages_thread_created ON messages(thread_id, created_at, id);
-- One reply per user message: a retry or a reconnect never duplicates it.
CREATE UNIQUE INDEX messages_one_reply ON messages(reply_to) WHERE reply_to IS NOT NULL;

-- +goose Down
DROP TABLE messages;
DROP TABLE threads;
DROP TABLE workspaces;
DROP TABLE settings;
