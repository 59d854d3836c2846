// Package envelope is Baton's handoff envelope: the versioned JSON contract
// ("handoff_version" 1.0) in which a handoff leaves Baton and comes back,
// with its published JSON Schema, its validation rules and the file layout
// of an export.
//
// It lives under store because it describes data and nothing else: the
// builders turn what the store holds (a frozen snapshot, a plan, an agent
// handoff's fields) into an envelope, and an imported envelope back into a
// store input, calling no model and serving no request. It imports store;
// store does not import it. web and cmd/baton use it for the API, the
// pages' Export and the baton envelope command.
//
// Reading is lenient where the contract allows it and strict where it does
// not: a newer minor version (1.1, 1.7) is read and the fields this version
// does not know are kept, so that writing the envelope again gives them
// back; a major version other than 1 is refused. Payloads of a product
// team's agents (market-research, prfaq, prd, prototype, ai-framing,
// orchestrator) that are none of Baton's kinds pass through as given.
package envelope

import (
	"encoding/json"
	"time"
)

// Version is the version of the contract this package writes.
const Version = "1.0"

// Major is the major version this package reads: 1.x.
const Major = 1

// Limits of an envelope.
const (
	// MaxBytes is the largest envelope read or written, in bytes.
	MaxBytes = 4 << 20
	// MaxSummaryLen is the longest summary-like field (a summary, a
	// description, a message, a phase), in characters.
	MaxSummaryLen = 500
	// MaxTextLen is the longest decision, file context or risk, in
	// characters: the store's limit.
	MaxTextLen = 2000
	// MaxPathLen is the longest path, in characters: the store's limit.
	MaxPathLen = 300
)

// AgentType is the role of the agent that produced or receives an
// envelope: Baton's roles and a product team's.
type AgentType string

// Agent types. Orchestrator is both Baton's and a product team's.
const (
	AgentBrainstorm     AgentType = "brainstorm"
	AgentPlanner        AgentType = "planner"
	AgentCoder          AgentType = "coder"
	AgentReviewer       AgentType = "reviewer"
	AgentOrchestrator   AgentType = "orchestrator"
	AgentMarketResearch AgentType = "market-research"
	AgentPRFAQ          AgentType = "prfaq"
	AgentPRD            AgentType = "prd"
	AgentPrototype      AgentType = "prototype"
	AgentAIFraming      AgentType = "ai-framing"
)

// AgentTypes lists every agent type, Baton's first.
var AgentTypes = []AgentType{AgentBrainstorm, AgentPlanner, AgentCoder, AgentReviewer, AgentOrchestrator,
	AgentMarketResearch, AgentPRFAQ, AgentPRD, AgentPrototype, AgentAIFraming}

// batonOnly reports whether t is one of Baton's own roles, whose envelopes
// must carry one of Baton's payload kinds.
func (t AgentType) batonOnly() bool {
	switch t {
	case AgentBrainstorm, AgentPlanner, AgentCoder, AgentReviewer:
		return true
	}
	return false
}

// Kind is the kind of a Baton payload, its "type" field.
type Kind string

// Payload kinds.
const (
	KindBrainstormHandoff Kind = "brainstorm_handoff"
	KindPlan              Kind = "plan"
	KindAgentHandoff      Kind = "agent_handoff"
	KindError             Kind = "error"
)

// Kinds lists Baton's payload kinds.
var Kinds = []Kind{KindBrainstormHandoff, KindPlan, KindAgentHandoff, KindError}

// ArtifactType is the format of an artifact file.
type ArtifactType string

// Artifact types.
const (
	ArtifactMarkdown ArtifactType = "markdown"
	ArtifactHTML     ArtifactType = "html"
	ArtifactJSON     ArtifactType = "json"
)

// ExecutionMode says whether people approve each phase.
type ExecutionMode string

// Execution modes.
const (
	FullApproval ExecutionMode = "full-approval"
	Streamlined  ExecutionMode = "streamlined"
)

// ErrorCode says why a run produced an error envelope.
type ErrorCode string

// Error codes.
const (
	ResearchFailed   ErrorCode = "RESEARCH_FAILED"
	GenerationFailed ErrorCode = "GENERATION_FAILED"
	ValidationFailed ErrorCode = "VALIDATION_FAILED"
	UserCancelled    ErrorCode = "USER_CANCELLED"
)

