-- +goose Up
-- People, their workspaces and roles, sign-in sessions, invites and API
-- tokens. Secrets (sessions, invites, tokens) are stored only as the hex
-- SHA-256 of what the holder has: a copy of this file lets nobody in.

CREATE TABLE users (
    id                  TEXT PRIMARY KEY,
    email               TEXT NOT NULL,           -- as typed; compared without case
    name                TEXT NOT NULL,
    password_hash       TEXT NOT NULL,           -- argon2id, PHC string
    created_at          TEXT NOT NULL,
    password_changed_at TEXT NOT NULL
);
CREATE UNIQUE INDEX users_email ON users(email COLLATE NOCASE);

CREATE TABLE memberships (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role         TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at   TEXT NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_user ON memberships(user_id);

-- Server-side sign-in sessions. The cookie holds the secret; id is its
-- SHA-256. Deleting a row signs that browser out.
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id TEXT REFERENCES workspaces(id) ON DELETE SET NULL, -- the workspace shown
    created_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at   TEXT NOT NULL                                      -- absolute lifetime
);
CREATE INDEX sessions_user ON sessions(user_id);

-- Single-use invitation links into a workspace.
CREATE TABLE invites (
    id           TEXT PRIMARY KEY,
    token_hash   TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    role         TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_by   TEXT REFERENCES users(id) ON DELETE SET NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    used_at      TEXT,
    used_by      TEXT REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX invites_workspace ON invites(workspace_id, created_at);

-- Bearer tokens for the JSON API and MCP: one user, one workspace.
CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    scope        TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    token_hash   TEXT NOT NULL UNIQUE,
    last4        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    last_used_at TEXT,
    revoked_at   TEXT
);
CREATE INDEX api_tokens_user ON api_tokens(user_id, created_at);

-- Failed sign-ins, counted per account (the email typed, lower case, which
-- need not exist) and per client address. Kept in the database so that
-- several Baton processes share the limit.
CREATE TABLE sign_in_failures (
    id     INTEGER PRIMARY KEY,
    email  TEXT NOT NULL,
    client TEXT NOT NULL,
    at     TEXT NOT NULL
);
CREATE INDEX sign_in_failures_email ON sign_in_failures(email, at);
CREATE INDEX sign_in_failures_client ON sign_in_failures(client, at);

-- Authorship: who wrote, pinned, added, edited, froze and planned. NULL for
-- what existed before accounts, and for the assistant's own work.
ALTER TABLE messages ADD COLUMN created_by TEXT REFERENCES users(id);
ALTER TABLE decisions ADD COLUMN created_by TEXT REFERENCES users(id);
ALTER TABLE decisions ADD COLUMN updated_by TEXT REFERENCES users(id);
ALTER TABLE file_refs ADD COLUMN created_by TEXT REFERENCES users(id);
ALTER TABLE file_refs ADD COLUMN updated_by TEXT REFERENCES users(id);
ALTER TABLE risks ADD COLUMN created_by TEXT REFERENCES users(id);
ALTER TABLE risks ADD COLUMN updated_by TEXT REFERENCES users(id);
ALTER TABLE handoffs ADD COLUMN updated_by TEXT REFERENCES users(id);
-- Snapshots are never updated (a trigger refuses it), so no foreign key
-- action may ever touch them: a plain column.
ALTER TABLE snapshots ADD COLUMN created_by TEXT;
ALTER TABLE plans ADD COLUMN created_by TEXT REFERENCES users(id);

-- +goose Down
ALTER TABLE plans DROP COLUMN created_by;
ALTER TABLE snapshots DROP COLUMN created_by;
ALTER TABLE handoffs DROP COLUMN updated_by;
ALTER TABLE risks DROP COLUMN updated_by;
ALTER TABLE risks DROP COLUMN created_by;
ALTER TABLE file_refs DROP COLUMN updated_by;
ALTER TABLE file_refs DROP COLUMN created_by;
ALTER TABLE decisions DROP COLUMN updated_by;
ALTER TABLE decisions DROP COLUMN created_by;
ALTER TABLE messages DROP COLUMN created_by;
DROP TABLE sign_in_failures;
DROP TABLE api_tokens;
DROP TABLE invites;
DROP TABLE sessions;
DROP TABLE memberships;
DROP TABLE users;
