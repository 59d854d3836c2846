-- +goose Up
-- Agent coordination: a blackboard of warnings, findings and status notes,
-- and handoffs from one agent to another with a frozen context snapshot.

-- Blackboard entries. rid orders entries by creation, newest last; scope is a
-- path prefix ("src/auth/") or 'project'; tags is a JSON array of strings.
CREATE TABLE blackboard_entries (
    rid          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    type         TEXT NOT NULL CHECK (type IN ('warning', 'finding', 'status')),
    summary      TEXT NOT NULL CHECK (length(summary) BETWEEN 1 AND 200),
    detail       TEXT NOT NULL DEFAULT '' CHECK (length(detail) <= 10000),
    scope        TEXT NOT NULL DEFAULT 'project',
    tags         TEXT NOT NULL DEFAULT '[]',
    agent_id     TEXT NOT NULL CHECK (agent_id <> ''),
    created_at   TEXT NOT NULL
);
-- The feed (newest first, by type) and snapshot assembly (warnings and
-- findings by scope) both read from these; scope as a key lets a scoped
-- assembly seek the prefix range instead of scanning.
CREATE INDEX blackboard_entries_feed ON blackboard_entries(workspace_id, rid);
CREATE INDEX blackboard_entries_type ON blackboard_entries(workspace_id, type, scope, rid, id);

-- Agent handoffs. results and context_snapshot are JSON (a list, and an
-- object of decision_ids, warning_ids, finding_ids and summaries). A handoff
-- is pending until acknowledged; one without a target can be claimed once.
CREATE TABLE agent_handoffs (
    rid              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    source_agent     TEXT NOT NULL CHECK (source_agent <> ''),
    target_agent     TEXT,
    scope            TEXT NOT NULL DEFAULT '',
    summary          TEXT NOT NULL,
    results          TEXT NOT NULL DEFAULT '[]',
    context_snapshot TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'acknowledged')),
    acknowledged_by  TEXT,
    acknowledged_at  TEXT,
    claimed_by       TEXT,
    claimed_at       TEXT,
    status_entry_id  TEXT REFERENCES blackboard_entries(id) ON DELETE SET NULL,
    created_at       TEXT NOT NULL,
    CHECK ((status = 'acknowledged') = (acknowledged_by IS NOT NULL)),
    CHECK ((claimed_by IS NULL) = (claimed_at IS NULL))
);
CREATE INDEX agent_handoffs_status ON agent_handoffs(workspace_id, status, rid);
CREATE INDEX agent_handoffs_target ON agent_handoffs(workspace_id, target_agent, status, rid);

-- Snapshot assembly reads the active decision records of a workspace by
-- scope: this index covers it (the id comes with the row).
CREATE INDEX decision_records_active_scope ON decision_records(workspace_id, status, scope, rid, id);

-- +goose Down
DROP INDEX decision_records_active_scope;
DROP TABLE agent_handoffs;
DROP TABLE blackboard_entries;
