-- +goose Up
-- An unscoped context snapshot lists every active decision record, warning
-- and finding: hundreds of kilobytes of UUIDs, which do not compress.
-- Storing it out of line without trying to compress it first (EXTERNAL
-- rather than EXTENDED) makes writing it several times cheaper.
ALTER TABLE agent_handoffs ALTER COLUMN context_snapshot SET STORAGE EXTERNAL;

-- +goose Down
ALTER TABLE agent_handoffs ALTER COLUMN context_snapshot SET STORAGE EXTENDED;
