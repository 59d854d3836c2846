-- +goose Up
-- INSERT OR REPLACE deletes the old row without firing DELETE triggers:
-- refuse an insert over an existing snapshot too.
-- +goose StatementBegin
CREATE TRIGGER snapshots_no_replace BEFORE INSERT ON snapshots
WHEN EXISTS (SELECT 1 FROM snapshots WHERE id = new.id)
BEGIN
    SELECT RAISE(ABORT, 'snapshots are immutable');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER snapshots_no_replace;
