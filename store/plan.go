package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// PlanStatus is the state of a plan: running while the agent writes it,
// then how the run ended.
type PlanStatus string

// Plan statuses.
const (
	PlanRunning   PlanStatus = "running"
	PlanComplete  PlanStatus = "complete"  // the agent called complete_planning
	PlanStopped   PlanStatus = "stopped"   // the step cap was reached first
	PlanFailed    PlanStatus = "failed"    // a model call failed, or a restart interrupted it
	PlanCancelled PlanStatus = "cancelled" // someone cancelled it
)

// Limits of what a plan step keeps, so that one large tool result cannot
// bloat the database.
const (
	MaxPlanStepResult = 4000  // characters of a step's result
	MaxPlanStepInput  = 16384 // bytes of a step's input JSON
)

// Coverage says which decision labels of the snapshot a plan cites.
type Coverage struct {
	Covered   []string `json:"covered"`
	Uncovered []string `json:"uncovered"`
}

// Total is how many decisions the snapshot has.
func (c Coverage) Total() int { return len(c.Covered) + len(c.Uncovered) }

// String says "covers N of M".
func (c Coverage) String() string {
	return fmt.Sprintf("covers %d of %d", len(c.Covered), c.Total())
}

// Plan is a markdown plan the plan agent wrote from a snapshot. Version
// counts the plans of the same snapshot: 1, 2, …
type Plan struct {
	ID           string
	HandoffID    string
	SnapshotID   string
	Version      int
	Status       PlanStatus
	Markdown     string
	Summary      string // complete_planning's summary
	Error        string // why it failed, for people
	Coverage     Coverage
	InputTokens  int64
	OutputTokens int64
	Model        string
	CreatedAt    time.Time
	FinishedAt   time.Time // zero while running

	// Filled by FindPlanByID, in order.
	Steps []*PlanStep
}

// PlanStepKind says what a plan step was.
type PlanStepKind string

// Plan step kinds.
const (
	PlanStepModelCall PlanStepKind = "model_call"
	PlanStepToolCall  PlanStepKind = "tool_call"
)

// PlanStep is one thing the plan agent did: a model call or a tool call.
// N numbers a plan's steps from 1 in the order they happened.
type PlanStep struct {
	PlanID       string
	N            int
	Kind         PlanStepKind
	Tool         string
	Input        json.RawMessage // tool calls only
	Result       string          // cut to MaxPlanStepResult characters
	IsError      bool
	Description  string // in plain words, for people
	InputTokens  int64
	OutputTokens int64
	CreatedAt    time.Time
}

// PlanStepCreate is the input of AddPlanStep.
type PlanStepCreate struct {
	Kind         PlanStepKind
	Tool         string
	Input        json.RawMessage
	Result       string
	IsError      bool
	Description  string
	InputTokens  int64
	OutputTokens int64
}

// PlanFinish is the input of FinishPlan.
type PlanFinish struct {
	Status       PlanStatus // anything but running
	Markdown     string
	Summary      string
	Error        string
	Coverage     Coverage
	InputTokens  int64
	OutputTokens int64
	Model        string
}

// PlanFilter selects plans for FindPlans. Set one of the IDs.
type PlanFilter struct {
	HandoffID  string
	SnapshotID string
	Limit      int // all when zero; a constant (written into the SQL, see limitSQL)
}

