package web

import (
	"context"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// Store is what the web server needs of storage, declared here, where it
// is used, one small interface per feature. *store.DB (SQLite) implements
// it; another engine only has to implement these methods, and web does not
// change. A feature that needs a new store method adds it to its own
// interface below.
type Store interface {
	threadStore
	handoffStore
	extractionStore
	planStore
	memoryStore
}

// threadStore serves brainstorms: threads, messages, replies and pins.
type threadStore interface {
	CreateThread(ctx context.Context, in store.ThreadCreate) (*store.Thread, error)
	FindThreadByID(ctx context.Context, id string) (*store.Thread, error)
	FindThreads(ctx context.Context, f store.ThreadFilter) ([]*store.Thread, error)
	CreateMessage(ctx context.Context, in store.MessageCreate) (*store.Message, error)
	FindMessageByID(ctx context.Context, threadID, id string) (*store.Message, error)
	FindMessages(ctx context.Context, f store.MessageFilter) ([]*store.Message, error)
	FindMessageHeads(ctx context.Context, threadID string) ([]*store.Message, error)
	FindReply(ctx context.Context, threadID, userMessageID string) (*store.Message, error)
	DeleteFailedReply(ctx context.Context, threadID, id string) error
	PinMessage(ctx context.Context, threadID, messageID string) (d *store.Decision, created bool, err error)
	UnpinMessage(ctx context.Context, threadID, messageID string) error
	FindReadyState(ctx context.Context, threadID string) (store.ReadyState, error)
}

// handoffStore serves the review screen: a handoff and its items.
type handoffStore interface {
	EnsureHandoff(ctx context.Context, threadID string) (*store.Handoff, error)
	FindHandoffByID(ctx context.Context, id string) (*store.Handoff, error)
	FindRecentHandoffs(ctx context.Context, workspaceID string, limit int) ([]store.HandoffSummary, error)
	CreateDecision(ctx context.Context, handoffID string, in store.DecisionCreate, version int) (*store.Decision, store.Change, error)
	UpdateDecision(ctx context.Context, handoffID, id string, upd store.DecisionUpdate) (*store.Decision, store.Change, error)
	DeleteDecision(ctx context.Context, handoffID, id string, version int) (store.Change, error)
	CreateFileRef(ctx context.Context, handoffID string, in store.FileRefInput, version int) (store.Change, error)
	UpdateFileRef(ctx context.Context, handoffID, id string, upd store.FileRefUpdate) (*store.FileRef, store.Change, error)
	DeleteFileRef(ctx context.Context, handoffID, id string, version int) (store.Change, error)
	CreateRisk(ctx context.Context, handoffID string, in store.RiskInput, version int) (store.Change, error)
	UpdateRisk(ctx context.Context, handoffID, id string, upd store.RiskUpdate) (*store.Risk, store.Change, error)
	DeleteRisk(ctx context.Context, handoffID, id string, version int) (store.Change, error)
	Freeze(ctx context.Context, handoffID string, version int) (*store.Snapshot, error)
	FindSnapshotByID(ctx context.Context, id string) (*store.Snapshot, error)
	FindSnapshots(ctx context.Context, handoffID string) ([]*store.Snapshot, error)
}

// extractionStore serves "Ready to plan": extraction runs and their merge.
type extractionStore interface {
	StartExtractionRun(ctx context.Context, handoffID string) (*store.ExtractionRun, error)
	FindLatestExtractionRun(ctx context.Context, handoffID string) (*store.ExtractionRun, error)
	CompleteExtractionRun(ctx context.Context, runID string, m store.ExtractionMerge) (int, error)
	FailExtractionRun(ctx context.Context, runID string, status store.RunStatus, message string) error
	SetExtractionUsage(ctx context.Context, runID string, input, output int64) error
}

// planStore serves plan pages; the plan agent's own needs are agent.PlanStore.
type planStore interface {
	agent.PlanStore
	FindPlans(ctx context.Context, f store.PlanFilter) ([]*store.Plan, error)
}

// memoryStore serves workspace memory: capture, prompts, search and the
// decision and file pages.
type memoryStore interface {
	agent.MemoryReader
	agent.MemoryWriter
	FindDecisionRecordByID(ctx context.Context, id string) (*store.DecisionRecord, error)
	SupersedeDecisionRecord(ctx context.Context, id, byID string) error
	ReactivateDecisionRecord(ctx context.Context, id string) error
	FindUncapturedSnapshots(ctx context.Context, limit int) ([]*store.Snapshot, error)
}

// The SQLite store is the one in use today.
var _ Store = (*store.DB)(nil)
