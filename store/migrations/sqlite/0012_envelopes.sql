-- +goose Up
-- Handoff envelopes imported: one row per session and payload, so that
-- importing the same envelope again finds what the first import made
-- instead of making it twice. target_id is a handoff for kind
-- brainstorm_handoff (an agent handoff, later, for agent_handoff).
CREATE TABLE envelope_imports (
    session_id     TEXT NOT NULL,
    payload_sha256 TEXT NOT NULL,
    kind           TEXT NOT NULL,
    target_id      TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (session_id, payload_sha256)
);

-- +goose Down
DROP TABLE envelope_imports;
