-- +goose Up
-- A context snapshot with no scope cites every active decision record and
-- every warning and finding, newest first. These indexes hold those rows in
-- that order with their IDs, so SQLite reads the IDs from the index alone,
-- already sorted, instead of visiting each row.
CREATE INDEX decision_records_active_rid ON decision_records(workspace_id, status, rid, id);
CREATE INDEX blackboard_entries_type_rid ON blackboard_entries(workspace_id, type, rid, id);

-- +goose Down
DROP INDEX blackboard_entries_type_rid;
DROP INDEX decision_records_active_rid;
