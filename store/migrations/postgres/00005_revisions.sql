-- +goose Up
-- Revision numbers that the database itself moves on whenever what a page
-- reads on every view changes, so that the store can keep what it read
-- and check it with one cheap read (store/revcache.go). Triggers bump them
-- in the writing transaction, whoever writes: any server on the database,
-- or the CLI. See the SQLite migration 0016 for what each one follows.
ALTER TABLE threads ADD COLUMN messages_rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE handoffs ADD COLUMN items_rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE handoffs ADD COLUMN activity_rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN access_rev BIGINT NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION bump_own_access_rev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.access_rev := OLD.access_rev + 1;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER users_access_rev BEFORE UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION bump_own_access_rev();

-- +goose StatementBegin
CREATE FUNCTION bump_access_rev_of_member() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE users SET access_rev = access_rev + 1 WHERE id = OLD.user_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.user_id <> OLD.user_id) THEN
        UPDATE users SET access_rev = access_rev + 1 WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER memberships_access_rev AFTER INSERT OR DELETE OR UPDATE ON memberships
    FOR EACH ROW EXECUTE FUNCTION bump_access_rev_of_member();

-- +goose StatementBegin
CREATE FUNCTION bump_access_rev_of_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users SET access_rev = access_rev + 1 WHERE id IN (SELECT user_id FROM memberships WHERE workspace_id = NEW.id);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER workspaces_access_rev AFTER UPDATE OF name ON workspaces
    FOR EACH ROW EXECUTE FUNCTION bump_access_rev_of_members();

-- +goose StatementBegin
CREATE FUNCTION bump_messages_rev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE threads SET messages_rev = messages_rev + 1 WHERE id = OLD.thread_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.thread_id <> OLD.thread_id) THEN
        UPDATE threads SET messages_rev = messages_rev + 1 WHERE id = NEW.thread_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER messages_rev AFTER INSERT OR DELETE OR UPDATE OF id, thread_id, role, status, pinned, created_at ON messages
    FOR EACH ROW EXECUTE FUNCTION bump_messages_rev();

-- +goose StatementBegin
CREATE FUNCTION bump_items_rev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.handoff_id <> OLD.handoff_id) THEN
        UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER decisions_rev AFTER INSERT OR DELETE OR UPDATE ON decisions
    FOR EACH ROW EXECUTE FUNCTION bump_items_rev();
CREATE TRIGGER file_refs_rev AFTER INSERT OR DELETE OR UPDATE ON file_refs
    FOR EACH ROW EXECUTE FUNCTION bump_items_rev();
CREATE TRIGGER risks_rev AFTER INSERT OR DELETE OR UPDATE ON risks
    FOR EACH ROW EXECUTE FUNCTION bump_items_rev();

-- +goose StatementBegin
CREATE FUNCTION bump_items_rev_of_editor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id IN (
        SELECT handoff_id FROM decisions WHERE updated_by = NEW.id
        UNION SELECT handoff_id FROM file_refs WHERE updated_by = NEW.id
        UNION SELECT handoff_id FROM risks WHERE updated_by = NEW.id);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER users_rev AFTER UPDATE OF name ON users
    FOR EACH ROW EXECUTE FUNCTION bump_items_rev_of_editor();

-- +goose StatementBegin
CREATE FUNCTION bump_activity_rev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.handoff_id <> OLD.handoff_id) THEN
        UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER activity_rev AFTER INSERT OR DELETE OR UPDATE ON activity
    FOR EACH ROW EXECUTE FUNCTION bump_activity_rev();
CREATE TRIGGER extraction_runs_rev AFTER INSERT OR DELETE OR UPDATE ON extraction_runs
    FOR EACH ROW EXECUTE FUNCTION bump_activity_rev();
CREATE TRIGGER snapshots_rev AFTER INSERT OR DELETE OR UPDATE ON snapshots
    FOR EACH ROW EXECUTE FUNCTION bump_activity_rev();
CREATE TRIGGER plans_rev AFTER INSERT OR DELETE OR UPDATE ON plans
    FOR EACH ROW EXECUTE FUNCTION bump_activity_rev();

-- +goose Down
DROP TRIGGER workspaces_access_rev ON workspaces;
DROP FUNCTION bump_access_rev_of_members();
DROP TRIGGER memberships_access_rev ON memberships;
DROP FUNCTION bump_access_rev_of_member();
DROP TRIGGER users_access_rev ON users;
DROP FUNCTION bump_own_access_rev();
DROP TRIGGER plans_rev ON plans;
DROP TRIGGER snapshots_rev ON snapshots;
DROP TRIGGER extraction_runs_rev ON extraction_runs;
DROP TRIGGER activity_rev ON activity;
DROP FUNCTION bump_activity_rev();
DROP TRIGGER users_rev ON users;
DROP FUNCTION bump_items_rev_of_editor();
DROP TRIGGER risks_rev ON risks;
DROP TRIGGER file_refs_rev ON file_refs;
DROP TRIGGER decisions_rev ON decisions;
DROP FUNCTION bump_items_rev();
DROP TRIGGER messages_rev ON messages;
DROP FUNCTION bump_messages_rev();
ALTER TABLE users DROP COLUMN access_rev;
ALTER TABLE handoffs DROP COLUMN activity_rev;
ALTER TABLE handoffs DROP COLUMN items_rev;
ALTER TABLE threads DROP COLUMN messages_rev;
