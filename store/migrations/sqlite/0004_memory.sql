-- +goose Up
-- Workspace memory: what frozen handoffs decided and learned, kept for every
-- later brainstorm and plan.

-- Decision records: every decision of a captured snapshot, at workspace level.
-- rid is the integer key the FTS index points at (an INTEGER PRIMARY KEY
-- never changes, unlike an implicit rowid); it grows with every capture, so
-- rid order is capture order. decision_id is the handoff decision it came
-- from, so that freezing the same handoff again updates instead of duplicating.
CREATE TABLE decision_records (
    rid           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    handoff_id    TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    snapshot_id   TEXT NOT NULL REFERENCES snapshots(id),
    thread_id     TEXT NOT NULL,
    decision_id   TEXT NOT NULL,
    label         TEXT NOT NULL,
    content       TEXT NOT NULL,
    scope         TEXT NOT NULL DEFAULT 'project',
    status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded')),
    superseded_by TEXT REFERENCES decision_records(id) ON DELETE SET NULL,
    confidence    REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
    message_ids   TEXT NOT NULL DEFAULT '[]', -- JSON array: the messages it came from
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    CHECK (status = 'superseded' OR superseded_by IS NULL)
);
CREATE INDEX decision_records_status ON decision_records(workspace_id, status, rid);
CREATE INDEX decision_records_scope ON decision_records(workspace_id, scope, status, rid);
CREATE INDEX decision_records_decision ON decision_records(decision_id);
CREATE INDEX decision_records_content ON decision_records(workspace_id, content COLLATE NOCASE);
CREATE INDEX decision_records_superseded_by ON decision_records(superseded_by) WHERE superseded_by IS NOT NULL;

-- Full-text index over decision records (external content: the text lives
-- once, in decision_records; the triggers keep the index in step).
CREATE VIRTUAL TABLE decision_records_fts USING fts5(
    content,
    content = 'decision_records',
    content_rowid = 'rid',
    tokenize = 'porter unicode61'
);

-- +goose StatementBegin
CREATE TRIGGER decision_records_ai AFTER INSERT ON decision_records BEGIN
    INSERT INTO decision_records_fts (rowid, content) VALUES (new.rid, new.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decision_records_ad AFTER DELETE ON decision_records BEGIN
    INSERT INTO decision_records_fts (decision_records_fts, rowid, content) VALUES ('delete', old.rid, old.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decision_records_au AFTER UPDATE OF content ON decision_records BEGIN
    INSERT INTO decision_records_fts (decision_records_fts, rowid, content) VALUES ('delete', old.rid, old.content);
    INSERT INTO decision_records_fts (rowid, content) VALUES (new.rid, new.content);
END;
-- +goose StatementEnd

-- Learnings: decisions (confident ones), files with the reason they matter,
-- risks with their mitigation; one row per snapshot that taught it.
CREATE TABLE learnings (
    rid          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('decision', 'file', 'risk')),
    content      TEXT NOT NULL,             -- the decision, the file's reason, the risk
    detail       TEXT NOT NULL DEFAULT '',  -- a risk's mitigation
    level        TEXT NOT NULL DEFAULT '',  -- a file's relevance, a risk's severity
    scope        TEXT NOT NULL DEFAULT '',  -- a decision's scope
    path         TEXT NOT NULL DEFAULT '',  -- a file's path
    handoff_id   TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    thread_id    TEXT NOT NULL,
    snapshot_id  TEXT NOT NULL REFERENCES snapshots(id),
    created_at   TEXT NOT NULL
);
CREATE INDEX learnings_kind ON learnings(workspace_id, kind, rid);
CREATE INDEX learnings_path ON learnings(workspace_id, path) WHERE path <> '';

CREATE VIRTUAL TABLE learnings_fts USING fts5(
    content, detail, path,
    content = 'learnings',
    content_rowid = 'rid',
    tokenize = 'porter unicode61'
);

-- +goose StatementBegin
CREATE TRIGGER learnings_ai AFTER INSERT ON learnings BEGIN
    INSERT INTO learnings_fts (rowid, content, detail, path) VALUES (new.rid, new.content, new.detail, new.path);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER learnings_ad AFTER DELETE ON learnings BEGIN
    INSERT INTO learnings_fts (learnings_fts, rowid, content, detail, path) VALUES ('delete', old.rid, old.content, old.detail, old.path);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER learnings_au AFTER UPDATE OF content, detail, path ON learnings BEGIN
    INSERT INTO learnings_fts (learnings_fts, rowid, content, detail, path) VALUES ('delete', old.rid, old.content, old.detail, old.path);
    INSERT INTO learnings_fts (rowid, content, detail, path) VALUES (new.rid, new.content, new.detail, new.path);
END;
-- +goose StatementEnd

-- The decision → file → risk graph. One row per edge, counted once per
-- snapshot that shows it. Decisions are decision record ids, files are
-- paths, risks are their descriptions.
CREATE TABLE relationships (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    type         TEXT NOT NULL CHECK (type IN ('decision_file', 'file_risk', 'decision_risk')),
    source       TEXT NOT NULL,
    target       TEXT NOT NULL,
    count        INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1),
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL,
    UNIQUE (workspace_id, type, source, target)
);
CREATE INDEX relationships_target ON relationships(workspace_id, type, target);

-- Snapshots already captured: capturing one again changes nothing.
CREATE TABLE memory_captures (
    snapshot_id  TEXT PRIMARY KEY REFERENCES snapshots(id),
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    captured_at  TEXT NOT NULL
);

-- +goose Down
DROP TABLE memory_captures;
DROP TABLE relationships;
DROP TRIGGER learnings_au;
DROP TRIGGER learnings_ad;
DROP TRIGGER learnings_ai;
DROP TABLE learnings_fts;
DROP TABLE learnings;
DROP TRIGGER decision_records_au;
DROP TRIGGER decision_records_ad;
DROP TRIGGER decision_records_ai;
DROP TABLE decision_records_fts;
DROP TABLE decision_records;
