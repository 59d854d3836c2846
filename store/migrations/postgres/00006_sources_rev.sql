-- +goose Up
-- workspaces.sources_rev: as sqlite/0017. Moved on whenever what an agent
-- handoff with no scope cites changes: a decision record of the workspace
-- added, changed or removed, or a warning or finding of its blackboard.
ALTER TABLE workspaces ADD COLUMN sources_rev BIGINT NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION bump_sources_rev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE workspaces SET sources_rev = sources_rev + 1 WHERE id = OLD.workspace_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.workspace_id <> OLD.workspace_id) THEN
        UPDATE workspaces SET sources_rev = sources_rev + 1 WHERE id = NEW.workspace_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER decision_records_sources_rev AFTER INSERT OR DELETE OR UPDATE ON decision_records
    FOR EACH ROW EXECUTE FUNCTION bump_sources_rev();
-- Blackboard status notes are not cited (and every handoff posts one).
CREATE TRIGGER blackboard_entries_sources_rev_ai AFTER INSERT ON blackboard_entries
    FOR EACH ROW WHEN (NEW.type IN ('warning', 'finding')) EXECUTE FUNCTION bump_sources_rev();
CREATE TRIGGER blackboard_entries_sources_rev_ad AFTER DELETE ON blackboard_entries
    FOR EACH ROW WHEN (OLD.type IN ('warning', 'finding')) EXECUTE FUNCTION bump_sources_rev();
CREATE TRIGGER blackboard_entries_sources_rev_au AFTER UPDATE ON blackboard_entries
    FOR EACH ROW WHEN (OLD.type IN ('warning', 'finding') OR NEW.type IN ('warning', 'finding'))
    EXECUTE FUNCTION bump_sources_rev();

-- +goose Down
DROP TRIGGER blackboard_entries_sources_rev_au ON blackboard_entries;
DROP TRIGGER blackboard_entries_sources_rev_ad ON blackboard_entries;
DROP TRIGGER blackboard_entries_sources_rev_ai ON blackboard_entries;
DROP TRIGGER decision_records_sources_rev ON decision_records;
DROP FUNCTION bump_sources_rev();
ALTER TABLE workspaces DROP COLUMN sources_rev;