// Extra holds the fields of a JSON object that this version of the
// contract does not know, as they were read, so that writing the object
// again keeps them.
type Extra map[string]json.RawMessage

// Envelope is one handoff as it leaves or enters Baton.
type Envelope struct {
	// HandoffVersion is the contract's version, "major.minor": 1.0 here.
	HandoffVersion string `json:"handoff_version" jsonschema:"pattern=^1\\.(0|[1-9][0-9]*)$"`
	// Timestamp is when the handoff was made (ISO-8601, UTC).
	Timestamp time.Time `json:"timestamp"`
	// SessionID identifies the working session the handoff belongs to: in
	// Baton, the brainstorm thread.
	SessionID string `json:"session_id" jsonschema:"format=uuid,pattern=^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$"`
	// ProductName is what the work is about: in Baton, the thread's title.
	ProductName string `json:"product_name" jsonschema:"minLength=1,maxLength=200"`
	// ProductNameSlug is ProductName for file names: letters and digits,
	// every other run of characters an underscore (see Slug).
	ProductNameSlug string `json:"product_name_slug" jsonschema:"pattern=^[^\\s/\\\\]+$,maxLength=200"`
	// SourceAgent made the handoff.
	SourceAgent SourceAgent `json:"source_agent"`
	// TargetAgent receives it.
	TargetAgent TargetAgent `json:"target_agent"`
	// Artifacts are the files made or used.
	Artifacts Artifacts `json:"artifacts"`
	// Payload is what is handed off.
	Payload Payload `json:"payload"`
	// WorkflowState says where the workflow stands.
	WorkflowState WorkflowState `json:"workflow_state"`

	Extra Extra `json:"-"`
}

// SourceAgent is the agent that made a handoff.
type SourceAgent struct {
	// AgentType is the agent's role.
	AgentType AgentType `json:"agent_type"`
	// PhaseCompleted is the phase the agent finished.
	PhaseCompleted string `json:"phase_completed" jsonschema:"minLength=1,maxLength=500"`
	// ExecutionTimeMS is how long the phase took, in milliseconds.
	ExecutionTimeMS int64 `json:"execution_time_ms" jsonschema:"minimum=0"`

	Extra Extra `json:"-"`
}

// TargetAgent is the agent that receives a handoff.
type TargetAgent struct {
	// AgentType is the agent's role.
	AgentType AgentType `json:"agent_type"`
	// PhaseToExecute is the phase it is to carry out.
	PhaseToExecute string `json:"phase_to_execute" jsonschema:"minLength=1,maxLength=500"`

	Extra Extra `json:"-"`
}

// Artifacts lists the files a handoff made and the files it refers to.
type Artifacts struct {
	// Created are the files made, each in the export's bundle or kept by Baton.
	Created []Artifact `json:"created"`
	// Referenced are paths of project files the handoff refers to.
	Referenced []Path `json:"referenced"`

	Extra Extra `json:"-"`
}

// Artifact is a file a handoff made.
type Artifact struct {
	// Type is the file's format.
	Type ArtifactType `json:"type"`
	// Path is the file's path in the bundle, relative and inside it.
	Path Path `json:"path"`
	// Description says what the file is.
	Description string `json:"description" jsonschema:"maxLength=500"`

	Extra Extra `json:"-"`
}

// Path is a relative path inside a project or bundle: no leading slash,
// drive letter or ~, no "." or ".." segments, no backslashes, colons,
// percent signs or white space.
type Path string

// WorkflowState says where a workflow stands.
type WorkflowState struct {
	// IsAIMLProduct says whether the product is itself an AI or ML product.
	IsAIMLProduct bool `json:"is_ai_ml_product"`
	// ExecutionMode says whether people approve each phase.
	ExecutionMode ExecutionMode `json:"execution_mode"`
	// PhasesCompleted lists the phases done, in order.
	PhasesCompleted []string `json:"phases_completed"`
	// PhasesRemaining lists the phases to come, in order.
	PhasesRemaining []string `json:"phases_remaining"`
	// ProgressPercentage is how far the workflow is, from 0 to 100.
	ProgressPercentage float64 `json:"progress_percentage" jsonschema:"minimum=0,maximum=100"`

	Extra Extra `json:"-"`
}

