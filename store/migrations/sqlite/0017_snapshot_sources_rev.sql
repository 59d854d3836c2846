-- +goose Up
-- Revision numbers the database moves on whenever what an agent handoff
-- with no scope cites changes, so that the store can keep what it read
-- for the last one (store/revcache.go), as migration 0016 does for pages:
-- workspaces.decisions_rev: a decision record of the workspace added,
-- changed or removed;
-- workspaces.blackboard_rev: a warning or finding of its blackboard
-- added, changed or removed (status notes, which every handoff posts, are
-- not cited and leave it alone).
ALTER TABLE workspaces ADD COLUMN decisions_rev INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN blackboard_rev INTEGER NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE TRIGGER decision_records_rev_ai AFTER INSERT ON decision_records BEGIN
    UPDATE workspaces SET decisions_rev = decisions_rev + 1 WHERE id = NEW.workspace_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decision_records_rev_ad AFTER DELETE ON decision_records BEGIN
    UPDATE workspaces SET decisions_rev = decisions_rev + 1 WHERE id = OLD.workspace_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decision_records_rev_au AFTER UPDATE ON decision_records BEGIN
    UPDATE workspaces SET decisions_rev = decisions_rev + 1 WHERE id IN (OLD.workspace_id, NEW.workspace_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blackboard_entries_rev_ai AFTER INSERT ON blackboard_entries
WHEN NEW.type IN ('warning', 'finding') BEGIN
    UPDATE workspaces SET blackboard_rev = blackboard_rev + 1 WHERE id = NEW.workspace_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blackboard_entries_rev_ad AFTER DELETE ON blackboard_entries
WHEN OLD.type IN ('warning', 'finding') BEGIN
    UPDATE workspaces SET blackboard_rev = blackboard_rev + 1 WHERE id = OLD.workspace_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blackboard_entries_rev_au AFTER UPDATE ON blackboard_entries
WHEN OLD.type IN ('warning', 'finding') OR NEW.type IN ('warning', 'finding') BEGIN
    UPDATE workspaces SET blackboard_rev = blackboard_rev + 1 WHERE id IN (OLD.workspace_id, NEW.workspace_id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER blackboard_entries_rev_au;
DROP TRIGGER blackboard_entries_rev_ad;
DROP TRIGGER blackboard_entries_rev_ai;
DROP TRIGGER decision_records_rev_au;
DROP TRIGGER decision_records_rev_ad;
DROP TRIGGER decision_records_rev_ai;
ALTER TABLE workspaces DROP COLUMN blackboard_rev;
ALTER TABLE workspaces DROP COLUMN decisions_rev;
