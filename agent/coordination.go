package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/baton-dev/baton/store"
)

// How many summaries of each kind an assembled context snapshot carries;
// its ID lists name every match.
const (
	SnapshotDecisionSummaries = 5
	SnapshotWarningSummaries  = 3
	SnapshotFindingSummaries  = 3
)

// HandoffTag tags the blackboard status entry posted with every agent handoff.
const HandoffTag = "handoff"

// HandoffRequest is an agent's request to hand work on: createHandoff's
// arguments.
type HandoffRequest struct {
	WorkspaceID string // the store's default workspace when empty
	SourceAgent string
	TargetAgent string // empty: any agent may claim it
	Scope       string // empty: the whole project
	Summary     string
	Results     json.RawMessage // a JSON list; empty means []
	// ContextSnapshot, when set, is used as is. Otherwise AutoSnapshot (true
	// when nil) says whether to assemble one from the workspace or to send a
	// snapshot of empty lists.
	ContextSnapshot *store.ContextSnapshot
	AutoSnapshot    *bool
}

// HandoffWriter is what CreateHandoff needs of the store: one call that
// assembles the snapshot, then stores the handoff and posts its status
// entry in one transaction.
type HandoffWriter interface {
	CreateAgentHandoff(ctx context.Context, h *store.AgentHandoff, status *store.BlackboardEntry, assemble *store.Assembly) error
}

// CreateHandoff creates an agent handoff and posts its status entry on the
// blackboard, in one transaction. The context snapshot is the one given,
// else assembled (AssembleSnapshot) from the active decision records and
// the warning and finding entries whose scope matches the handoff's, else
// empty when AutoSnapshot is false. Returns store.ErrInvalid when the
// request breaks a rule (nothing is stored then).
func CreateHandoff(ctx context.Context, db HandoffWriter, in HandoffRequest) (*store.AgentHandoff, error) {
	h := &store.AgentHandoff{
		WorkspaceID: in.WorkspaceID,
		SourceAgent: strings.TrimSpace(in.SourceAgent),
		TargetAgent: strings.TrimSpace(in.TargetAgent),
		Scope:       store.NormalizeScope(in.Scope),
		Summary:     strings.TrimSpace(in.Summary),
		Results:     in.Results,
	}
	if len(h.Results) == 0 {
		h.Results = json.RawMessage("[]")
	}
	var assemble *store.Assembly
	switch {
	case in.ContextSnapshot != nil:
		h.Snapshot = *in.ContextSnapshot
	case in.AutoSnapshot == nil || *in.AutoSnapshot:
		assemble = &store.Assembly{
			Limits: store.SourceLimits{Decisions: SnapshotDecisionSummaries, Warnings: SnapshotWarningSummaries, Findings: SnapshotFindingSummaries},
			Build:  AssembleSnapshot,
		}
	default:
		h.Snapshot = store.EmptyContextSnapshot()
	}
	// The status entry is built from the handoff as checked, so a bad
	// handoff reports its own error rather than its entry's.
	if err := h.Validate(); err != nil {
		return nil, err
	}
	entry := StatusEntry(h)
	if err := db.CreateAgentHandoff(ctx, h, &entry, assemble); err != nil {
		return nil, err
	}
	return h, nil
}

// AssembleSnapshot builds a context snapshot from its sources: every ID, and
// summaries of the first SnapshotDecisionSummaries decisions, then
// SnapshotWarningSummaries warnings and SnapshotFindingSummaries findings,
// as "Decision: …", "Warning: …", "Finding: …". The snapshot's ID lists are
// the sources' own (an unscoped snapshot lists thousands).
func AssembleSnapshot(src store.SnapshotSources) store.ContextSnapshot {
	s := store.EmptyContextSnapshot()
	for _, k := range []struct {
		list   store.SourceList
		ids    *[]string
		label  string
		capped int
	}{
		{src.Decisions, &s.DecisionIDs, "Decision", SnapshotDecisionSummaries},
		{src.Warnings, &s.WarningIDs, "Warning", SnapshotWarningSummaries},
		{src.Findings, &s.FindingIDs, "Finding", SnapshotFindingSummaries},
	} {
		if k.list.IDs != nil {
			*k.ids = k.list.IDs
		}
		for _, text := range k.list.Texts[:min(len(k.list.Texts), k.capped)] {
			s.Summaries = append(s.Summaries, k.label+": "+oneLine(text))
		}
	}
	return s
}

// StatusEntry is the blackboard entry that announces a handoff: summary
// "Handoff created: <summary>" cut to store.MaxEntrySummary characters,
// detail "From <source> to <target, or any agent>. <n> result(s).", tag
// HandoffTag, the handoff's scope (or the project's) and its source as the
// agent.
func StatusEntry(h *store.AgentHandoff) store.BlackboardEntry {
	target := h.TargetAgent
	if target == "" {
		target = "any agent"
	}
	scope := h.Scope
	if scope == "" {
		scope = store.ProjectScope
	}
	return store.BlackboardEntry{
		WorkspaceID: h.WorkspaceID,
		Type:        store.EntryStatus,
		Summary:     cutRunes("Handoff created: "+oneLine(h.Summary), store.MaxEntrySummary),
		Detail:      fmt.Sprintf("From %s to %s. %d result(s).", h.SourceAgent, target, h.ResultCount()),
		Scope:       scope,
		Tags:        []string{HandoffTag},
		AgentID:     h.SourceAgent,
	}
}

// oneLine joins a text's lines and runs of spaces into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}
