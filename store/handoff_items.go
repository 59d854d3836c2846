package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
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
	err = db.inTx(ctx, func(tx *txn) error {
		m, err := scanMessage(tx.QueryRowContext(ctx,
			`SELECT `+messageColumns+` FROM messages WHERE id = ? AND thread_id = ?`, messageID, threadID))
		if err != nil {
			return notFound(err, "message %s", messageID)
		}
		if m.Role != RoleAssistant || m.Status == StatusFailed || strings.TrimSpace(m.Content) == "" {
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
		content := m.Content
		if utf8.RuneCountInString(content) > MaxItemLen {
			content = string([]rune(content)[:MaxItemLen-1]) + "…"
		}
		decisionID, created = newID(), true
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO decisions (id, handoff_id, content, source, message_ids, pinned_message_id, created_at, updated_at, created_by, updated_by)
			 VALUES (?, ?, ?, 'user-pinned', ?, ?, ?, ?, ?, ?)`,
			decisionID, handoffID, content, encodeIDs([]string{messageID}), messageID, formatTime(now), formatTime(now), actor(ctx), actor(ctx)); err != nil {
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
	err := db.inTx(ctx, func(tx *txn) error {
		var handoffID string
		err := tx.QueryRowContext(ctx,
			`DELETE FROM decisions WHERE pinned_message_id = ?
			   AND handoff_id = (SELECT id FROM handoffs WHERE thread_id = ?)
			 RETURNING handoff_id`, messageID, threadID).Scan(&handoffID)
		if err != nil {
			return notFound(err, "pin of message %s", messageID)
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

// validate defaults the source and checks the decision (Decision.Validate).
func (in *DecisionCreate) validate() error {
	if in.Source == "" {
		in.Source = SourcePinned
	}
	d := Decision{Content: in.Content, Source: in.Source, Confidence: in.Confidence}
	if err := d.Validate(); err != nil {
		return err
	}
	in.Content = d.Content
	return nil
}

// CreateDecision adds a decision to a handoff. If version is not zero it
// must be the handoff's current version (else ECONFLICT); zero adds
// whatever the version, as an addition overwrites nothing. Returns
// EINVALID for a decision that breaks Decision.Validate and ENOTFOUND for
// an unknown handoff.
func (db *DB) CreateDecision(ctx context.Context, handoffID string, in DecisionCreate, version int) (*Decision, Change, error) {
	if err := in.validate(); err != nil {
		return nil, Change{}, err
	}
	ch, err := db.changeHandoff(ctx, handoffID, newID(), version, func(tx *txn, id string, now time.Time) error {
		return insertDecision(ctx, tx, handoffID, id, in, now)
	})
	if err != nil {
		return nil, Change{}, fmt.Errorf("create decision: %w", err)
	}
	d, err := db.findDecision(ctx, handoffID, ch.ID)
	return d, ch, err
}

// insertDecision writes a validated decision into a handoff.
func insertDecision(ctx context.Context, tx *txn, handoffID, id string, in DecisionCreate, now time.Time) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO decisions (id, handoff_id, content, source, confidence, message_ids, during_planning, created_at, updated_at, created_by, updated_by)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, handoffID, in.Content, in.Source, in.Confidence, encodeIDs(in.MessageIDs), in.DuringPlanning,
		formatTime(now), formatTime(now), actor(ctx), actor(ctx))
	return err
}

// DecisionUpdate is the input of UpdateDecision: the fields to change (nil
// keeps a field as it is) and the handoff version the change is based on.
type DecisionUpdate struct {
	Content *string
	Version int // the handoff's version the edit was made from; required
}

// UpdateDecision applies upd to a decision of a handoff, whose source
// becomes user-edited, and returns the decision as stored and the change.
// Returns EINVALID if upd sets no field or the result breaks
// Decision.Validate, ENOTFOUND if the handoff has no such decision, and
// ECONFLICT (also ErrStaleVersion) if upd.Version is not the handoff's
// current version.
func (db *DB) UpdateDecision(ctx context.Context, handoffID, id string, upd DecisionUpdate) (*Decision, Change, error) {
	if upd.Content == nil {
		return nil, Change{}, Errorf(EINVALID, "Nothing to change: the update sets no field of the decision.")
	}
	var d *Decision
	ch, err := db.updateItem(ctx, handoffID, id, upd.Version, func(tx *txn, h *Handoff, now time.Time) error {
		if d = findByID(h.Decisions, id, func(d *Decision) string { return d.ID }); d == nil {
			return fmt.Errorf("decision %s: %w", id, ErrNotFound)
		}
		d.Content = *upd.Content
		d.Source, d.UpdatedAt = SourceEdited, now
		if err := d.Validate(); err != nil {
			return err
		}
		name, err := actorName(ctx, tx)
		if err != nil {
			return err
		}
		d.UpdatedBy = name
		_, err = tx.ExecContext(ctx, `UPDATE decisions SET content = ?, source = ?, updated_at = ?, updated_by = ? WHERE id = ?`,
			d.Content, d.Source, formatTime(now), actor(ctx), id)
		return err
	})
	if err != nil {
		return nil, Change{}, fmt.Errorf("update decision %s: %w", id, err)
	}
	return d, ch, nil
}

// changeHandoff is every change to a handoff's items or summary: in one
// transaction it records the change on the handoff (touchHandoff, which
// checks version unless it is zero) and runs write on the item id, then
// returns the item's ID and the handoff's new version.
func (db *DB) changeHandoff(ctx context.Context, handoffID, id string, version int,
	write func(tx *txn, id string, now time.Time) error) (Change, error) {
	ch := Change{ID: id}
	err := db.inTx(ctx, func(tx *txn) (err error) {
		now := db.now()
		if ch.Version, err = touchHandoff(ctx, tx, handoffID, version, now); err != nil {
			return err
		}
		return write(tx, id, now)
	})
	if err != nil {
		return Change{}, err
	}
	return ch, nil
}

// updateItem is changeHandoff for an edit, which must say the version it
// was made from: apply finds its item among the handoff's items, changes,
// validates and writes it.
func (db *DB) updateItem(ctx context.Context, handoffID, id string, version int,
	apply func(tx *txn, h *Handoff, now time.Time) error) (Change, error) {
	if version < 1 {
		return Change{}, Errorf(EINVALID, "Say which version of the handoff the edit was made from.")
	}
	return db.changeHandoff(ctx, handoffID, id, version, func(tx *txn, _ string, now time.Time) error {
		h := &Handoff{ID: handoffID}
		if err := findItems(ctx, tx, h); err != nil {
			return err
		}
		return apply(tx, h, now)
	})
}

// patch sets *field to *v, unless v is nil (the update keeps the field).
func patch[T any](field *T, v *T) {
	if v != nil {
		*field = *v
	}
}

// findByID returns the item of items with the given ID, or nil.
func findByID[T any](items []*T, id string, idOf func(*T) string) *T {
	for _, it := range items {
		if idOf(it) == id {
			return it
		}
	}
	return nil
}

// DeleteDecision removes a decision for good. A pinned decision's message
// is unpinned.
func (db *DB) DeleteDecision(ctx context.Context, handoffID, id string, version int) (Change, error) {
	ch, err := db.changeHandoff(ctx, handoffID, id, version, func(tx *txn, id string, _ time.Time) error {
		var pinned sql.NullString
		err := tx.QueryRowContext(ctx, `DELETE FROM decisions WHERE id = ? AND handoff_id = ? RETURNING pinned_message_id`,
			id, handoffID).Scan(&pinned)
		if err != nil {
			return notFound(err, "decision %s", id)
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
	if d := findByID(h.Decisions, id, func(d *Decision) string { return d.ID }); d != nil {
		return d, nil
	}
	return nil, fmt.Errorf("decision %s: %w", id, ErrNotFound)
}

// FileRefInput is the input of CreateFileRef and of the extraction's merge.
// The path may be as a person typed it: FileRef.Validate cleans it.
type FileRefInput struct {
	Path       string
	Relevance  Level
	Context    string
	Source     Source // user-pinned when empty: a person added it
	MessageIDs []string
}

// validate defaults the source and checks the file (FileRef.Validate).
func (in *FileRefInput) validate() error {
	if in.Source == "" {
		in.Source = SourcePinned
	}
	f := FileRef{Path: in.Path, Relevance: in.Relevance, Context: in.Context, Source: in.Source}
	if err := f.Validate(); err != nil {
		return err
	}
	in.Path, in.Relevance, in.Context = f.Path, f.Relevance, f.Context
	return nil
}

// fileConflict is the error of a path the handoff already lists.
func fileConflict(path string) error {
	return Errorf(ECONFLICT, "The file %s is already in this handoff.", path)
}

// CreateFileRef adds a file to a handoff; version is as for
// CreateDecision. Returns EINVALID for a file that breaks FileRef.Validate
// and ECONFLICT for a path the handoff already lists.
func (db *DB) CreateFileRef(ctx context.Context, handoffID string, in FileRefInput, version int) (Change, error) {
	if err := in.validate(); err != nil {
		return Change{}, err
	}
	ch, err := db.changeHandoff(ctx, handoffID, newID(), version, func(tx *txn, id string, now time.Time) error {
		return insertFileRef(ctx, tx, handoffID, id, in, now)
	})
	if err != nil {
		return Change{}, fmt.Errorf("create file: %w", err)
	}
	return ch, nil
}

// insertFileRef writes a validated file into a handoff; a path the
// handoff already lists is an ECONFLICT.
func insertFileRef(ctx context.Context, tx *txn, handoffID, id string, in FileRefInput, now time.Time) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO file_refs (id, handoff_id, path, relevance, context, source, message_ids, created_at, updated_at, created_by, updated_by)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, handoffID, in.Path, in.Relevance, in.Context, in.Source, encodeIDs(in.MessageIDs), formatTime(now), formatTime(now), actor(ctx), actor(ctx))
	if violationOf(err) == uniqueViolation {
		return fileConflict(in.Path)
	}
	return err
}

// FileRefUpdate is the input of UpdateFileRef: the fields to change (nil
// keeps a field as it is) and the handoff version the change is based on.
type FileRefUpdate struct {
	Path      *string
	Relevance *Level
	Context   *string
	Version   int // the handoff's version the edit was made from; required
}

// UpdateFileRef applies upd to a file of a handoff, whose source becomes
// user-edited, and returns the file as stored and the change. Returns
// EINVALID if upd sets no field or the result breaks FileRef.Validate,
// ENOTFOUND if the handoff has no such file, and ECONFLICT for a path the
// handoff already lists or (also ErrStaleVersion) if upd.Version is not
// the handoff's current version.
func (db *DB) UpdateFileRef(ctx context.Context, handoffID, id string, upd FileRefUpdate) (*FileRef, Change, error) {
	if upd.Path == nil && upd.Relevance == nil && upd.Context == nil {
		return nil, Change{}, Errorf(EINVALID, "Nothing to change: the update sets no field of the file.")
	}
	var f *FileRef
	ch, err := db.updateItem(ctx, handoffID, id, upd.Version, func(tx *txn, h *Handoff, now time.Time) error {
		if f = findByID(h.Files, id, func(f *FileRef) string { return f.ID }); f == nil {
			return fmt.Errorf("file %s: %w", id, ErrNotFound)
		}
		patch(&f.Path, upd.Path)
		patch(&f.Relevance, upd.Relevance)
		patch(&f.Context, upd.Context)
		f.Source, f.UpdatedAt = SourceEdited, now
		if err := f.Validate(); err != nil {
			return err
		}
		name, err := actorName(ctx, tx)
		if err != nil {
			return err
		}
		f.UpdatedBy = name
		_, err = tx.ExecContext(ctx,
			`UPDATE file_refs SET path = ?, relevance = ?, context = ?, source = ?, updated_at = ?, updated_by = ? WHERE id = ?`,
			f.Path, f.Relevance, f.Context, f.Source, formatTime(now), actor(ctx), id)
		if violationOf(err) == uniqueViolation {
			return fileConflict(f.Path)
		}
		return err
	})
	if err != nil {
		return nil, Change{}, fmt.Errorf("update file %s: %w", id, err)
	}
	return f, ch, nil
}

// DeleteFileRef removes a file from a handoff.
func (db *DB) DeleteFileRef(ctx context.Context, handoffID, id string, version int) (Change, error) {
	return db.deleteItem(ctx, "file_refs", "file", handoffID, id, version)
}

// RiskInput is the input of CreateRisk and of the extraction's merge.
type RiskInput struct {
	Description string
	Severity    Level
	Mitigation  string
	Source      Source // user-pinned when empty: a person added it
	MessageIDs  []string
}

// validate defaults the source and checks the risk (Risk.Validate).
func (in *RiskInput) validate() error {
	if in.Source == "" {
		in.Source = SourcePinned
	}
	r := Risk{Description: in.Description, Severity: in.Severity, Mitigation: in.Mitigation, Source: in.Source}
	if err := r.Validate(); err != nil {
		return err
	}
	in.Description, in.Severity, in.Mitigation = r.Description, r.Severity, r.Mitigation
	return nil
}

// CreateRisk adds a risk to a handoff; version is as for CreateDecision.
// Returns EINVALID for a risk that breaks Risk.Validate.
func (db *DB) CreateRisk(ctx context.Context, handoffID string, in RiskInput, version int) (Change, error) {
	if err := in.validate(); err != nil {
		return Change{}, err
	}
	ch, err := db.changeHandoff(ctx, handoffID, newID(), version, func(tx *txn, id string, now time.Time) error {
		return insertRisk(ctx, tx, handoffID, id, in, now)
	})
	if err != nil {
		return Change{}, fmt.Errorf("create risk: %w", err)
	}
	return ch, nil
}

// insertRisk writes a validated risk into a handoff.
func insertRisk(ctx context.Context, tx *txn, handoffID, id string, in RiskInput, now time.Time) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO risks (id, handoff_id, description, severity, mitigation, source, message_ids, created_at, updated_at, created_by, updated_by)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, handoffID, in.Description, in.Severity, in.Mitigation, in.Source, encodeIDs(in.MessageIDs), formatTime(now), formatTime(now), actor(ctx), actor(ctx))
	return err
}

// RiskUpdate is the input of UpdateRisk: the fields to change (nil keeps a
// field as it is) and the handoff version the change is based on.
type RiskUpdate struct {
	Description *string
	Severity    *Level
	Mitigation  *string
	Version     int // the handoff's version the edit was made from; required
}

// UpdateRisk applies upd to a risk of a handoff, whose source becomes
// user-edited, and returns the risk as stored and the change. Returns
// EINVALID if upd sets no field or the result breaks Risk.Validate,
// ENOTFOUND if the handoff has no such risk, and ECONFLICT (also
// ErrStaleVersion) if upd.Version is not the handoff's current version.
func (db *DB) UpdateRisk(ctx context.Context, handoffID, id string, upd RiskUpdate) (*Risk, Change, error) {
	if upd.Description == nil && upd.Severity == nil && upd.Mitigation == nil {
		return nil, Change{}, Errorf(EINVALID, "Nothing to change: the update sets no field of the risk.")
	}
	var r *Risk
	ch, err := db.updateItem(ctx, handoffID, id, upd.Version, func(tx *txn, h *Handoff, now time.Time) error {
		if r = findByID(h.Risks, id, func(r *Risk) string { return r.ID }); r == nil {
			return fmt.Errorf("risk %s: %w", id, ErrNotFound)
		}
		patch(&r.Description, upd.Description)
		patch(&r.Severity, upd.Severity)
		patch(&r.Mitigation, upd.Mitigation)
		r.Source, r.UpdatedAt = SourceEdited, now
		if err := r.Validate(); err != nil {
			return err
		}
		name, err := actorName(ctx, tx)
		if err != nil {
			return err
		}
		r.UpdatedBy = name
		_, err = tx.ExecContext(ctx,
			`UPDATE risks SET description = ?, severity = ?, mitigation = ?, source = ?, updated_at = ?, updated_by = ? WHERE id = ?`,
			r.Description, r.Severity, r.Mitigation, r.Source, formatTime(now), actor(ctx), id)
		return err
	})
	if err != nil {
		return nil, Change{}, fmt.Errorf("update risk %s: %w", id, err)
	}
	return r, ch, nil
}

// DeleteRisk removes a risk from a handoff.
func (db *DB) DeleteRisk(ctx context.Context, handoffID, id string, version int) (Change, error) {
	return db.deleteItem(ctx, "risks", "risk", handoffID, id, version)
}

func (db *DB) deleteItem(ctx context.Context, table, kind, handoffID, id string, version int) (Change, error) {
	ch, err := db.changeHandoff(ctx, handoffID, id, version, func(tx *txn, id string, _ time.Time) error {
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
	ch, err := db.changeHandoff(ctx, handoffID, handoffID, version, func(tx *txn, _ string, _ time.Time) error {
		_, err := tx.ExecContext(ctx, `UPDATE handoffs SET summary = ? WHERE id = ?`, summary, handoffID)
		return err
	})
	if err != nil {
		return Change{}, fmt.Errorf("set summary: %w", err)
	}
	return ch, nil
}
