-- +goose Up
-- Team review of handoffs and plans (issue 14): comments, reviews, review
-- requests, share links and an activity log. Authors are kept as a user id
-- (NULL for the implicit local user and for guests) plus the name they had
-- then, so that the record reads the same after a rename or removal.

-- Share links: only the SHA-256 of the token is stored, with its last four
-- characters to tell links apart. plan_id is set for a link made from a
-- plan; the link still shows the handoff and its latest plan.
CREATE TABLE share_links (
    id                 TEXT PRIMARY KEY,
    workspace_id       TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    handoff_id         TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    plan_id            TEXT REFERENCES plans(id) ON DELETE CASCADE,
    mode               TEXT NOT NULL CHECK (mode IN ('view', 'review')),
    label              TEXT NOT NULL DEFAULT '',
    token_hash         TEXT NOT NULL UNIQUE,
    token_last4        TEXT NOT NULL,
    created_by_user_id TEXT,
    created_by_name    TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    expires_at         TEXT,
    revoked_at         TEXT,
    views              INTEGER NOT NULL DEFAULT 0,
    last_viewed_at     TEXT
);
CREATE INDEX share_links_workspace ON share_links(workspace_id, created_at);
CREATE INDEX share_links_handoff ON share_links(handoff_id, created_at);

-- Comments on a handoff or one of its plans. anchor_kind says what they are
-- about; anchor_id is the decision, file or risk id, or the heading slug of
-- a plan section; plan_id is set for comments on a plan. A reply has a
-- parent (one level: a reply to a reply is refused by the store) and takes
-- its anchor.
CREATE TABLE comments (
    id             TEXT PRIMARY KEY,
    handoff_id     TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    plan_id        TEXT REFERENCES plans(id) ON DELETE CASCADE,
    parent_id      TEXT REFERENCES comments(id) ON DELETE CASCADE,
    anchor_kind    TEXT NOT NULL
                   CHECK (anchor_kind IN ('decision', 'file', 'risk', 'summary', 'plan-section', 'general')),
    anchor_id      TEXT NOT NULL DEFAULT '',
    anchor_label   TEXT NOT NULL DEFAULT '', -- D2, a path, a heading: what the anchor read as when commented
    author_user_id TEXT,
    author_name    TEXT NOT NULL,
    guest          INTEGER NOT NULL DEFAULT 0,
    share_id       TEXT REFERENCES share_links(id) ON DELETE SET NULL,
    body           TEXT NOT NULL,
    resolved_at    TEXT,
    resolved_by    TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX comments_handoff ON comments(handoff_id, created_at);
CREATE INDEX comments_parent ON comments(parent_id) WHERE parent_id IS NOT NULL;

-- Whom review was asked of, by user id (accounts).
CREATE TABLE review_requests (
    handoff_id         TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    reviewer_user_id   TEXT NOT NULL,
    reviewer_name      TEXT NOT NULL,
    requested_by_id    TEXT,
    requested_by_name  TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    PRIMARY KEY (handoff_id, reviewer_user_id)
);

-- Reviews as given; a reviewer's state is their latest one.
CREATE TABLE reviews (
    id               TEXT PRIMARY KEY,
    handoff_id       TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    reviewer_user_id TEXT,
    reviewer_name    TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('approved', 'commented', 'changes_requested')),
    body             TEXT NOT NULL DEFAULT '',
    created_at       TEXT NOT NULL
);
CREATE INDEX reviews_handoff ON reviews(handoff_id, created_at);

-- What happened to a handoff that no other table records with its actor:
-- comments, reviews, review requests, links. Extractions, edits, freezes
-- and plans are read from their own tables (see FindActivity).
CREATE TABLE activity (
    id            TEXT PRIMARY KEY,
    handoff_id    TEXT NOT NULL REFERENCES handoffs(id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,
    actor_user_id TEXT,
    actor_name    TEXT NOT NULL,
    detail        TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL
);
CREATE INDEX activity_handoff ON activity(handoff_id, created_at);

-- The review comments a plan was asked to address ("Plan again with
-- review comments").
CREATE TABLE plan_review_comments (
    plan_id    TEXT NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    comment_id TEXT NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    PRIMARY KEY (plan_id, comment_id)
);

-- +goose Down
DROP TABLE plan_review_comments;
DROP TABLE activity;
DROP TABLE reviews;
DROP TABLE review_requests;
DROP TABLE comments;
DROP TABLE share_links;
