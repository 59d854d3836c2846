-- +goose Up
-- The PostgreSQL schema: the same tables, columns, names and rules as the
-- SQLite schema after its migrations 0001 to 0013 (read those for what
-- each table is for). Where the engines differ:
--   * TEXT stays TEXT (time stamps are fixed-width text, so text order is
--     time order), in the collation "C": text compares and sorts byte by
--     byte as in SQLite, whatever the database's own collation (the store
--     finds scopes by byte ranges). INTEGER is BIGINT, booleans stay 0/1
--     integers; REAL is DOUBLE PRECISION; an INTEGER PRIMARY KEY rid is an
--     identity column.
--   * Foreign keys are DEFERRABLE INITIALLY IMMEDIATE: checked per
--     statement as in SQLite, and a data copy may defer them.
--   * Snapshot immutability is a trigger that raises check_violation,
--     which the store maps like SQLite's RAISE(ABORT). There is no
--     INSERT OR REPLACE to guard against: the primary key refuses it.
--   * COLLATE NOCASE is an ICU collation that compares without case, so
--     the store's SQL reads the same on both engines.
--   * Full-text search is a generated tsvector column with a GIN index
--     instead of FTS5 tables. The configuration baton splits text as
--     SQLite's unicode61 tokenizer does (on everything but letters and
--     digits, so src/auth/token.go is src, auth, token, go), folds accents
--     and stems English words, keeping stop words as FTS5 does.

CREATE COLLATION nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);

CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH DICTIONARY baton_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION baton (COPY = english);
ALTER TEXT SEARCH CONFIGURATION baton
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH unaccent, baton_stem;

CREATE TABLE settings (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value TEXT COLLATE "C" NOT NULL
);

CREATE TABLE workspaces (
    id         TEXT COLLATE "C" PRIMARY KEY,
    name       TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);

