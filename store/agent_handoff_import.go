package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// AgentHandoffImport is the input of ImportAgentHandoff: an agent handoff
// that came from elsewhere (an agent_handoff envelope), with the session and
// payload hash that identify it.
type AgentHandoffImport struct {
	SessionID     string
	PayloadSHA256 string
	// Handoff is the handoff to create: its workspace (the default one when
	// empty), agents, scope, summary, results and context snapshot. IDs,
	// status and times are filled in.
	Handoff *AgentHandoff
}

// ImportAgentHandoff creates, in one transaction, the agent handoff of in
// with its context snapshot as given, and records the import. Importing the
// same session and payload into the same workspace again creates nothing
// and returns the handoff the first import made, with created false. The
// snapshot's IDs must name decision records, warnings and findings of the
// handoff's workspace, as CreateAgentHandoff checks them. Returns EINVALID
// for a handoff that breaks a rule or a snapshot naming what the workspace
// does not have.
func (db *DB) ImportAgentHandoff(ctx context.Context, in AgentHandoffImport) (handoffID string, created bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("import agent handoff: %w", err)
		}
	}()
	h := in.Handoff
	if in.SessionID == "" || in.PayloadSHA256 == "" || h == nil {
		return "", false, Errorf(EINVALID, "An import needs its session ID, payload hash and handoff.")
	}
	h.WorkspaceID = db.workspace(h.WorkspaceID)
	h.normalize()
	if err := h.Validate(); err != nil {
		return "", false, err
	}
	results, err := compactJSON(h.Results)
	if err != nil {
		return "", false, Errorf(EINVALID, "Results must be a JSON list.")
	}
	err = db.inTx(ctx, func(tx *txn) error {
		var found string
		err := tx.QueryRowContext(ctx,
			`SELECT i.target_id FROM envelope_imports i JOIN agent_handoffs a ON a.id = i.target_id
			 WHERE i.session_id = ? AND i.payload_sha256 = ? AND i.kind = 'agent_handoff' AND a.workspace_id = ?`,
			in.SessionID, in.PayloadSHA256, h.WorkspaceID).Scan(&found)
		if err == nil {
			got, err := findAgentHandoffByID(ctx, tx, h.WorkspaceID, found)
			if err != nil {
				return err
			}
			*h = *got
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := checkSnapshotIDs(ctx, tx, h.WorkspaceID, h.Snapshot); err != nil {
			return err
		}
		snapshot, err := json.Marshal(h.Snapshot)
		if err != nil {
			return err
		}
		created = true
		now := db.now()
		h.ID, h.Status, h.CreatedAt, h.StatusEntryID, h.Results = newID(), AgentHandoffPending, now, "", results
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO agent_handoffs (id, workspace_id, source_agent, target_agent, scope, summary, results,
			   context_snapshot, status, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			h.ID, h.WorkspaceID, h.SourceAgent, nullIfEmpty(h.TargetAgent), h.Scope, h.Summary, string(results),
			string(snapshot), h.Status, formatTime(now)); err != nil {
			if violationOf(err) == foreignKeyViolation {
				return fmt.Errorf("workspace %s: %w", h.WorkspaceID, ErrNotFound)
			}
			return err
		}
		// A row left by an import whose target is gone, or that went to
		// another workspace, is replaced.
		_, err = tx.ExecContext(ctx,
			`INSERT INTO envelope_imports (session_id, payload_sha256, kind, target_id, created_at)
			 VALUES (?, ?, 'agent_handoff', ?, ?)
			 ON CONFLICT (session_id, payload_sha256) DO UPDATE
			   SET kind = excluded.kind, target_id = excluded.target_id, created_at = excluded.created_at`,
			in.SessionID, in.PayloadSHA256, h.ID, formatTime(now))
		return err
	})
	if err != nil {
		return "", false, err
	}
	return h.ID, created, nil
}
