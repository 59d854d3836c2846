package envelope

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-dev/baton/store"
)

// Baton's phases, as envelopes name them in source_agent, target_agent and
// workflow_state.
const (
	PhaseBrainstorm = "brainstorm"  // talking it through, pinning decisions
	PhaseReview     = "review"      // people review the extracted handoff and freeze it
	PhasePlan       = "plan"        // the plan agent writes the plan
	PhaseImplement  = "implement"   // agents carry the plan out
	PhaseAgentWork  = "agent-work"  // an agent's share of the work, handed to the next
	progressFrozen  = 200.0 / 3.0   // brainstorm and review of three phases done
	progressPlanned = float64(100)  // all three done
	progressHalfway = float64(50.0) // an agent handoff: one agent done, the next to go
)

// Session is the brainstorm an envelope belongs to: in Baton, the thread.
type Session struct {
	// ID is the thread's ID, the envelope's session_id.
	ID string
	// ProductName is the thread's title.
	ProductName string
	// StartedAt is when the thread began; the brainstorm's execution time
	// runs from it to the freeze.
	StartedAt time.Time
}

func newEnvelope(s Session, at time.Time) *Envelope {
	return &Envelope{
		HandoffVersion:  Version,
		Timestamp:       at.UTC(),
		SessionID:       s.ID,
		ProductName:     s.ProductName,
		ProductNameSlug: Slug(s.ProductName),
		Artifacts:       Artifacts{Created: []Artifact{}, Referenced: []Path{}},
		WorkflowState:   WorkflowState{ExecutionMode: FullApproval, PhasesCompleted: []string{}, PhasesRemaining: []string{}},
	}
}

func millis(from, to time.Time) int64 {
	if from.IsZero() || to.Before(from) {
		return 0
	}
	return to.Sub(from).Milliseconds()
}

// FromSnapshot is the envelope of a frozen brainstorm handoff: from the
// brainstorm (its review done) to the planner. Its artifacts refer to the
// snapshot's files.
func FromSnapshot(sn *store.Snapshot, s Session) *Envelope {
	e := newEnvelope(s, sn.CreatedAt)
	e.SourceAgent = SourceAgent{AgentType: AgentBrainstorm, PhaseCompleted: PhaseReview, ExecutionTimeMS: millis(s.StartedAt, sn.CreatedAt)}
	e.TargetAgent = TargetAgent{AgentType: AgentPlanner, PhaseToExecute: PhasePlan}
	e.WorkflowState.PhasesCompleted = []string{PhaseBrainstorm, PhaseReview}
	e.WorkflowState.PhasesRemaining = []string{PhasePlan}
	e.WorkflowState.ProgressPercentage = roundPercent(progressFrozen)

	p := &sn.Payload
	b := &BrainstormHandoff{Type: KindBrainstormHandoff, SnapshotID: sn.ID, SHA256: sn.SHA256,
		HandoffID: p.HandoffID, ThreadID: p.ThreadID, FrozenAt: p.FrozenAt, Summary: p.Summary,
		Decisions: make([]Decision, len(p.Decisions)), FilesReferenced: make([]File, len(p.FilesReferenced)),
		Risks: make([]Risk, len(p.Risks))}
	for i, d := range p.Decisions {
		ids := d.MessageIDs
		if ids == nil {
			ids = []string{}
		}
		b.Decisions[i] = Decision{ID: d.ID, Label: d.Label, Content: d.Content, Source: string(d.Source),
			Confidence: d.Confidence, MessageIDs: ids}
	}
	for i, f := range p.FilesReferenced {
		b.FilesReferenced[i] = File{ID: f.ID, Path: Path(f.Path), Relevance: string(f.Relevance), Context: f.Context}
		e.Artifacts.Referenced = append(e.Artifacts.Referenced, Path(f.Path))
	}
	for i, r := range p.Risks {
		b.Risks[i] = Risk{ID: r.ID, Description: r.Description, Severity: string(r.Severity), Mitigation: r.Mitigation}
	}
	e.Payload.BrainstormHandoff = b
	return e
}

// roundPercent keeps two decimals, so that 66.666… reads 66.67.
func roundPercent(p float64) float64 {
	return float64(int64(p*100+0.5)) / 100
}

