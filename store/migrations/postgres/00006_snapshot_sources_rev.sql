-- +goose Up
-- workspaces.decisions_rev and workspaces.blackboard_rev: as sqlite/0017.
-- Moved on whenever what an agent handoff with no scope cites changes: a
-- decision record of the workspace, or a warning or finding of its
-- blackboard, added, changed or removed.
ALTER TABLE workspaces ADD COLUMN decisions_rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN blackboard_rev BIGINT NOT NULL DEFAULT 0;

-- One function for both tables: "decisions" is 1 when it fires on
-- decision_records (decisions_rev moves on), 0 on blackboard_entries
-- (blackboard_rev does).
-- +goose StatementBegin
CREATE FUNCTION bump_sources_rev() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    decisions int := (TG_TABLE_NAME = 'decision_records')::int;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE workspaces SET decisions_rev = decisions_rev + decisions, blackboard_rev = blackboard_rev + 1 - decisions
        WHERE id = OLD.workspace_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.workspace_id <> OLD.workspace_id) THEN
        UPDATE workspaces SET decisions_rev = decisions_rev + decisions, blackboard_rev = blackboard_rev + 1 - decisions
        WHERE id = NEW.workspace_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER decision_records_rev AFTER INSERT OR DELETE OR UPDATE ON decision_records
    FOR EACH ROW EXECUTE FUNCTION bump_sources_rev();

-- Status notes are not cited (and every handoff posts one).
CREATE TRIGGER blackboard_entries_rev_ai AFTER INSERT ON blackboard_entries
    FOR EACH ROW WHEN (NEW.type IN ('warning', 'finding')) EXECUTE FUNCTION bump_sources_rev();
CREATE TRIGGER blackboard_entries_rev_ad AFTER DELETE ON blackboard_entries
    FOR EACH ROW WHEN (OLD.type IN ('warning', 'finding')) EXECUTE FUNCTION bump_sources_rev();
CREATE TRIGGER blackboard_entries_rev_au AFTER UPDATE ON blackboard_entries
    FOR EACH ROW WHEN (OLD.type IN ('warning', 'finding') OR NEW.type IN ('warning', 'finding'))
    EXECUTE FUNCTION bump_sources_rev();

-- +goose Down
DROP TRIGGER blackboard_entries_rev_au ON blackboard_entries;
DROP TRIGGER blackboard_entries_rev_ad ON blackboard_entries;
DROP TRIGGER blackboard_entries_rev_ai ON blackboard_entries;
DROP TRIGGER decision_records_rev ON decision_records;
DROP FUNCTION bump_sources_rev();
ALTER TABLE workspaces DROP COLUMN blackboard_rev;
ALTER TABLE workspaces DROP COLUMN decisions_rev;