// CreatePlan starts a plan for a snapshot: status running, version one more
// than the snapshot's latest plan. Returns ErrNotFound if there is no such
// snapshot and ErrConflict if a plan of it is already running.
func (db *DB) CreatePlan(ctx context.Context, snapshotID string) (*Plan, error) {
	p := &Plan{ID: newID(), SnapshotID: snapshotID, Status: PlanRunning, CreatedAt: db.now(),
		Coverage: Coverage{Covered: []string{}, Uncovered: []string{}}}
	err := db.inTx(ctx, func(tx *txn) error {
		err := tx.QueryRowContext(ctx,
			`SELECT s.handoff_id, COALESCE((SELECT MAX(version) FROM plans WHERE snapshot_id = s.id), 0) + 1
			 FROM snapshots s WHERE s.id = ?`, snapshotID).Scan(&p.HandoffID, &p.Version)
		if err != nil {
			return notFound(err, "snapshot %s", snapshotID)
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO plans (id, handoff_id, snapshot_id, version, status, created_at, created_by) VALUES (?, ?, ?, ?, 'running', ?, ?)`,
			p.ID, p.HandoffID, snapshotID, p.Version, formatTime(p.CreatedAt), actor(ctx))
		if violationOf(err) == uniqueViolation {
			return Errorf(ECONFLICT, "A plan is already being written for this snapshot.")
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create plan: %w", err)
	}
	return p, nil
}

// AddPlanStep records the next step of a running plan and returns it with
// its number. A result longer than MaxPlanStepResult characters is cut; an
// input that is not JSON or longer than MaxPlanStepInput bytes is kept as a
// JSON string of its beginning, so that what a model sent never stops a step
// from being recorded. Returns ErrNotFound if there is no such plan and
// ErrConflict if it is not running.
func (db *DB) AddPlanStep(ctx context.Context, planID string, in PlanStepCreate) (*PlanStep, error) {
	if in.Kind != PlanStepModelCall && in.Kind != PlanStepToolCall {
		return nil, Errorf(EINVALID, "A plan step is a model_call or a tool_call, not %q.", in.Kind)
	}
	s := &PlanStep{PlanID: planID, Kind: in.Kind, Tool: in.Tool, Input: stepInput(in.Input),
		Result: cutText(in.Result, MaxPlanStepResult), IsError: in.IsError, Description: cutText(in.Description, MaxItemLen),
		InputTokens: in.InputTokens, OutputTokens: in.OutputTokens, CreatedAt: db.now()}
	err := db.inTx(ctx, func(tx *txn) error {
		if err := checkRunning(ctx, tx, planID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx,
			`INSERT INTO plan_steps (plan_id, n, kind, tool, input, result, is_error, description, input_tokens, output_tokens, created_at)
			 SELECT ?, COALESCE(MAX(n), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM plan_steps WHERE plan_id = ?
			 RETURNING n`,
			planID, s.Kind, s.Tool, string(s.Input), s.Result, s.IsError, s.Description, s.InputTokens, s.OutputTokens,
			formatTime(s.CreatedAt), planID).Scan(&s.N)
	})
	if err != nil {
		return nil, fmt.Errorf("add step to plan %s: %w", planID, err)
	}
	return s, nil
}

// checkRunning returns ErrNotFound if the plan does not exist and
// ErrConflict if it has finished.
func checkRunning(ctx context.Context, tx *txn, planID string) error {
	var status PlanStatus
	err := tx.QueryRowContext(ctx, `SELECT status FROM plans WHERE id = ?`, planID).Scan(&status)
	if err != nil {
		return notFound(err, "plan %s", planID)
	}
	if status != PlanRunning {
		return Errorf(ECONFLICT, "Plan %s has already finished (%s).", planID, status)
	}
	return nil
}

// FinishPlan ends a running plan with its outcome and returns it with its
// steps. Returns ErrInvalid for a status that is not an ending, ErrNotFound
// if there is no such plan and ErrConflict if it has already finished.
func (db *DB) FinishPlan(ctx context.Context, id string, in PlanFinish) (*Plan, error) {
	switch in.Status {
	case PlanComplete, PlanStopped, PlanFailed, PlanCancelled:
	default:
		return nil, Errorf(EINVALID, "A plan ends as complete, stopped, failed or cancelled, not %q.", in.Status)
	}
	cov := in.Coverage
	if cov.Covered == nil {
		cov.Covered = []string{}
	}
	if cov.Uncovered == nil {
		cov.Uncovered = []string{}
	}
	coverage, err := json.Marshal(cov)
	if err != nil {
		return nil, fmt.Errorf("finish plan %s: %w", id, err)
	}
	err = db.inTx(ctx, func(tx *txn) error {
		if err := checkRunning(ctx, tx, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			`UPDATE plans SET status = ?, markdown = ?, summary = ?, error = ?, coverage = ?,
			        input_tokens = ?, output_tokens = ?, model = ?, finished_at = ?
			 WHERE id = ?`,
			in.Status, in.Markdown, cutText(strings.TrimSpace(in.Summary), MaxItemLen), cutText(in.Error, MaxItemLen), string(coverage),
			in.InputTokens, in.OutputTokens, in.Model, formatTime(db.now()), id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("finish plan %s: %w", id, err)
	}
	return db.FindPlanByID(ctx, id)
}

const planColumns = `id, handoff_id, snapshot_id, version, status, markdown, summary, error, coverage,
	input_tokens, output_tokens, model, created_at, finished_at`

func scanPlan(s scanner) (*Plan, error) {
	var p Plan
	var coverage, created string
	var finished sql.NullString
	if err := s.Scan(&p.ID, &p.HandoffID, &p.SnapshotID, &p.Version, &p.Status, &p.Markdown, &p.Summary, &p.Error,
		&coverage, &p.InputTokens, &p.OutputTokens, &p.Model, &created, &finished); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(coverage), &p.Coverage); err != nil {
		return nil, fmt.Errorf("plan %s coverage: %w", p.ID, err)
	}
	p.CreatedAt = parseTime(created)
	if finished.Valid {
		p.FinishedAt = parseTime(finished.String)
	}
	return &p, nil
}

// FindPlanByID returns a plan with its steps in order, or ErrNotFound.
func (db *DB) FindPlanByID(ctx context.Context, id string) (*Plan, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	p, err := scanPlan(tx.QueryRowContext(ctx, `SELECT `+planColumns+` FROM plans WHERE id = ?`, id))
	if err != nil {
		return nil, findErr(err, "plan %s", id)
	}
	p.Steps, err = scanAll(func(sc scanner) (*PlanStep, error) {
		s := &PlanStep{PlanID: id}
		var input, created string
		if err := sc.Scan(&s.N, &s.Kind, &s.Tool, &input, &s.Result, &s.IsError, &s.Description,
			&s.InputTokens, &s.OutputTokens, &created); err != nil {
			return nil, err
		}
		if input != "" {
			s.Input = json.RawMessage(input)
		}
		s.CreatedAt = parseTime(created)
		return s, nil
	})(tx.QueryContext(ctx,
		`SELECT n, kind, tool, input, result, is_error, description, input_tokens, output_tokens, created_at
		 FROM plan_steps WHERE plan_id = ? ORDER BY n`, id))
	if err != nil {
		return nil, fmt.Errorf("find plan %s steps: %w", id, err)
	}
	return p, nil
}

// FindPlans lists the plans of a handoff or of a snapshot, newest first,
// without their steps. Returns ErrInvalid unless one of the IDs is set.
func (db *DB) FindPlans(ctx context.Context, f PlanFilter) ([]*Plan, error) {
	var where []string
	var args []any
	if f.HandoffID != "" {
		where, args = append(where, `handoff_id = ?`), append(args, f.HandoffID)
	}
	if f.SnapshotID != "" {
		where, args = append(where, `snapshot_id = ?`), append(args, f.SnapshotID)
	}
	if len(where) == 0 {
		return nil, Errorf(EINVALID, "Say which handoff or snapshot to list the plans of.")
	}
	q := `SELECT ` + planColumns + ` FROM plans WHERE ` + strings.Join(where, ` AND `) + ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 {
		q += limitSQL(f.Limit)
	}
	plans, err := scanAll(scanPlan)(db.readRows(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("find plans: %w", err)
	}
	return plans, nil
}

// failInterruptedPlans ends plans that a previous process left running.
func (db *DB) failInterruptedPlans(ctx context.Context) error {
	_, err := db.write.ExecContext(ctx,
		`UPDATE plans SET status = 'failed', error = 'Interrupted by a restart. Start planning again.', finished_at = ?
		 WHERE status = 'running'`, formatTime(db.now()))
	return err
}

// cutText keeps the first n characters of s, marking a cut with "…".
func cutText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// stepInput keeps a step's input as stored: the JSON as sent when it is
// valid and at most MaxPlanStepInput bytes, else a JSON string of its beginning.
func stepInput(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return nil
	}
	if len(in) <= MaxPlanStepInput && json.Valid(in) {
		return in
	}
	s := strings.ToValidUTF8(string(in[:min(len(in), MaxPlanStepInput/2)]), "")
	b, _ := json.Marshal(s)
	return b
}
