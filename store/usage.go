package store

import (
	"context"
	"fmt"
	"time"
)

// TokensUsed returns how many tokens (input plus output) the workspace's
// model calls have used since since: the assistant replies in its threads,
// whatever their status, the extractions and the plans of its handoffs, and
// the summaries of its accepted thread handoffs (a declined preview leaves
// no trace, so it is not counted). It is what a token budget counts. An
// unknown workspace has used none.
//
// A plan's tokens are counted once it has finished (FinishPlan records
// them); a plan still running counts nothing yet.
func (db *DB) TokensUsed(ctx context.Context, workspaceID string, since time.Time) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx,
		`SELECT CAST(COALESCE(SUM(tokens), 0) AS BIGINT) FROM (
		     SELECT m.input_tokens + m.output_tokens AS tokens
		     FROM messages m JOIN threads t ON t.id = m.thread_id
		     WHERE t.workspace_id = ? AND m.role = 'assistant' AND m.created_at >= ?
		     UNION ALL
		     SELECT p.input_tokens + p.output_tokens
		     FROM plans p JOIN handoffs h ON h.id = p.handoff_id
		     WHERE h.workspace_id = ? AND p.created_at >= ?
		     UNION ALL
		     SELECT r.input_tokens + r.output_tokens
		     FROM extraction_runs r JOIN handoffs h ON h.id = r.handoff_id
		     WHERE h.workspace_id = ? AND r.started_at >= ?
		     UNION ALL
		     SELECT th.tokens_used FROM thread_handoffs th
		     WHERE th.workspace_id = ? AND th.created_at >= ?
		 ) AS used`,
		workspaceID, formatTime(since), workspaceID, formatTime(since), workspaceID, formatTime(since),
		workspaceID, formatTime(since)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("tokens used by workspace %s since %s: %w", workspaceID, since.UTC().Format(time.RFC3339), err)
	}
	return n, nil
}
