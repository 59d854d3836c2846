package web

import (
	"context"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
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
	accountStore
	agentStore
	reviewStore
	threadHandoffStore
	envelopeStore
	rateStore
}

// envelopeStore serves handoff envelopes: export, validation and import,
// and the workspace an agent handoff's envelope names as its session.
type envelopeStore interface {
	envelope.Importer
	FindWorkspaceByID(ctx context.Context, id string) (*store.Workspace, error)
}

// threadStore serves brainstorms: threads, messages, replies and pins.
type threadStore interface {
	CreateThread(ctx context.Context, in store.ThreadCreate) (*store.Thread, error)
	FindThreadByID(ctx context.Context, id string) (*store.Thread, error)
	FindThreads(ctx context.Context, f store.ThreadFilter) ([]*store.Thread, error)
	FindThreadByIDIncludingDeleted(ctx context.Context, id string) (*store.Thread, error)
	UpdateThread(ctx context.Context, id string, in store.ThreadUpdate) (*store.Thread, error)
	DeleteThread(ctx context.Context, id string) error
	CreateMessage(ctx context.Context, in store.MessageCreate) (*store.Message, error)
	FindMessageByID(ctx context.Context, threadID, id string) (*store.Message, error)
	FindMessages(ctx context.Context, f store.MessageFilter) ([]*store.Message, error)
	FindMessageHeads(ctx context.Context, threadID string) ([]*store.Message, error)
	FindMessageHeadsOf(ctx context.Context, t *store.Thread) ([]*store.Message, error)
	FindReply(ctx context.Context, threadID, userMessageID string) (*store.Message, error)
	DeleteFailedReply(ctx context.Context, threadID, id string) error
	PinMessage(ctx context.Context, threadID, messageID string) (d *store.Decision, created bool, err error)
	PinMessageAs(ctx context.Context, threadID, messageID, content string) (d *store.Decision, created bool, err error)
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
	ReopenHandoff(ctx context.Context, id string, version int) (store.Change, error)
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

// accountStore serves people: set-up, sign-in, sessions, members, invites and API tokens.
type accountStore interface {
	AcceptInvite(ctx context.Context, secret, userID string) (*store.Membership, error)
	AcceptInviteAsNewUser(ctx context.Context, secret string, in store.UserCreate) (*store.User, *store.Membership, error)
	AuthenticateUser(ctx context.Context, email, password string) (*store.User, error)
	ChangePassword(ctx context.Context, in store.PasswordChange) error
	ChangeRole(ctx context.Context, workspaceID, userID string, role store.MemberRole) (*store.Membership, error)
	CreateInvite(ctx context.Context, in store.InviteCreate) (*store.Invite, string, error)
	CreateSession(ctx context.Context, in store.SessionCreate) (*store.Session, string, error)
	CreateToken(ctx context.Context, in store.TokenCreate) (*store.Token, string, error)
	DefaultWorkspaceID() string
	DeleteExpiredSessions(ctx context.Context, idle time.Duration) (int, error)
	DeleteInvite(ctx context.Context, workspaceID, id string) error
	EndSession(ctx context.Context, id string) error
	EndUserSessions(ctx context.Context, userID, keep string) (int, error)
	FindInviteBySecret(ctx context.Context, secret string) (*store.Invite, error)
	FindInvites(ctx context.Context, workspaceID string) ([]*store.Invite, error)
	FindMemberships(ctx context.Context, f store.MembershipFilter) ([]*store.Membership, error)
	FindSessionWithWorkspaces(ctx context.Context, secret string) (*store.Session, []*store.Membership, error)
	FindTokenBySecret(ctx context.Context, secret string) (*store.Token, error)
	FindTokens(ctx context.Context, f store.TokenFilter) ([]*store.Token, error)
	HasUsers(ctx context.Context) (bool, error)
	RecordSignInFailure(ctx context.Context, email, client string) error
	RemoveMember(ctx context.Context, workspaceID, userID string) error
	RevokeToken(ctx context.Context, id, userID string) (*store.Token, error)
	SetSessionWorkspace(ctx context.Context, id, workspaceID string) error
	SetUp(ctx context.Context, in store.Setup) (*store.User, error)
	SignInLimited(ctx context.Context, email, client string) (bool, error)
	TouchSession(ctx context.Context, id string) error
	TouchToken(ctx context.Context, id string) error
}

// agentStore serves agents: the blackboard, agent handoffs and the MCP tools.
type agentStore interface {
	agent.HandoffWriter
	AcknowledgeAgentHandoff(ctx context.Context, workspaceID, id, by string) (*store.AgentHandoff, error)
	ClaimAgentHandoff(ctx context.Context, workspaceID, id, by string) (*store.AgentHandoff, error)
	CreateBlackboardEntry(ctx context.Context, e *store.BlackboardEntry) error
	FindAgentHandoffByID(ctx context.Context, workspaceID, id string) (*store.AgentHandoff, error)
	FindAgentHandoffs(ctx context.Context, f store.AgentHandoffFilter) ([]*store.AgentHandoff, error)
	FindBlackboardEntries(ctx context.Context, f store.BlackboardFilter) ([]*store.BlackboardEntry, error)
	FindBlackboardEntryByID(ctx context.Context, workspaceID, id string) (*store.BlackboardEntry, error)
	FindInbox(ctx context.Context, workspaceID, agent, scope string, limit int) ([]*store.AgentHandoff, error)
	FindLatestSnapshot(ctx context.Context, workspaceID, handoffID string) (*store.Snapshot, error)
	ResolveWorkspace(workspaceID string) string
}

// reviewStore serves team review: comments, reviews, activity and share links.
type reviewStore interface {
	CountComments(ctx context.Context, handoffID string) (map[string]store.CommentCount, error)
	CreateComment(ctx context.Context, handoffID string, in store.CommentCreate) (*store.Comment, error)
	CreateReply(ctx context.Context, parentID string, body string, author store.Actor, shareID string) (*store.Comment, error)
	CreateReview(ctx context.Context, handoffID string, r store.Review) (*store.Review, error)
	CreateShareLink(ctx context.Context, in store.ShareCreate) (*store.ShareLink, string, error)
	DeleteComment(ctx context.Context, id string, by store.Actor) (*store.Comment, error)
	FindActivityAt(ctx context.Context, handoffID string, rev int64, limit int) ([]*store.Activity, error)
	FindCommentByID(ctx context.Context, id string) (*store.Comment, error)
	FindComments(ctx context.Context, f store.CommentFilter) ([]*store.Comment, error)
	FindItemAnchors(ctx context.Context, handoffID string) ([]store.Anchor, error)
	FindReviewPresence(ctx context.Context, handoffID string) (store.ReviewPresence, error)
	FindReviewerStates(ctx context.Context, handoffID string) ([]*store.ReviewerState, error)
	FindShareLinkByToken(ctx context.Context, token string) (*store.ShareLink, error)
	FindShareLinks(ctx context.Context, f store.ShareFilter) ([]*store.ShareLink, error)
	RecordShareView(ctx context.Context, id string) error
	RequestReview(ctx context.Context, handoffID string, by store.Actor, reviewers []store.Actor) error
	ResolveComment(ctx context.Context, id string, resolved bool, by store.Actor) (*store.Comment, error)
	RevokeShareLink(ctx context.Context, workspaceID, id string) (*store.ShareLink, error)
	UpdateComment(ctx context.Context, id, body string, by store.Actor) (*store.Comment, error)
	FindPlanReviewComments(ctx context.Context, planID string) ([]*store.Comment, error)
	LinkPlanReviewComments(ctx context.Context, planID string, commentIDs []string) error
}

// threadHandoffStore serves thread handoffs: /handoff previews, accepted summaries, child threads and the mirror outbox.
type threadHandoffStore interface {
	AcceptThreadHandoff(ctx context.Context, in store.ThreadHandoffAccept) (h *store.ThreadHandoff, created bool, err error)
	CleanupThreadHandoff(ctx context.Context, childThreadID string) (cleared bool, err error)
	FindThreadWithReadyState(ctx context.Context, id string) (*store.Thread, store.ReadyState, error)
	FindThreadHandoffsOf(ctx context.Context, threadID string) (store.ThreadHandoffs, error)
	FindLastThreadHandoff(ctx context.Context, parentThreadID string) (*store.ThreadHandoff, error)
	FindPendingThreadSummary(ctx context.Context, childThreadID string) (*store.ThreadHandoff, error)
	FindThreadHandoffByChild(ctx context.Context, childThreadID string) (*store.ThreadHandoff, error)
	FindThreadHandoffByID(ctx context.Context, id string) (*store.ThreadHandoff, error)
}

// The SQLite store is the one in use today.
var _ Store = (*store.DB)(nil)