// FromPlan is the envelope of a finished plan. A complete or stopped plan
// is a plan envelope from the planner to the coder, with the plan's
// markdown as an artifact (PlanFile); a failed or cancelled one is an error
// envelope (GENERATION_FAILED or USER_CANCELLED) whose partial_output is
// what had been written. Returns ECONFLICT for a plan still being written.
func FromPlan(p *store.Plan, s Session) (*Envelope, error) {
	if p.Status == store.PlanRunning {
		return nil, store.Errorf(store.ECONFLICT, "Plan v%d is still being written; export it when it has finished.", p.Version)
	}
	at := p.FinishedAt
	if at.IsZero() {
		at = p.CreatedAt
	}
	e := newEnvelope(s, at)
	e.SourceAgent = SourceAgent{AgentType: AgentPlanner, PhaseCompleted: PhasePlan, ExecutionTimeMS: millis(p.CreatedAt, at)}
	e.TargetAgent = TargetAgent{AgentType: AgentCoder, PhaseToExecute: PhaseImplement}

	switch p.Status {
	case store.PlanFailed, store.PlanCancelled:
		f := &Failure{Type: KindError, Code: GenerationFailed, Message: cutText(p.Error, MaxSummaryLen),
			PartialOutput: p.Markdown, PlanID: p.ID, SnapshotID: p.SnapshotID,
			RecoverySuggestions: []string{"Open the plan in Baton and choose Plan again; the frozen handoff is unchanged."}}
		if p.Status == store.PlanCancelled {
			f.Code = UserCancelled
			if f.Message == "" {
				f.Message = "Planning was cancelled."
			}
		}
		if f.Message == "" {
			f.Message = "Planning failed."
		}
		e.SourceAgent.PhaseCompleted = PhaseReview
		e.TargetAgent = TargetAgent{AgentType: AgentPlanner, PhaseToExecute: PhasePlan}
		e.WorkflowState.PhasesCompleted = []string{PhaseBrainstorm, PhaseReview}
		e.WorkflowState.PhasesRemaining = []string{PhasePlan}
		e.WorkflowState.ProgressPercentage = roundPercent(progressFrozen)
		e.Payload.Error = f
		return e, nil
	}

	cov := Coverage{Covered: orEmpty(p.Coverage.Covered), Uncovered: orEmpty(p.Coverage.Uncovered), Total: p.Coverage.Total()}
	e.Payload.Plan = &Plan{Type: KindPlan, PlanID: p.ID, SnapshotID: p.SnapshotID, Version: p.Version,
		Markdown: p.Markdown, Coverage: cov}
	e.Artifacts.Created = []Artifact{{Type: ArtifactMarkdown, Path: PlanFile(e.ProductNameSlug, at),
		Description: fmt.Sprintf("Plan v%d, %s.", p.Version, p.Coverage)}}
	e.WorkflowState.PhasesCompleted = []string{PhaseBrainstorm, PhaseReview, PhasePlan}
	e.WorkflowState.ProgressPercentage = progressPlanned
	return e, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func cutText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// AgentHandoffInput is an agent handoff's fields, as the store keeps them.
type AgentHandoffInput struct {
	ID          string
	SourceAgent string // the agent's ID, such as claude-code
	TargetAgent string // empty: any agent
	Scope       string // empty: the whole project
	Summary     string
	Results     json.RawMessage // a JSON array; empty means none
	DecisionIDs []string
	WarningIDs  []string
	FindingIDs  []string
	Summaries   []string
	CreatedAt   time.Time

	// SessionID is the envelope's session_id, a UUID: the workspace's ID,
	// or the handoff's own.
	SessionID string
	// ProductName is what the work is about: the workspace's name.
	ProductName string
	// SourceType and TargetType are the agents' roles; coder when empty.
	SourceType, TargetType AgentType
}

// FromAgentHandoff is the envelope of an agent handoff. Returns EINVALID
// when Results is not a JSON array.
func FromAgentHandoff(in AgentHandoffInput) (*Envelope, error) {
	var results []json.RawMessage
	if len(in.Results) > 0 {
		if err := json.Unmarshal(in.Results, &results); err != nil || results == nil {
			return nil, store.Errorf(store.EINVALID, "An agent handoff's results must be a JSON array.")
		}
	}
	if results == nil {
		results = []json.RawMessage{}
	}
	e := newEnvelope(Session{ID: in.SessionID, ProductName: in.ProductName}, in.CreatedAt)
	e.SourceAgent = SourceAgent{AgentType: or(in.SourceType, AgentCoder), PhaseCompleted: PhaseAgentWork}
	e.TargetAgent = TargetAgent{AgentType: or(in.TargetType, AgentCoder), PhaseToExecute: PhaseAgentWork}
	e.WorkflowState.ExecutionMode = Streamlined
	e.WorkflowState.PhasesCompleted = []string{PhaseAgentWork}
	e.WorkflowState.PhasesRemaining = []string{PhaseAgentWork}
	e.WorkflowState.ProgressPercentage = progressHalfway
	e.Payload.AgentHandoff = &AgentHandoff{Type: KindAgentHandoff, HandoffID: in.ID, SourceAgentID: in.SourceAgent,
		TargetAgentID: in.TargetAgent, Scope: in.Scope, Summary: in.Summary, Results: results,
		ContextSnapshot: ContextSnapshot{DecisionIDs: orEmpty(in.DecisionIDs), WarningIDs: orEmpty(in.WarningIDs),
			FindingIDs: orEmpty(in.FindingIDs), Summaries: orEmpty(in.Summaries)}}
	return e, nil
}

// NewAgentHandoffInput is the input of FromAgentHandoff for a stored agent
// handoff of workspace w: the workspace's ID is the session, its name the
// product.
func NewAgentHandoffInput(h *store.AgentHandoff, w *store.Workspace) AgentHandoffInput {
	sn := h.Snapshot
	return AgentHandoffInput{ID: h.ID, SourceAgent: h.SourceAgent, TargetAgent: h.TargetAgent, Scope: h.Scope,
		Summary: h.Summary, Results: h.Results, DecisionIDs: sn.DecisionIDs, WarningIDs: sn.WarningIDs,
		FindingIDs: sn.FindingIDs, Summaries: sn.Summaries, CreatedAt: h.CreatedAt,
		SessionID: w.ID, ProductName: w.Name}
}

// StoreHandoff is the agent handoff an import of the payload creates in the
// workspace workspaceID (the default one when empty): the agents, scope,
// summary, results and context snapshot as given. Its ID, status and time
// are the store's to fill in.
func (a *AgentHandoff) StoreHandoff(workspaceID string) (*store.AgentHandoff, error) {
	results := a.Results
	if results == nil {
		results = []json.RawMessage{}
	}
	raw, err := json.Marshal(results)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "The agent handoff's results are not valid JSON: %v", err)
	}
	cs := a.ContextSnapshot
	return &store.AgentHandoff{WorkspaceID: workspaceID, SourceAgent: a.SourceAgentID, TargetAgent: a.TargetAgentID,
		Scope: a.Scope, Summary: a.Summary, Results: raw,
		Snapshot: store.ContextSnapshot{DecisionIDs: cs.DecisionIDs, WarningIDs: cs.WarningIDs, FindingIDs: cs.FindingIDs, Summaries: cs.Summaries}}, nil
}