// Payload is what an envelope hands off: one of Baton's kinds, whose
// pointer is set, or another agent's payload kept as given in Raw.
type Payload struct {
	BrainstormHandoff *BrainstormHandoff
	Plan              *Plan
	AgentHandoff      *AgentHandoff
	Error             *Failure
	// Raw is a payload that is none of Baton's kinds, as given.
	Raw json.RawMessage
}

// Kind is the payload's kind, or "" for a payload passed through.
func (p *Payload) Kind() Kind {
	switch {
	case p.BrainstormHandoff != nil:
		return KindBrainstormHandoff
	case p.Plan != nil:
		return KindPlan
	case p.AgentHandoff != nil:
		return KindAgentHandoff
	case p.Error != nil:
		return KindError
	}
	return ""
}

// BrainstormHandoff is a frozen brainstorm handoff: the decisions, files,
// risks and summary of a snapshot, with the snapshot's ID and the sha256 of
// its canonical JSON (store.SnapshotPayload), which a reader recomputes
// from these fields.
type BrainstormHandoff struct {
	// Type is brainstorm_handoff.
	Type Kind `json:"type" jsonschema:"enum=brainstorm_handoff"`
	// SnapshotID is the frozen snapshot's ID.
	SnapshotID string `json:"snapshot_id" jsonschema:"format=uuid,pattern=^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$"`
	// SHA256 is the hex sha256 of the snapshot's canonical JSON.
	SHA256 string `json:"sha256" jsonschema:"pattern=^[0-9a-f]{64}$"`
	// HandoffID is the handoff the snapshot froze.
	HandoffID string `json:"handoff_id" jsonschema:"minLength=1,maxLength=100"`
	// ThreadID is the brainstorm thread.
	ThreadID string `json:"thread_id" jsonschema:"minLength=1,maxLength=100"`
	// FrozenAt is when the snapshot was taken.
	FrozenAt time.Time `json:"frozen_at"`
	// Summary is the handoff's summary.
	Summary string `json:"summary" jsonschema:"maxLength=500"`
	// Decisions are what the team decided, labelled D1, D2, … in order.
	Decisions []Decision `json:"decisions"`
	// FilesReferenced are the files the work touches.
	FilesReferenced []File `json:"files_referenced"`
	// Risks are the concerns raised.
	Risks []Risk `json:"risks"`

	Extra Extra `json:"-"`
}

