-- +goose Up
-- workspaces.sources_rev: a revision number the database moves on whenever
-- what an agent handoff with no scope cites changes: a decision record of
-- the workspace added, changed or removed, or a warning or finding of its
-- blackboard (status notes, which every handoff posts, leave it alone).
-- The store keeps the last unscoped snapshot sources it read under it
-- (store/revcache.go), as migration 0016 does for pages.
ALTER TABLE workspaces ADD COLUMN sources_rev INTEGER NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE TRIGGER decision_records_sources_rev_ai AFTER INSERT ON decision_records BEGIN
    UPDATE workspaces SET sources_rev = sources_rev + 1 WHERE id = NEW.workspace_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decision_records_sources_rev_ad AFTER DELETE ON decision_records BEGIN
    UPDATE workspaces SET sources_rev = sources_rev + 1 WHERE id = OLD.workspace_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decision_records_sources_rev_au AFTER UPDATE ON decision_records BEGIN
    UPDATE workspaces SET sources_rev = sources_rev + 1 WHERE id IN (OLD.workspace_id, NEW.workspace_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blackboard_entries_sources_rev_ai AFTER INSERT ON blackboard_entries
WHEN NEW.type IN ('warning', 'finding') BEGIN
    UPDATE workspaces SET sources_rev = sources_rev + 1 WHERE id = NEW.workspace_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blackboard_entries_sources_rev_ad AFTER DELETE ON blackboard_entries
WHEN OLD.type IN ('warning', 'finding') BEGIN
    UPDATE workspaces SET sources_rev = sources_rev + 1 WHERE id = OLD.workspace_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blackboard_entries_sources_rev_au AFTER UPDATE ON blackboard_entries
WHEN OLD.type IN ('warning', 'finding') OR NEW.type IN ('warning', 'finding') BEGIN
    UPDATE workspaces SET sources_rev = sources_rev + 1 WHERE id IN (OLD.workspace_id, NEW.workspace_id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER blackboard_entries_sources_rev_au;
DROP TRIGGER blackboard_entries_sources_rev_ad;
DROP TRIGGER blackboard_entries_sources_rev_ai;
DROP TRIGGER decision_records_sources_rev_au;
DROP TRIGGER decision_records_sources_rev_ad;
DROP TRIGGER decision_records_sources_rev_ai;
ALTER TABLE workspaces DROP COLUMN sources_rev;
