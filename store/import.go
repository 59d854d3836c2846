package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// HandoffImport is the input of ImportHandoff: a brainstorm handoff that
// came from elsewhere (a handoff envelope), with the session and payload
// hash that identify it.
type HandoffImport struct {
	WorkspaceID   string // the default workspace when empty
	SessionID     string
	PayloadSHA256 string
	Title         string // the new thread's title
	Summary       string
	Decisions     []DecisionCreate
	Files         []FileRefInput
	Risks         []RiskInput
}

// ImportHandoff creates, in one transaction, a thread and a draft handoff
// holding the decisions, files, risks and summary of in, for people to
// review and freeze. Importing the same session and payload again creates
// nothing and returns the handoff the first import made, with created
// false. Returns EINVALID, naming the item, for an item that breaks its
// Validate rules or a file listed twice, and for an import without
// decisions.
func (db *DB) ImportHandoff(ctx context.Context, in HandoffImport) (handoffID string, created bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("import handoff: %w", err)
		}
	}()
	if in.SessionID == "" || in.PayloadSHA256 == "" {
		return "", false, Errorf(EINVALID, "An import needs its session ID and payload hash.")
	}
	if len(in.Decisions) == 0 {
		return "", false, Errorf(EINVALID, "The handoff has no decisions: there is nothing to review or plan from.")
	}
	t := Thread{Title: in.Title}
	if err := t.Validate(); err != nil {
		return "", false, err
	}
	summary, err := checkText("summary", in.Summary, false)
	if err != nil {
		return "", false, err
	}
	for i := range in.Decisions {
		if err := in.Decisions[i].validate(); err != nil {
			return "", false, Errorf(EINVALID, "Decision %d: %s", i+1, ErrorMessage(err))
		}
	}
	paths := make(map[string]bool, len(in.Files))
	for i := range in.Files {
		if err := in.Files[i].validate(); err != nil {
			return "", false, Errorf(EINVALID, "File %d: %s", i+1, ErrorMessage(err))
		}
		if paths[in.Files[i].Path] {
			return "", false, Errorf(EINVALID, "File %d: %s is listed twice.", i+1, in.Files[i].Path)
		}
		paths[in.Files[i].Path] = true
	}
	for i := range in.Risks {
		if err := in.Risks[i].validate(); err != nil {
			return "", false, Errorf(EINVALID, "Risk %d: %s", i+1, ErrorMessage(err))
		}
	}
	if in.WorkspaceID == "" {
		in.WorkspaceID = db.defaultWorkspace
	}

	err = db.inTx(ctx, func(tx *txn) error {
		err := tx.QueryRowContext(ctx,
			`SELECT i.target_id FROM envelope_imports i JOIN handoffs h ON h.id = i.target_id
			 WHERE i.session_id = ? AND i.payload_sha256 = ?`, in.SessionID, in.PayloadSHA256).Scan(&handoffID)
		if err == nil {
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		created = true
		now := formatTime(db.now())
		threadID := newID()
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO threads (id, workspace_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			threadID, in.WorkspaceID, t.Title, now, now); err != nil {
			if violationOf(err) == foreignKeyViolation {
				return fmt.Errorf("workspace %s: %w", in.WorkspaceID, ErrNotFound)
			}
			return err
		}
		handoffID = newID()
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO handoffs (id, thread_id, workspace_id, summary, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			handoffID, threadID, in.WorkspaceID, summary, now, now); err != nil {
			return err
		}
		for _, d := range in.Decisions {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO decisions (id, handoff_id, content, source, confidence, created_at, updated_at)
				 VALUES (?, ?, ?, ?, ?, ?, ?)`,
				newID(), handoffID, d.Content, d.Source, d.Confidence, now, now); err != nil {
				return err
			}
		}
		for _, f := range in.Files {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO file_refs (id, handoff_id, path, relevance, context, source, created_at, updated_at)
				 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				newID(), handoffID, f.Path, f.Relevance, f.Context, f.Source, now, now); err != nil {
				return err
			}
		}
		for _, r := range in.Risks {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO risks (id, handoff_id, description, severity, mitigation, source, created_at, updated_at)
				 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				newID(), handoffID, r.Description, r.Severity, r.Mitigation, r.Source, now, now); err != nil {
				return err
			}
		}
		// A row left by an import whose handoff is gone is replaced.
		_, err = tx.ExecContext(ctx,
			`INSERT INTO envelope_imports (session_id, payload_sha256, kind, target_id, created_at)
			 VALUES (?, ?, 'brainstorm_handoff', ?, ?)
			 ON CONFLICT (session_id, payload_sha256) DO UPDATE SET target_id = excluded.target_id, created_at = excluded.created_at`,
			in.SessionID, in.PayloadSHA256, handoffID, now)
		return err
	})
	if err != nil {
		return "", false, err
	}
	return handoffID, created, nil
}
