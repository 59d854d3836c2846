package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Change is the outcome of an edit: the item's ID and the handoff's new version.
type Change struct {
	ID      string
	Version int
}

// PinMessage adds an assistant message's content to the thread's handoff
// (created if none) as a user-pinned decision linked to the message, and
// marks the message pinned. Pinning a pinned message returns its decision
// with created false.
func (db *DB) PinMessage(ctx context.Context, threadID, messageID string) (d *Decision, created bool, err error) {
	var handoffID, decisionID string
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		m, err := scanMessage(tx.QueryRowContext(ctx,
			`SELECT `+messageColumns+` FROM messages WHERE id = ? AND thread_id = ?`, messageID, threadID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("message %s: %w", messageID, ErrNotFound)
		} else if err != nil {
			return err
		}
		if m.Role != RoleAssistant || m.Status == StatusFailed || strings.TrimSpace(m.Content) == "" {
			return invalidf("message", "Only an assistant reply with content can be pinned.")
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
		content := m.Content
		if utf8.RuneCountInString(content) > MaxItemLen {
			content = string([]rune(content)[:MaxItemLen-1]) + "…"
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

// UnpinMessage removes the decision pinned from a message and clears the
// message's pin. Returns ErrNotFound if the message is not pinned.
func (db *DB) UnpinMessage(ctx context.Context, threadID, messageID string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var handoffID string
		err := tx.QueryRowContext(ctx,
			`DELETE FROM decisions WHERE pinned_message_id = ?
			   AND handoff_id = (SELECT id FROM handoffs WHERE thread_id = ?)
			 RETURNING handoff_id`, messageID, threadID).Scan(&handoffID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("pin of message %s: %w", messageID, ErrNotFound)
		} else if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET pinned = 0 WHERE id = ?`, messageID); err != nil {
			return err
		}
		_, err = touchHandoff(ctx, tx, handoffID, 0, db.now())
		return err
	})
	if err != nil {
		return fmt.Errorf("unpin message %s: %w", messageID, err)
	}
	return nil
}

// DecisionCreate is the input of CreateDecision.
type DecisionCreate struct {
	Content        string
	Source         Source // user-pinned when empty: a person added it
	Confidence     *float64
	MessageIDs     []string
	DuringPlanning bool
}

func (in *DecisionCreate) validate() (err error) {
	if in.Content, err = checkText("decision", in.Content, true); err != nil {
		return err
	}
	switch in.Source {
	case "":
		in.Source = SourcePinned
	case SourceAI, SourcePinned, SourceEdited:
	default:
		return invalidf("source", "Source must be ai-extracted, user-pinned or user-edited, not %q.", in.Source)
	}
	return checkConfidence(in.Confidence)
}

// CreateDecision adds a decision to a handoff. If version is not zero it
// must be the handoff's current version (else ErrConflict).
func (db *DB) CreateDecision(ctx context.Context, handoffID string, in DecisionCreate, version int) (*Decision, Change, error) {
	if err := in.validate(); err != nil {
		return nil, Change{}, err
	}
	ch := Change{ID: newID()}
	err := db.inTx(ctx, func(tx *sql.Tx) (err error) {
		now := db.now()
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO decisions (id, handoff_id, content, source, confidence, message_ids, during_planning, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ch.ID, handoffID, in.Content, in.Source, in.Confidence, encodeIDs(in.MessageIDs), in.DuringPlanning,
			formatTime(now), formatTime(now))
		return err
	})
	if err != nil {
		return nil, Change{}, fmt.Errorf("create decision: %w", err)
	}
	d, err := db.findDecision(ctx, handoffID, ch.ID)
	return d, ch, err
}

// UpdateDecision replaces a decision's content; its source becomes user-edited.
func (db *DB) UpdateDecision(ctx context.Context, handoffID, id, content string, version int) (*Decision, Change, error) {
	content, err := checkText("decision", content, true)
	if err != nil {
		return nil, Change{}, err
	}
	ch := Change{ID: id}
	err = db.inTx(ctx, func(tx *sql.Tx) (err error) {
		now := db.now()
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, now); err != nil {
			return err
		}
		return expectOne(tx.ExecContext(ctx,
			`UPDATE decisions SET content = ?, source = 'user-edited', updated_at = ? WHERE id = ? AND handoff_id = ?`,
			content, formatTime(now), id, handoffID))("decision", id)
	})
	if err != nil {
		return nil, Change{}, fmt.Errorf("update decision %s: %w", id, err)
	}
	d, err := db.findDecision(ctx, handoffID, id)
	return d, ch, err
}

// DeleteDecision removes a decision for good. A pinned decision's message
// is unpinned.
func (db *DB) DeleteDecision(ctx context.Context, handoffID, id string, version int) (Change, error) {
	ch := Change{ID: id}
	err := db.inTx(ctx, func(tx *sql.Tx) (err error) {
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, db.now()); err != nil {
			return err
		}
		var pinned sql.NullString
		err = tx.QueryRowContext(ctx, `DELETE FROM decisions WHERE id = ? AND handoff_id = ? RETURNING pinned_message_id`,
			id, handoffID).Scan(&pinned)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("decision %s: %w", id, ErrNotFound)
		} else if err != nil {
			return err
		}
		if pinned.Valid {
			_, err = tx.ExecContext(ctx, `UPDATE messages SET pinned = 0 WHERE id = ?`, pinned.String)
		}
		return err
	})
	if err != nil {
		return Change{}, fmt.Errorf("delete decision %s: %w", id, err)
	}
	return ch, nil
}

func (db *DB) findDecision(ctx context.Context, handoffID, id string) (*Decision, error) {
	h, err := db.FindHandoffByID(ctx, handoffID)
	if err != nil {
		return nil, err
	}
	for _, d := range h.Decisions {
		if d.ID == id {
			return d, nil
		}
	}
	return nil, fmt.Errorf("decision %s: %w", id, ErrNotFound)
}

// FileRefInput is the input of CreateFileRef and UpdateFileRef. Path must
// already be cleaned by the caller (see agent.CleanPath); the store only
// checks its length and characters.
type FileRefInput struct {
	Path       string
	Relevance  Level
	Context    string
	Source     Source
	MessageIDs []string
}

func (in *FileRefInput) validate() (err error) {
	in.Path = strings.TrimSpace(in.Path)
	if in.Path == "" {
		return invalidf("path", "The file path is empty.")
	}
	if utf8.RuneCountInString(in.Path) > MaxPathLen {
		return invalidf("path", "The file path is longer than %d characters.", MaxPathLen)
	}
	if strings.IndexFunc(in.Path, unicode.IsControl) >= 0 {
		return invalidf("path", "The file path contains control characters.")
	}
	if in.Relevance, err = ParseLevel("relevance", string(in.Relevance)); err != nil {
		return err
	}
	if in.Context, err = checkText("context", in.Context, false); err != nil {
		return err
	}
	if in.Source == "" {
		in.Source = SourcePinned
	}
	return nil
}

// CreateFileRef adds a file to a handoff; a path already there is ErrConflict.
func (db *DB) CreateFileRef(ctx context.Context, handoffID string, in FileRefInput, version int) (Change, error) {
	if err := in.validate(); err != nil {
		return Change{}, err
	}
	ch := Change{ID: newID()}
	err := db.inTx(ctx, func(tx *sql.Tx) (err error) {
		now := db.now()
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO file_refs (id, handoff_id, path, relevance, context, source, message_ids, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ch.ID, handoffID, in.Path, in.Relevance, in.Context, in.Source, encodeIDs(in.MessageIDs), formatTime(now), formatTime(now))
		if isUniqueErr(err) {
			return fmt.Errorf("%s is already in this handoff: %w", in.Path, ErrConflict)
		}
		return err
	})
	if err != nil {
		return Change{}, fmt.Errorf("create file: %w", err)
	}
	return ch, nil
}

// UpdateFileRef changes a file's path, relevance and context; its source
// becomes user-edited.
func (db *DB) UpdateFileRef(ctx context.Context, handoffID, id string, in FileRefInput, version int) (Change, error) {
	if err := in.validate(); err != nil {
		return Change{}, err
	}
	ch := Change{ID: id}
	err := db.inTx(ctx, func(tx *sql.Tx) (err error) {
		now := db.now()
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, now); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx,
			`UPDATE file_refs SET path = ?, relevance = ?, context = ?, source = 'user-edited', updated_at = ?
			 WHERE id = ? AND handoff_id = ?`, in.Path, in.Relevance, in.Context, formatTime(now), id, handoffID)
		if isUniqueErr(err) {
			return fmt.Errorf("%s is already in this handoff: %w", in.Path, ErrConflict)
		}
		return expectOne(res, err)("file", id)
	})
	if err != nil {
		return Change{}, fmt.Errorf("update file %s: %w", id, err)
	}
	return ch, nil
}

// DeleteFileRef removes a file from a handoff.
func (db *DB) DeleteFileRef(ctx context.Context, handoffID, id string, version int) (Change, error) {
	return db.deleteItem(ctx, "file_refs", "file", handoffID, id, version)
}

// RiskInput is the input of CreateRisk and UpdateRisk.
type RiskInput struct {
	Description string
	Severity    Level
	Mitigation  string
	Source      Source
	MessageIDs  []string
}

func (in *RiskInput) validate() (err error) {
	if in.Description, err = checkText("risk", in.Description, true); err != nil {
		return err
	}
	if in.Severity, err = ParseLevel("severity", string(in.Severity)); err != nil {
		return err
	}
	if in.Mitigation, err = checkText("mitigation", in.Mitigation, false); err != nil {
		return err
	}
	if in.Source == "" {
		in.Source = SourcePinned
	}
	return nil
}

// CreateRisk adds a risk to a handoff.
func (db *DB) CreateRisk(ctx context.Context, handoffID string, in RiskInput, version int) (Change, error) {
	if err := in.validate(); err != nil {
		return Change{}, err
	}
	ch := Change{ID: newID()}
	err := db.inTx(ctx, func(tx *sql.Tx) (err error) {
		now := db.now()
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO risks (id, handoff_id, description, severity, mitigation, source, message_ids, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ch.ID, handoffID, in.Description, in.Severity, in.Mitigation, in.Source, encodeIDs(in.MessageIDs), formatTime(now), formatTime(now))
		return err
	})
	if err != nil {
		return Change{}, fmt.Errorf("create risk: %w", err)
	}
	return ch, nil
}

// UpdateRisk changes a risk; its source becomes user-edited.
func (db *DB) UpdateRisk(ctx context.Context, handoffID, id string, in RiskInput, version int) (Change, error) {
	if err := in.validate(); err != nil {
		return Change{}, err
	}
	ch := Change{ID: id}
	err := db.inTx(ctx, func(tx *sql.Tx) (err error) {
		now := db.now()
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, now); err != nil {
			return err
		}
		return expectOne(tx.ExecContext(ctx,
			`UPDATE risks SET description = ?, severity = ?, mitigation = ?, source = 'user-edited', updated_at = ?
			 WHERE id = ? AND handoff_id = ?`, in.Description, in.Severity, in.Mitigation, formatTime(now), id, handoffID))("risk", id)
	})
	if err != nil {
		return Change{}, fmt.Errorf("update risk %s: %w", id, err)
	}
	return ch, nil
}

// DeleteRisk removes a risk from a handoff.
func (db *DB) DeleteRisk(ctx context.Context, handoffID, id string, version int) (Change, error) {
	return db.deleteItem(ctx, "risks", "risk", handoffID, id, version)
}

func (db *DB) deleteItem(ctx context.Context, table, kind, handoffID, id string, version int) (Change, error) {
	ch := Change{ID: id}
	err := db.inTx(ctx, func(tx *sql.Tx) (err error) {
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, db.now()); err != nil {
			return err
		}
		// table is one of two constants, never input.
		return expectOne(tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ? AND handoff_id = ?`, id, handoffID))(kind, id)
	})
	if err != nil {
		return Change{}, fmt.Errorf("delete %s %s: %w", kind, id, err)
	}
	return ch, nil
}

// expectOne turns "no row changed" into ErrNotFound.
func expectOne(res sql.Result, err error) func(kind, id string) error {
	return func(kind, id string) error {
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%s %s: %w", kind, id, ErrNotFound)
		}
		return nil
	}
}

// SetSummary replaces a handoff's summary.
func (db *DB) SetSummary(ctx context.Context, handoffID, summary string, version int) (Change, error) {
	summary, err := checkText("summary", summary, false)
	if err != nil {
		return Change{}, err
	}
	ch := Change{ID: handoffID}
	err = db.inTx(ctx, func(tx *sql.Tx) (err error) {
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, db.now()); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE handoffs SET summary = ? WHERE id = ?`, summary, handoffID)
		return err
	})
	if err != nil {
		return Change{}, fmt.Errorf("set summary: %w", err)
	}
	return ch, nil
}
