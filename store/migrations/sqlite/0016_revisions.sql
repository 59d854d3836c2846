-- +goose Up
-- Revision numbers that the database itself moves on whenever what a page
-- reads on every view changes, so that the store can keep what it read
-- and check it with one cheap read (store/revcache.go). Triggers bump them
-- in the writing transaction, whoever writes: this server, another one on
-- the same database, or the CLI.
--
-- threads.messages_rev: a message of the thread added, removed, or its
-- role, status, pin or time changed (streamed text is not in the heads).
ALTER TABLE threads ADD COLUMN messages_rev INTEGER NOT NULL DEFAULT 0;
-- handoffs.items_rev: a decision, file or risk of the handoff added,
-- changed or removed, or a user who last edited one renamed.
ALTER TABLE handoffs ADD COLUMN items_rev INTEGER NOT NULL DEFAULT 0;
-- handoffs.activity_rev: anything on the handoff's timeline (FindActivity):
-- its items, as items_rev, and its activity log, extraction runs,
-- snapshots and plans.
ALTER TABLE handoffs ADD COLUMN activity_rev INTEGER NOT NULL DEFAULT 0;
-- users.access_rev: the user changed, or their memberships, or the name of
-- a workspace they are in (what a session reads besides its own row).
ALTER TABLE users ADD COLUMN access_rev INTEGER NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE TRIGGER users_access_rev_au AFTER UPDATE ON users WHEN NEW.access_rev = OLD.access_rev BEGIN
    UPDATE users SET access_rev = access_rev + 1 WHERE id = NEW.id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER memberships_access_rev_ai AFTER INSERT ON memberships BEGIN
    UPDATE users SET access_rev = access_rev + 1 WHERE id = NEW.user_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER memberships_access_rev_ad AFTER DELETE ON memberships BEGIN
    UPDATE users SET access_rev = access_rev + 1 WHERE id = OLD.user_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER memberships_access_rev_au AFTER UPDATE ON memberships BEGIN
    UPDATE users SET access_rev = access_rev + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER workspaces_access_rev_au AFTER UPDATE OF name ON workspaces BEGIN
    UPDATE users SET access_rev = access_rev + 1 WHERE id IN (SELECT user_id FROM memberships WHERE workspace_id = NEW.id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_rev_ai AFTER INSERT ON messages BEGIN
    UPDATE threads SET messages_rev = messages_rev + 1 WHERE id = NEW.thread_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_rev_ad AFTER DELETE ON messages BEGIN
    UPDATE threads SET messages_rev = messages_rev + 1 WHERE id = OLD.thread_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_rev_au AFTER UPDATE OF id, thread_id, role, status, pinned, created_at ON messages BEGIN
    UPDATE threads SET messages_rev = messages_rev + 1 WHERE id IN (OLD.thread_id, NEW.thread_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decisions_rev_ai AFTER INSERT ON decisions BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decisions_rev_ad AFTER DELETE ON decisions BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decisions_rev_au AFTER UPDATE ON decisions BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id IN (OLD.handoff_id, NEW.handoff_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER file_refs_rev_ai AFTER INSERT ON file_refs BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER file_refs_rev_ad AFTER DELETE ON file_refs BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER file_refs_rev_au AFTER UPDATE ON file_refs BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id IN (OLD.handoff_id, NEW.handoff_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER risks_rev_ai AFTER INSERT ON risks BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER risks_rev_ad AFTER DELETE ON risks BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER risks_rev_au AFTER UPDATE ON risks BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id IN (OLD.handoff_id, NEW.handoff_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER users_rev_au AFTER UPDATE OF name ON users BEGIN
    UPDATE handoffs SET items_rev = items_rev + 1, activity_rev = activity_rev + 1 WHERE id IN (
        SELECT handoff_id FROM decisions WHERE updated_by = NEW.id
        UNION SELECT handoff_id FROM file_refs WHERE updated_by = NEW.id
        UNION SELECT handoff_id FROM risks WHERE updated_by = NEW.id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER activity_rev_ai AFTER INSERT ON activity BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER activity_rev_ad AFTER DELETE ON activity BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER activity_rev_au AFTER UPDATE ON activity BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id IN (OLD.handoff_id, NEW.handoff_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER extraction_runs_rev_ai AFTER INSERT ON extraction_runs BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER extraction_runs_rev_ad AFTER DELETE ON extraction_runs BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER extraction_runs_rev_au AFTER UPDATE ON extraction_runs BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id IN (OLD.handoff_id, NEW.handoff_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER snapshots_rev_ai AFTER INSERT ON snapshots BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER snapshots_rev_ad AFTER DELETE ON snapshots BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER snapshots_rev_au AFTER UPDATE ON snapshots BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id IN (OLD.handoff_id, NEW.handoff_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER plans_rev_ai AFTER INSERT ON plans BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = NEW.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER plans_rev_ad AFTER DELETE ON plans BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id = OLD.handoff_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER plans_rev_au AFTER UPDATE ON plans BEGIN
    UPDATE handoffs SET activity_rev = activity_rev + 1 WHERE id IN (OLD.handoff_id, NEW.handoff_id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER workspaces_access_rev_au;
DROP TRIGGER memberships_access_rev_au;
DROP TRIGGER memberships_access_rev_ad;
DROP TRIGGER memberships_access_rev_ai;
DROP TRIGGER users_access_rev_au;
DROP TRIGGER plans_rev_au;
DROP TRIGGER plans_rev_ad;
DROP TRIGGER plans_rev_ai;
DROP TRIGGER snapshots_rev_au;
DROP TRIGGER snapshots_rev_ad;
DROP TRIGGER snapshots_rev_ai;
DROP TRIGGER extraction_runs_rev_au;
DROP TRIGGER extraction_runs_rev_ad;
DROP TRIGGER extraction_runs_rev_ai;
DROP TRIGGER activity_rev_au;
DROP TRIGGER activity_rev_ad;
DROP TRIGGER activity_rev_ai;
DROP TRIGGER users_rev_au;
DROP TRIGGER risks_rev_au;
DROP TRIGGER risks_rev_ad;
DROP TRIGGER risks_rev_ai;
DROP TRIGGER file_refs_rev_au;
DROP TRIGGER file_refs_rev_ad;
DROP TRIGGER file_refs_rev_ai;
DROP TRIGGER decisions_rev_au;
DROP TRIGGER decisions_rev_ad;
DROP TRIGGER decisions_rev_ai;
DROP TRIGGER messages_rev_au;
DROP TRIGGER messages_rev_ad;
DROP TRIGGER messages_rev_ai;
ALTER TABLE users DROP COLUMN access_rev;
ALTER TABLE handoffs DROP COLUMN activity_rev;
ALTER TABLE handoffs DROP COLUMN items_rev;
ALTER TABLE threads DROP COLUMN messages_rev;