CREATE TABLE users (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    email               TEXT COLLATE "C" NOT NULL,           -- as typed; compared without case
    name                TEXT COLLATE "C" NOT NULL,
    password_hash       TEXT COLLATE "C" NOT NULL,           -- argon2id, PHC string
    created_at          TEXT COLLATE "C" NOT NULL,
    password_changed_at TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX users_email ON users(email COLLATE nocase);

CREATE TABLE threads (
    id               TEXT COLLATE "C" PRIMARY KEY,
    workspace_id     TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    parent_thread_id TEXT COLLATE "C" REFERENCES threads(id) ON DELETE SET NULL DEFERRABLE INITIALLY IMMEDIATE,
    title            TEXT COLLATE "C" NOT NULL,
    created_at       TEXT COLLATE "C" NOT NULL,
    updated_at       TEXT COLLATE "C" NOT NULL,
    archived_at      TEXT COLLATE "C",
    deleted_at       TEXT COLLATE "C"
);
CREATE INDEX threads_workspace_updated ON threads(workspace_id, updated_at DESC);

CREATE TABLE messages (
    id            TEXT COLLATE "C" PRIMARY KEY,
    thread_id     TEXT COLLATE "C" NOT NULL REFERENCES threads(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    role          TEXT COLLATE "C" NOT NULL CHECK (role IN ('user', 'assistant')),
    content       TEXT COLLATE "C" NOT NULL,
    status        TEXT COLLATE "C" NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'stopped', 'failed')),
    error         TEXT COLLATE "C" NOT NULL DEFAULT '',
    model         TEXT COLLATE "C" NOT NULL DEFAULT '',
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    response_id   TEXT COLLATE "C" NOT NULL DEFAULT '',
    reply_to      TEXT COLLATE "C" REFERENCES messages(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    pinned        BIGINT NOT NULL DEFAULT 0,
    created_at    TEXT COLLATE "C" NOT NULL,
    created_by    TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX messages_thread_created ON messages(thread_id, created_at, id);
-- One reply per user message: a retry or a reconnect never duplicates it.
CREATE UNIQUE INDEX messages_one_reply ON messages(reply_to) WHERE reply_to IS NOT NULL;
CREATE INDEX messages_thread_heads ON messages(thread_id, created_at, id, role, status, pinned);

CREATE TABLE handoffs (
    id           TEXT COLLATE "C" PRIMARY KEY,
    thread_id    TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES threads(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    status       TEXT COLLATE "C" NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'frozen')),
    summary      TEXT COLLATE "C" NOT NULL DEFAULT '',
    version      BIGINT NOT NULL DEFAULT 1,
    created_at   TEXT COLLATE "C" NOT NULL,
    updated_at   TEXT COLLATE "C" NOT NULL,
    updated_by   TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE
);

CREATE TABLE decisions (
    id                TEXT COLLATE "C" PRIMARY KEY,
    handoff_id        TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    content           TEXT COLLATE "C" NOT NULL,
    source            TEXT COLLATE "C" NOT NULL CHECK (source IN ('ai-extracted', 'user-pinned', 'user-edited')),
    confidence        DOUBLE PRECISION CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
    message_ids       TEXT COLLATE "C" NOT NULL DEFAULT '[]', -- JSON array: the messages it came from
    pinned_message_id TEXT COLLATE "C" REFERENCES messages(id) ON DELETE SET NULL DEFERRABLE INITIALLY IMMEDIATE,
    during_planning   BIGINT NOT NULL DEFAULT 0,
    created_at        TEXT COLLATE "C" NOT NULL,
    updated_at        TEXT COLLATE "C" NOT NULL,
    created_by        TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE,
    updated_by        TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX decisions_handoff ON decisions(handoff_id, created_at, id);
CREATE UNIQUE INDEX decisions_one_pin ON decisions(handoff_id, pinned_message_id) WHERE pinned_message_id IS NOT NULL;

CREATE TABLE file_refs (
    id          TEXT COLLATE "C" PRIMARY KEY,
    handoff_id  TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    path        TEXT COLLATE "C" NOT NULL,
    relevance   TEXT COLLATE "C" NOT NULL CHECK (relevance IN ('high', 'medium', 'low')),
    context     TEXT COLLATE "C" NOT NULL DEFAULT '',
    source      TEXT COLLATE "C" NOT NULL CHECK (source IN ('ai-extracted', 'user-pinned', 'user-edited')),
    message_ids TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    created_at  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL,
    created_by  TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE,
    updated_by  TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE,
    UNIQUE (handoff_id, path)
);

CREATE TABLE risks (
    id          TEXT COLLATE "C" PRIMARY KEY,
    handoff_id  TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    description TEXT COLLATE "C" NOT NULL,
    severity    TEXT COLLATE "C" NOT NULL CHECK (severity IN ('high', 'medium', 'low')),
    mitigation  TEXT COLLATE "C" NOT NULL DEFAULT '',
    source      TEXT COLLATE "C" NOT NULL CHECK (source IN ('ai-extracted', 'user-pinned', 'user-edited')),
    message_ids TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    created_at  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL,
    created_by  TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE,
    updated_by  TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX risks_handoff ON risks(handoff_id, created_at, id);

-- One extraction at a time per handoff, enforced here and not only in memory.
CREATE TABLE extraction_runs (
    id            TEXT COLLATE "C" PRIMARY KEY,
    handoff_id    TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    status        TEXT COLLATE "C" NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
    error         TEXT COLLATE "C" NOT NULL DEFAULT '',
    added         BIGINT NOT NULL DEFAULT 0,
    started_at    TEXT COLLATE "C" NOT NULL,
    finished_at   TEXT COLLATE "C",
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX extraction_runs_one_running ON extraction_runs(handoff_id) WHERE status = 'running';

-- Frozen handoffs: canonical JSON and its sha256. Never changed, never
-- removed. created_by is a plain column: no foreign key action may ever
-- touch a snapshot.
CREATE TABLE snapshots (
    id         TEXT COLLATE "C" PRIMARY KEY,
    handoff_id TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) DEFERRABLE INITIALLY IMMEDIATE,
    payload    TEXT COLLATE "C" NOT NULL,
    sha256     TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    created_by TEXT COLLATE "C"
);
CREATE INDEX snapshots_handoff ON snapshots(handoff_id, created_at);

-- +goose StatementBegin
CREATE FUNCTION snapshots_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'snapshots are immutable' USING ERRCODE = 'check_violation';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER snapshots_no_update BEFORE UPDATE ON snapshots
    FOR EACH ROW EXECUTE FUNCTION snapshots_immutable();
CREATE TRIGGER snapshots_no_delete BEFORE DELETE ON snapshots
    FOR EACH ROW EXECUTE FUNCTION snapshots_immutable();
CREATE TRIGGER snapshots_no_truncate BEFORE TRUNCATE ON snapshots
    FOR EACH STATEMENT EXECUTE FUNCTION snapshots_immutable();

CREATE TABLE plans (
    id            TEXT COLLATE "C" PRIMARY KEY,
    handoff_id    TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    snapshot_id   TEXT COLLATE "C" NOT NULL REFERENCES snapshots(id) DEFERRABLE INITIALLY IMMEDIATE,
    version       BIGINT NOT NULL CHECK (version >= 1),
    status        TEXT COLLATE "C" NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'complete', 'stopped', 'failed', 'cancelled')),
    markdown      TEXT COLLATE "C" NOT NULL DEFAULT '',
    summary       TEXT COLLATE "C" NOT NULL DEFAULT '',
    error         TEXT COLLATE "C" NOT NULL DEFAULT '',
    coverage      TEXT COLLATE "C" NOT NULL DEFAULT '{"covered":[],"uncovered":[]}', -- JSON: decision labels the plan cites and misses
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    model         TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at    TEXT COLLATE "C" NOT NULL,
    finished_at   TEXT COLLATE "C",
    created_by    TEXT COLLATE "C" REFERENCES users(id) DEFERRABLE INITIALLY IMMEDIATE,
    UNIQUE (snapshot_id, version)
);
CREATE INDEX plans_handoff_created ON plans(handoff_id, created_at);
-- One running plan per snapshot: a double click never starts two agents.
CREATE UNIQUE INDEX plans_one_running ON plans(snapshot_id) WHERE status = 'running';

CREATE TABLE plan_steps (
    plan_id       TEXT COLLATE "C" NOT NULL REFERENCES plans(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    n             BIGINT NOT NULL CHECK (n >= 1),
    kind          TEXT COLLATE "C" NOT NULL CHECK (kind IN ('model_call', 'tool_call')),
    tool          TEXT COLLATE "C" NOT NULL DEFAULT '',
    input         TEXT COLLATE "C" NOT NULL DEFAULT '', -- JSON the model sent, tool calls only
    result        TEXT COLLATE "C" NOT NULL DEFAULT '', -- truncated
    is_error      BIGINT NOT NULL DEFAULT 0,
    description   TEXT COLLATE "C" NOT NULL DEFAULT '',
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    created_at    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (plan_id, n)
);

-- Decision records: rid grows with every capture, so rid order is capture
-- order; fts is the full-text index of content.
CREATE TABLE decision_records (
    rid           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id            TEXT COLLATE "C" NOT NULL UNIQUE,
    workspace_id  TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    handoff_id    TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    snapshot_id   TEXT COLLATE "C" NOT NULL REFERENCES snapshots(id) DEFERRABLE INITIALLY IMMEDIATE,
    thread_id     TEXT COLLATE "C" NOT NULL,
    decision_id   TEXT COLLATE "C" NOT NULL,
    label         TEXT COLLATE "C" NOT NULL,
    content       TEXT COLLATE "C" NOT NULL,
    scope         TEXT COLLATE "C" NOT NULL DEFAULT 'project',
    status        TEXT COLLATE "C" NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded')),
    superseded_by TEXT COLLATE "C" REFERENCES decision_records(id) ON DELETE SET NULL DEFERRABLE INITIALLY IMMEDIATE,
    confidence    DOUBLE PRECISION CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
    message_ids   TEXT COLLATE "C" NOT NULL DEFAULT '[]', -- JSON array: the messages it came from
    created_at    TEXT COLLATE "C" NOT NULL,
    updated_at    TEXT COLLATE "C" NOT NULL,
    fts           tsvector NOT NULL GENERATED ALWAYS AS (
                      to_tsvector('baton'::regconfig, regexp_replace(content COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g'))
                  ) STORED,
    CHECK (status = 'superseded' OR superseded_by IS NULL)
);
CREATE INDEX decision_records_status ON decision_records(workspace_id, status, rid);
CREATE INDEX decision_records_scope ON decision_records(workspace_id, scope, status, rid);
CREATE INDEX decision_records_decision ON decision_records(decision_id);
CREATE INDEX decision_records_content ON decision_records(workspace_id, content COLLATE nocase);
CREATE INDEX decision_records_superseded_by ON decision_records(superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX decision_records_active_scope ON decision_records(workspace_id, status, scope, rid, id);
CREATE INDEX decision_records_active_rid ON decision_records(workspace_id, status, rid, id);
CREATE INDEX decision_records_fts ON decision_records USING gin (fts);

-- Learnings; fts indexes content, detail and path as three fields (a
-- phrase never runs from one into the next).
CREATE TABLE learnings (
    rid          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id           TEXT COLLATE "C" NOT NULL UNIQUE,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    kind         TEXT COLLATE "C" NOT NULL CHECK (kind IN ('decision', 'file', 'risk')),
    content      TEXT COLLATE "C" NOT NULL,             -- the decision, the file's reason, the risk
    detail       TEXT COLLATE "C" NOT NULL DEFAULT '',  -- a risk's mitigation
    level        TEXT COLLATE "C" NOT NULL DEFAULT '',  -- a file's relevance, a risk's severity
    scope        TEXT COLLATE "C" NOT NULL DEFAULT '',  -- a decision's scope
    path         TEXT COLLATE "C" NOT NULL DEFAULT '',  -- a file's path
    handoff_id   TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    thread_id    TEXT COLLATE "C" NOT NULL,
    snapshot_id  TEXT COLLATE "C" NOT NULL REFERENCES snapshots(id) DEFERRABLE INITIALLY IMMEDIATE,
    created_at   TEXT COLLATE "C" NOT NULL,
    fts          tsvector NOT NULL GENERATED ALWAYS AS (
                     to_tsvector('baton'::regconfig, regexp_replace(content COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g')) ||
                     to_tsvector('baton'::regconfig, regexp_replace(detail COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g')) ||
                     to_tsvector('baton'::regconfig, regexp_replace(path COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g'))
                 ) STORED
);
CREATE INDEX learnings_kind ON learnings(workspace_id, kind, rid);
CREATE INDEX learnings_path ON learnings(workspace_id, path) WHERE path <> '';
CREATE INDEX learnings_fts ON learnings USING gin (fts);

CREATE TABLE relationships (
    id           TEXT COLLATE "C" PRIMARY KEY,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    type         TEXT COLLATE "C" NOT NULL CHECK (type IN ('decision_file', 'file_risk', 'decision_risk')),
    source       TEXT COLLATE "C" NOT NULL,
    target       TEXT COLLATE "C" NOT NULL,
    count        BIGINT NOT NULL DEFAULT 1 CHECK (count >= 1),
    first_seen   TEXT COLLATE "C" NOT NULL,
    last_seen    TEXT COLLATE "C" NOT NULL,
    UNIQUE (workspace_id, type, source, target)
);
CREATE INDEX relationships_target ON relationships(workspace_id, type, target);

CREATE TABLE memory_captures (
    snapshot_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES snapshots(id) DEFERRABLE INITIALLY IMMEDIATE,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    captured_at  TEXT COLLATE "C" NOT NULL
);

CREATE TABLE memberships (
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    role         TEXT COLLATE "C" NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_user ON memberships(user_id);

CREATE TABLE sessions (
    id           TEXT COLLATE "C" PRIMARY KEY,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    workspace_id TEXT COLLATE "C" REFERENCES workspaces(id) ON DELETE SET NULL DEFERRABLE INITIALLY IMMEDIATE, -- the workspace shown
    created_at   TEXT COLLATE "C" NOT NULL,
    last_seen_at TEXT COLLATE "C" NOT NULL,
    expires_at   TEXT COLLATE "C" NOT NULL                                                                  -- absolute lifetime
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE invites (
    id           TEXT COLLATE "C" PRIMARY KEY,
    token_hash   TEXT COLLATE "C" NOT NULL UNIQUE,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    role         TEXT COLLATE "C" NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_by   TEXT COLLATE "C" REFERENCES users(id) ON DELETE SET NULL DEFERRABLE INITIALLY IMMEDIATE,
    created_at   TEXT COLLATE "C" NOT NULL,
    expires_at   TEXT COLLATE "C" NOT NULL,
    used_at      TEXT COLLATE "C",
    used_by      TEXT COLLATE "C" REFERENCES users(id) ON DELETE SET NULL DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX invites_workspace ON invites(workspace_id, created_at);

CREATE TABLE api_tokens (
    id           TEXT COLLATE "C" PRIMARY KEY,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    name         TEXT COLLATE "C" NOT NULL,
    scope        TEXT COLLATE "C" NOT NULL CHECK (scope IN ('read', 'write')),
    token_hash   TEXT COLLATE "C" NOT NULL UNIQUE,
    last4        TEXT COLLATE "C" NOT NULL,
    created_at   TEXT COLLATE "C" NOT NULL,
    expires_at   TEXT COLLATE "C",
    last_used_at TEXT COLLATE "C",
    revoked_at   TEXT COLLATE "C"
);
CREATE INDEX api_tokens_user ON api_tokens(user_id, created_at);

CREATE TABLE sign_in_failures (
    id     BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    email  TEXT COLLATE "C" NOT NULL,
    client TEXT COLLATE "C" NOT NULL,
    at     TEXT COLLATE "C" NOT NULL
);
CREATE INDEX sign_in_failures_email ON sign_in_failures(email, at);
CREATE INDEX sign_in_failures_client ON sign_in_failures(client, at);

CREATE TABLE blackboard_entries (
    rid          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id           TEXT COLLATE "C" NOT NULL UNIQUE,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    type         TEXT COLLATE "C" NOT NULL CHECK (type IN ('warning', 'finding', 'status')),
    summary      TEXT COLLATE "C" NOT NULL CHECK (length(summary) BETWEEN 1 AND 200),
    detail       TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (length(detail) <= 10000),
    scope        TEXT COLLATE "C" NOT NULL DEFAULT 'project',
    tags         TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    agent_id     TEXT COLLATE "C" NOT NULL CHECK (agent_id <> ''),
    created_at   TEXT COLLATE "C" NOT NULL
);
CREATE INDEX blackboard_entries_feed ON blackboard_entries(workspace_id, rid);
CREATE INDEX blackboard_entries_type ON blackboard_entries(workspace_id, type, scope, rid, id);
CREATE INDEX blackboard_entries_type_rid ON blackboard_entries(workspace_id, type, rid, id);

CREATE TABLE agent_handoffs (
    rid              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id               TEXT COLLATE "C" NOT NULL UNIQUE,
    workspace_id     TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    source_agent     TEXT COLLATE "C" NOT NULL CHECK (source_agent <> ''),
    target_agent     TEXT COLLATE "C",
    scope            TEXT COLLATE "C" NOT NULL DEFAULT '',
    summary          TEXT COLLATE "C" NOT NULL,
    results          TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    context_snapshot TEXT COLLATE "C" NOT NULL,
    status           TEXT COLLATE "C" NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'acknowledged')),
    acknowledged_by  TEXT COLLATE "C",
    acknowledged_at  TEXT COLLATE "C",
    claimed_by       TEXT COLLATE "C",
    claimed_at       TEXT COLLATE "C",
    status_entry_id  TEXT COLLATE "C" REFERENCES blackboard_entries(id) ON DELETE SET NULL DEFERRABLE INITIALLY IMMEDIATE,
    created_at       TEXT COLLATE "C" NOT NULL,
    CHECK ((status = 'acknowledged') = (acknowledged_by IS NOT NULL)),
    CHECK ((claimed_by IS NULL) = (claimed_at IS NULL))
);
CREATE INDEX agent_handoffs_status ON agent_handoffs(workspace_id, status, rid);
CREATE INDEX agent_handoffs_target ON agent_handoffs(workspace_id, target_agent, status, rid);

CREATE TABLE share_links (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    workspace_id       TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    handoff_id         TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    plan_id            TEXT COLLATE "C" REFERENCES plans(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    mode               TEXT COLLATE "C" NOT NULL CHECK (mode IN ('view', 'review')),
    label              TEXT COLLATE "C" NOT NULL DEFAULT '',
    token_hash         TEXT COLLATE "C" NOT NULL UNIQUE,
    token_last4        TEXT COLLATE "C" NOT NULL,
    created_by_user_id TEXT COLLATE "C",
    created_by_name    TEXT COLLATE "C" NOT NULL,
    created_at         TEXT COLLATE "C" NOT NULL,
    expires_at         TEXT COLLATE "C",
    revoked_at         TEXT COLLATE "C",
    views              BIGINT NOT NULL DEFAULT 0,
    last_viewed_at     TEXT COLLATE "C"
);
CREATE INDEX share_links_workspace ON share_links(workspace_id, created_at);
CREATE INDEX share_links_handoff ON share_links(handoff_id, created_at);

CREATE TABLE comments (
    id             TEXT COLLATE "C" PRIMARY KEY,
    handoff_id     TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    plan_id        TEXT COLLATE "C" REFERENCES plans(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    parent_id      TEXT COLLATE "C" REFERENCES comments(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    anchor_kind    TEXT COLLATE "C" NOT NULL
                   CHECK (anchor_kind IN ('decision', 'file', 'risk', 'summary', 'plan-section', 'general')),
    anchor_id      TEXT COLLATE "C" NOT NULL DEFAULT '',
    anchor_label   TEXT COLLATE "C" NOT NULL DEFAULT '', -- D2, a path, a heading: what the anchor read as when commented
    author_user_id TEXT COLLATE "C",
    author_name    TEXT COLLATE "C" NOT NULL,
    guest          BIGINT NOT NULL DEFAULT 0,
    share_id       TEXT COLLATE "C" REFERENCES share_links(id) ON DELETE SET NULL DEFERRABLE INITIALLY IMMEDIATE,
    body           TEXT COLLATE "C" NOT NULL,
    resolved_at    TEXT COLLATE "C",
    resolved_by    TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at     TEXT COLLATE "C" NOT NULL,
    updated_at     TEXT COLLATE "C" NOT NULL
);
CREATE INDEX comments_handoff ON comments(handoff_id, created_at);
CREATE INDEX comments_parent ON comments(parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE review_requests (
    handoff_id         TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    reviewer_user_id   TEXT COLLATE "C" NOT NULL,
    reviewer_name      TEXT COLLATE "C" NOT NULL,
    requested_by_id    TEXT COLLATE "C",
    requested_by_name  TEXT COLLATE "C" NOT NULL,
    created_at         TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (handoff_id, reviewer_user_id)
);

CREATE TABLE reviews (
    id               TEXT COLLATE "C" PRIMARY KEY,
    handoff_id       TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    reviewer_user_id TEXT COLLATE "C",
    reviewer_name    TEXT COLLATE "C" NOT NULL,
    state            TEXT COLLATE "C" NOT NULL CHECK (state IN ('approved', 'commented', 'changes_requested')),
    body             TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at       TEXT COLLATE "C" NOT NULL
);
CREATE INDEX reviews_handoff ON reviews(handoff_id, created_at);

CREATE TABLE activity (
    id            TEXT COLLATE "C" PRIMARY KEY,
    handoff_id    TEXT COLLATE "C" NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    kind          TEXT COLLATE "C" NOT NULL,
    actor_user_id TEXT COLLATE "C",
    actor_name    TEXT COLLATE "C" NOT NULL,
    detail        TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at    TEXT COLLATE "C" NOT NULL
);
CREATE INDEX activity_handoff ON activity(handoff_id, created_at);

CREATE TABLE plan_review_comments (
    plan_id    TEXT COLLATE "C" NOT NULL REFERENCES plans(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    comment_id TEXT COLLATE "C" NOT NULL REFERENCES comments(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    PRIMARY KEY (plan_id, comment_id)
);

CREATE TABLE thread_handoffs (
    id               TEXT COLLATE "C" PRIMARY KEY,
    workspace_id     TEXT COLLATE "C" NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    parent_thread_id TEXT COLLATE "C" NOT NULL REFERENCES threads(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    -- One handoff per child: the child is created with it.
    child_thread_id  TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES threads(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    title            TEXT COLLATE "C" NOT NULL,
    summary_json     TEXT COLLATE "C" NOT NULL,
    summary_md       TEXT COLLATE "C" NOT NULL,
    model            TEXT COLLATE "C" NOT NULL DEFAULT '',
    response_id      TEXT COLLATE "C" NOT NULL DEFAULT '',
    tokens_used      BIGINT NOT NULL DEFAULT 0,
    pending          BIGINT NOT NULL DEFAULT 1,
    cleanup_required BIGINT NOT NULL DEFAULT 1,
    last_cleanup_at  TEXT COLLATE "C",
    created_at       TEXT COLLATE "C" NOT NULL
);
CREATE INDEX thread_handoffs_parent ON thread_handoffs(parent_thread_id, created_at DESC);

CREATE TABLE mirror_outbox (
    handoff_id   TEXT COLLATE "C" PRIMARY KEY REFERENCES thread_handoffs(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    attempts     BIGINT NOT NULL DEFAULT 0,
    last_error   TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at   TEXT COLLATE "C" NOT NULL
);

CREATE TABLE envelope_imports (
    session_id     TEXT COLLATE "C" NOT NULL,
    payload_sha256 TEXT COLLATE "C" NOT NULL,
    kind           TEXT COLLATE "C" NOT NULL,
    target_id      TEXT COLLATE "C" NOT NULL,
    created_at     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (session_id, payload_sha256)
);

-- +goose Down
DROP TABLE envelope_imports;
DROP TABLE mirror_outbox;
DROP TABLE thread_handoffs;
DROP TABLE plan_review_comments;
DROP TABLE activity;
DROP TABLE reviews;
DROP TABLE review_requests;
DROP TABLE comments;
DROP TABLE share_links;
DROP TABLE agent_handoffs;
DROP TABLE blackboard_entries;
DROP TABLE sign_in_failures;
DROP TABLE api_tokens;
DROP TABLE invites;
DROP TABLE sessions;
DROP TABLE memberships;
DROP TABLE memory_captures;
DROP TABLE relationships;
DROP TABLE learnings;
DROP TABLE decision_records;
DROP TABLE plan_steps;
DROP TABLE plans;
DROP TABLE snapshots;
DROP FUNCTION snapshots_immutable();
DROP TABLE extraction_runs;
DROP TABLE risks;
DROP TABLE file_refs;
DROP TABLE decisions;
DROP TABLE handoffs;
DROP TABLE messages;
DROP TABLE threads;
DROP TABLE users;
DROP TABLE workspaces;
DROP TABLE settings;
DROP TEXT SEARCH CONFIGURATION baton;
DROP TEXT SEARCH DICTIONARY baton_stem;
DROP EXTENSION IF EXISTS unaccent;
DROP COLLATION nocase;
