package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// PinMessageAs adds content, a decision a person worded (or the reply's
// first sentence), to the thread's handoff (created if none) as a
// user-pinned decision linked to an assistant message, and marks the
// message pinned. Pinning a pinned message returns its decision with
// created false. Returns ErrInvalid for empty or over-long content or a
// message that cannot be pinned, ErrNotFound for an unknown message.
func (db *DB) PinMessageAs(ctx context.Context, threadID, messageID, content string) (d *Decision, created bool, err error) {
	if content, err = checkText("decision", content, true); err != nil {
		return nil, false, err
	}
	var handoffID, decisionID string
	err = db.inTx(ctx, func(tx *txn) error {
		var role Role
		var status MessageStatus
		err := tx.QueryRowContext(ctx, `SELECT role, status FROM messages WHERE id = ? AND thread_id = ?`,
			messageID, threadID).Scan(&role, &status)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("message %s: %w", messageID, ErrNotFound)
		} else if err != nil {
			return err
		}
		if role != RoleAssistant || status == StatusFailed {
			return Errorf(EINVALID, "Only an assistant reply with content can be pinned.")
		}
		now := db.now()
		if handoffID, err = ensureHandoff(ctx, tx, threadID, now); err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, `SELECT id FROM decisions WHERE handoff_id = ? AND pinned_message_id = ?`,
			handoffID, messageID).Scan(&decisionID)
		if err == nil {
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		decisionID, created = newID(), true
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO decisions (id, handoff_id, content, source, message_ids, pinned_message_id, created_at, updated_at)
			 VALUES (?, ?, ?, 'user-pinned', ?, ?, ?, ?)`,
			decisionID, handoffID, content, encodeIDs([]string{messageID}), messageID, formatTime(now), formatTime(now)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET pinned = 1 WHERE id = ?`, messageID); err != nil {
			return err
		}
		_, err = touchHandoff(ctx, tx, handoffID, 0, now)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("pin message %s: %w", messageID, err)
	}
	d, err = db.findDecision(ctx, handoffID, decisionID)
	return d, created, err
}
