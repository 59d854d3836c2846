-- +goose Up
-- A brainstorm can be archived (hidden from the list, kept as it is) or
-- deleted. A deleted thread whose handoff was frozen stays as a tombstone:
-- its messages and drafts go, its snapshots and plans stay and say where
-- they came from.
ALTER TABLE threads ADD COLUMN archived_at TEXT;
ALTER TABLE threads ADD COLUMN deleted_at TEXT;

-- The brainstorm page reads every message's role, status and pin on each
-- view; from the index alone, it never touches the (long) rows.
CREATE INDEX messages_thread_heads ON messages(thread_id, created_at, id, role, status, pinned);

-- +goose Down
DROP INDEX messages_thread_heads;
ALTER TABLE threads DROP COLUMN deleted_at;
ALTER TABLE threads DROP COLUMN archived_at;
