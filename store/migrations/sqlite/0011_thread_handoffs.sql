-- +goose Up
-- An accepted thread handoff: the summary that seeds a child thread. Only
-- accepted handoffs are stored; a preview that is declined leaves nothing.
CREATE TABLE thread_handoffs (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    parent_thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    -- One handoff per child: the child is created with it.
    child_thread_id  TEXT NOT NULL UNIQUE REFERENCES threads(id) ON DELETE CASCADE,
    title            TEXT NOT NULL,
    summary_json     TEXT NOT NULL,
    summary_md       TEXT NOT NULL,
    model            TEXT NOT NULL DEFAULT '',
    response_id      TEXT NOT NULL DEFAULT '',
    tokens_used      INTEGER NOT NULL DEFAULT 0,
    -- The child's first model call carries the summary while pending; the
    -- first complete reply clears both flags, once, and sets last_cleanup_at.
    pending          INTEGER NOT NULL DEFAULT 1,
    cleanup_required INTEGER NOT NULL DEFAULT 1,
    last_cleanup_at  TEXT,
    created_at       TEXT NOT NULL
);
CREATE INDEX thread_handoffs_parent ON thread_handoffs(parent_thread_id, created_at DESC);

-- Accepted summaries waiting to be copied to the PostgreSQL mirror
-- (BATON_MIRROR_URL). A row is written in the accept's transaction and
-- deleted once the mirror has it.
CREATE TABLE mirror_outbox (
    handoff_id   TEXT PRIMARY KEY REFERENCES thread_handoffs(id) ON DELETE CASCADE,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL
);

-- +goose Down
DROP TABLE mirror_outbox;
DROP TABLE thread_handoffs;