func or(t, def AgentType) AgentType {
	if t == "" {
		return def
	}
	return t
}

// HandoffImport is what importing a brainstorm handoff envelope creates:
// a new thread titled with the product name and a draft handoff holding
// the payload's decisions, files, risks and summary, for people to review
// and freeze again. Message IDs are not carried over: they name messages
// of another thread.
func (b *BrainstormHandoff) HandoffImport(e *Envelope, payloadSHA256 string) store.HandoffImport {
	in := store.HandoffImport{SessionID: e.SessionID, PayloadSHA256: payloadSHA256, Title: e.ProductName, Summary: b.Summary}
	for _, d := range b.Decisions {
		in.Decisions = append(in.Decisions, store.DecisionCreate{Content: d.Content, Source: store.Source(d.Source), Confidence: d.Confidence})
	}
	for _, f := range b.FilesReferenced {
		in.Files = append(in.Files, store.FileRefInput{Path: string(f.Path), Relevance: store.Level(f.Relevance), Context: f.Context, Source: store.SourceAI})
	}
	for _, r := range b.Risks {
		in.Risks = append(in.Risks, store.RiskInput{Description: r.Description, Severity: store.Level(r.Severity), Mitigation: r.Mitigation, Source: store.SourceAI})
	}
	return in
}