// Decision is a frozen decision.
type Decision struct {
	// ID is the decision's ID.
	ID string `json:"id" jsonschema:"minLength=1,maxLength=100"`
	// Label is its position: D1, D2, …
	Label string `json:"label" jsonschema:"pattern=^D[1-9][0-9]*$"`
	// Content is what was decided.
	Content string `json:"content" jsonschema:"minLength=1,maxLength=2000"`
	// Source says where it came from.
	Source string `json:"source" jsonschema:"enum=ai-extracted,enum=user-pinned,enum=user-edited"`
	// Confidence is the extraction's confidence, from 0 to 1, when it has one.
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"minimum=0,maximum=1"`
	// MessageIDs are the brainstorm messages it came from.
	MessageIDs []string `json:"message_ids"`

	Extra Extra `json:"-"`
}

// File is a frozen file reference.
type File struct {
	// ID is the file reference's ID.
	ID string `json:"id" jsonschema:"minLength=1,maxLength=100"`
	// Path is the file's path in the project.
	Path Path `json:"path"`
	// Relevance is high, medium or low.
	Relevance string `json:"relevance" jsonschema:"enum=high,enum=medium,enum=low"`
	// Context says why the file matters.
	Context string `json:"context" jsonschema:"maxLength=2000"`

	Extra Extra `json:"-"`
}

// Risk is a frozen risk.
type Risk struct {
	// ID is the risk's ID.
	ID string `json:"id" jsonschema:"minLength=1,maxLength=100"`
	// Description says what could go wrong.
	Description string `json:"description" jsonschema:"minLength=1,maxLength=2000"`
	// Severity is high, medium or low.
	Severity string `json:"severity" jsonschema:"enum=high,enum=medium,enum=low"`
	// Mitigation says how to avoid it, when known.
	Mitigation string `json:"mitigation,omitempty" jsonschema:"maxLength=2000"`

	Extra Extra `json:"-"`
}

// Plan is a plan the plan agent wrote from a snapshot.
type Plan struct {
	// Type is plan.
	Type Kind `json:"type" jsonschema:"enum=plan"`
	// PlanID is the plan's ID.
	PlanID string `json:"plan_id" jsonschema:"minLength=1,maxLength=100"`
	// SnapshotID is the snapshot it was planned from.
	SnapshotID string `json:"snapshot_id" jsonschema:"format=uuid,pattern=^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$"`
	// Version counts the plans of the snapshot: 1, 2, …
	Version int `json:"version" jsonschema:"minimum=1"`
	// Markdown is the plan.
	Markdown string `json:"markdown" jsonschema:"minLength=1"`
	// Coverage says which decisions of the snapshot the plan cites.
	Coverage Coverage `json:"coverage"`

	Extra Extra `json:"-"`
}

// Coverage says which decision labels of a snapshot a plan cites; Total is
// how many decisions the snapshot has.
type Coverage struct {
	// Covered are the labels cited.
	Covered []string `json:"covered" jsonschema:"uniqueItems=true"`
	// Uncovered are the labels not cited.
	Uncovered []string `json:"uncovered" jsonschema:"uniqueItems=true"`
	// Total is how many decisions the snapshot has: covered plus uncovered.
	Total int `json:"total" jsonschema:"minimum=0"`

	Extra Extra `json:"-"`
}

// AgentHandoff is work one agent hands to another with its results and
// the context that was in scope.
type AgentHandoff struct {
	// Type is agent_handoff.
	Type Kind `json:"type" jsonschema:"enum=agent_handoff"`
	// HandoffID is the agent handoff's ID.
	HandoffID string `json:"handoff_id" jsonschema:"minLength=1,maxLength=100"`
	// SourceAgentID names the agent that handed off (claude-code, cursor, …).
	SourceAgentID string `json:"source_agent_id" jsonschema:"minLength=1,maxLength=100"`
	// TargetAgentID names the agent it is for; empty means any agent.
	TargetAgentID string `json:"target_agent_id,omitempty" jsonschema:"maxLength=100"`
	// Scope is the path prefix the work is about, or project.
	Scope string `json:"scope,omitempty" jsonschema:"maxLength=300"`
	// Summary says what was done and what is left.
	Summary string `json:"summary" jsonschema:"minLength=1,maxLength=500"`
	// Results are what the source agent produced, as it gave them.
	Results []json.RawMessage `json:"results"`
	// ContextSnapshot is the context in scope when it was made.
	ContextSnapshot ContextSnapshot `json:"context_snapshot"`

	Extra Extra `json:"-"`
}

// ContextSnapshot is an agent handoff's context: the decision records and
// blackboard warnings and findings in its scope, and short summaries of
// some of them ("Decision: …", "Warning: …", "Finding: …").
type ContextSnapshot struct {
	// DecisionIDs are the decision records in scope.
	DecisionIDs []string `json:"decision_ids" jsonschema:"uniqueItems=true"`
	// WarningIDs are the blackboard warnings in scope.
	WarningIDs []string `json:"warning_ids" jsonschema:"uniqueItems=true"`
	// FindingIDs are the blackboard findings in scope.
	FindingIDs []string `json:"finding_ids" jsonschema:"uniqueItems=true"`
	// Summaries are at most 5 "Decision: …", 3 "Warning: …" and 3 "Finding: …".
	Summaries []string `json:"summaries" jsonschema:"maxItems=11"`

	Extra Extra `json:"-"`
}

// Failure is the payload of an error envelope: a run that failed or was
// cancelled, with what it had produced so far.
type Failure struct {
	// Type is error.
	Type Kind `json:"type" jsonschema:"enum=error"`
	// Code says why the run ended.
	Code ErrorCode `json:"code"`
	// Message says what happened, for people.
	Message string `json:"message" jsonschema:"minLength=1,maxLength=500"`
	// PartialOutput is what the run had written when it ended.
	PartialOutput string `json:"partial_output"`
	// RecoverySuggestions say what to do next.
	RecoverySuggestions []string `json:"recovery_suggestions"`
	// PlanID is the failed plan, when a plan run failed.
	PlanID string `json:"plan_id,omitempty" jsonschema:"maxLength=100"`
	// SnapshotID is the snapshot the run worked from, when there is one.
	SnapshotID string `json:"snapshot_id,omitempty" jsonschema:"format=uuid,pattern=^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$"`

	Extra Extra `json:"-"`
}
