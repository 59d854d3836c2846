package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// entryJSON is a blackboard entry in the JSON API.
type entryJSON struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Summary   string    `json:"summary"`
	Detail    string    `json:"detail"`
	Scope     string    `json:"scope"`
	Tags      []string  `json:"tags"`
	AgentID   string    `json:"agentId"`
	CreatedAt time.Time `json:"createdAt"`
}

func newEntryJSON(e *store.BlackboardEntry) *entryJSON {
	tags := e.Tags
	if tags == nil {
		tags = []string{}
	}
	return &entryJSON{ID: e.ID, Type: string(e.Type), Summary: e.Summary, Detail: e.Detail, Scope: e.Scope,
		Tags: tags, AgentID: e.AgentID, CreatedAt: e.CreatedAt}
}

// contextSnapshotJSON is an agent handoff's context snapshot in the JSON API.
type contextSnapshotJSON struct {
	DecisionIDs []string `json:"decisionIds"`
	WarningIDs  []string `json:"warningIds"`
	FindingIDs  []string `json:"findingIds"`
	Summaries   []string `json:"summaries"`
}

func (s *contextSnapshotJSON) snapshot() *store.ContextSnapshot {
	if s == nil {
		return nil
	}
	return &store.ContextSnapshot{DecisionIDs: s.DecisionIDs, WarningIDs: s.WarningIDs, FindingIDs: s.FindingIDs, Summaries: s.Summaries}
}

// agentHandoffJSON is an agent handoff in the JSON API.
type agentHandoffJSON struct {
	ID              string              `json:"id"`
	SourceAgent     string              `json:"sourceAgent"`
	TargetAgent     string              `json:"targetAgent,omitempty"`
	Scope           string              `json:"scope,omitempty"`
	Summary         string              `json:"summary"`
	Results         json.RawMessage     `json:"results"`
	ContextSnapshot contextSnapshotJSON `json:"contextSnapshot"`
	Status          string              `json:"status"`
	AcknowledgedBy  string              `json:"acknowledgedBy,omitempty"`
	AcknowledgedAt  *time.Time          `json:"acknowledgedAt,omitempty"`
	ClaimedBy       string              `json:"claimedBy,omitempty"`
	ClaimedAt       *time.Time          `json:"claimedAt,omitempty"`
	StatusEntryID   string              `json:"statusEntryId,omitempty"`
	CreatedAt       time.Time           `json:"createdAt"`
}

func newAgentHandoffJSON(h *store.AgentHandoff) *agentHandoffJSON {
	sn := h.Snapshot
	out := &agentHandoffJSON{ID: h.ID, SourceAgent: h.SourceAgent, TargetAgent: h.TargetAgent, Scope: h.Scope,
		Summary: h.Summary, Results: h.Results, Status: string(h.Status),
		ContextSnapshot: contextSnapshotJSON{DecisionIDs: sn.DecisionIDs, WarningIDs: sn.WarningIDs, FindingIDs: sn.FindingIDs, Summaries: sn.Summaries},
		AcknowledgedBy:  h.AcknowledgedBy, ClaimedBy: h.ClaimedBy, StatusEntryID: h.StatusEntryID, CreatedAt: h.CreatedAt}
	if !h.AcknowledgedAt.IsZero() {
		out.AcknowledgedAt = &h.AcknowledgedAt
	}
	if !h.ClaimedAt.IsZero() {
		out.ClaimedAt = &h.ClaimedAt
	}
	return out
}

// handleAPIBlackboardCreate serves POST /api/v1/blackboard
// {"type","summary","detail"?,"scope"?,"tags"?,"agentId"}: 201 and the entry.
func (s *Server) handleAPIBlackboardCreate(c echo.Context) error {
	var in struct {
		Type    string   `json:"type"`
		Summary string   `json:"summary"`
		Detail  string   `json:"detail"`
		Scope   string   `json:"scope"`
		Tags    []string `json:"tags"`
		AgentID string   `json:"agentId"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	e := &store.BlackboardEntry{WorkspaceID: callerFrom(ctx).WorkspaceID, Type: store.EntryType(in.Type),
		Summary: in.Summary, Detail: in.Detail, Scope: in.Scope, Tags: in.Tags, AgentID: in.AgentID}
	if err := s.db.CreateBlackboardEntry(ctx, e); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newEntryJSON(e))
}

// handleAPIBlackboardList serves GET /api/v1/blackboard?type=&scope=&tag=&since=&limit=:
// {"entries":[…]}, newest first. type and tag may repeat or list values
// separated by commas; since is an RFC 3339 time.
func (s *Server) handleAPIBlackboardList(c echo.Context) error {
	ctx := c.Request().Context()
	f, err := blackboardFilter(c)
	if err != nil {
		return err
	}
	f.WorkspaceID = callerFrom(ctx).WorkspaceID
	entries, err := s.db.FindBlackboardEntries(ctx, f)
	if err != nil {
		return err
	}
	out := make([]*entryJSON, len(entries))
	for i, e := range entries {
		out[i] = newEntryJSON(e)
	}
	return c.JSON(http.StatusOK, map[string]any{"entries": out})
}

// blackboardFilter reads a blackboard filter from the query string, for
// the API and the /agents feed alike.
func blackboardFilter(c echo.Context) (store.BlackboardFilter, error) {
	q := c.QueryParams()
	f := store.BlackboardFilter{Scope: q.Get("scope"), Tags: listParam(q["tag"])}
	for _, t := range listParam(q["type"]) {
		typ, err := store.ParseEntryType(t)
		if err != nil {
			return f, err
		}
		f.Types = append(f.Types, typ)
	}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return f, store.Errorf(eBadQuery, "since must be an RFC 3339 time such as 2026-01-31T09:00:00Z.")
		}
		f.Since = t
	}
	if v := q.Get("limit"); v != "" {
		if err := echo.QueryParamsBinder(c).Int("limit", &f.Limit).BindError(); err != nil {
			return f, store.Errorf(eBadQuery, "limit must be a whole number.")
		}
	}
	return f, nil
}

// listParam flattens repeated and comma-separated query values, dropping
// empty ones.
func listParam(values []string) []string {
	var out []string
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// handleAPIAgentHandoffCreate serves POST /api/v1/agent-handoffs
// {"sourceAgent","targetAgent"?,"scope"?,"summary","results":[…],"contextSnapshot"?,"autoSnapshot"?}:
// 201 and the handoff with its context snapshot.
func (s *Server) handleAPIAgentHandoffCreate(c echo.Context) error {
	var in struct {
		SourceAgent     string               `json:"sourceAgent"`
		TargetAgent     string               `json:"targetAgent"`
		Scope           string               `json:"scope"`
		Summary         string               `json:"summary"`
		Results         json.RawMessage      `json:"results"`
		ContextSnapshot *contextSnapshotJSON `json:"contextSnapshot"`
		AutoSnapshot    *bool                `json:"autoSnapshot"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	h, err := agent.CreateHandoff(ctx, s.db, agent.HandoffRequest{
		WorkspaceID: callerFrom(ctx).WorkspaceID, SourceAgent: in.SourceAgent, TargetAgent: in.TargetAgent,
		Scope: in.Scope, Summary: in.Summary, Results: in.Results,
		ContextSnapshot: in.ContextSnapshot.snapshot(), AutoSnapshot: in.AutoSnapshot,
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newAgentHandoffJSON(h))
}

// handleAPIAgentHandoffList serves GET /api/v1/agent-handoffs?agent=&status=pending|acknowledged&limit=:
// {"handoffs":[…]}, newest first.
func (s *Server) handleAPIAgentHandoffList(c echo.Context) error {
	ctx := c.Request().Context()
	f := store.AgentHandoffFilter{WorkspaceID: callerFrom(ctx).WorkspaceID, Agent: c.QueryParam("agent"),
		Status: store.AgentHandoffStatus(c.QueryParam("status"))}
	if err := echo.QueryParamsBinder(c).Int("limit", &f.Limit).BindError(); err != nil {
		return store.Errorf(eBadQuery, "limit must be a whole number.")
	}
	hs, err := s.db.FindAgentHandoffs(ctx, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"handoffs": agentHandoffsJSON(hs)})
}

func agentHandoffsJSON(hs []*store.AgentHandoff) []*agentHandoffJSON {
	out := make([]*agentHandoffJSON, len(hs))
	for i, h := range hs {
		out[i] = newAgentHandoffJSON(h)
	}
	return out
}

// handleAPIInbox serves GET /api/v1/agent-handoffs/inbox?agent=&scope=:
// {"handoffs":[…]}, what waits for the agent: pending handoffs targeted at
// it or claimed by it, and unclaimed ones for any agent in scope.
func (s *Server) handleAPIInbox(c echo.Context) error {
	ctx := c.Request().Context()
	hs, err := s.db.FindInbox(ctx, callerFrom(ctx).WorkspaceID, c.QueryParam("agent"), c.QueryParam("scope"), 0)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"handoffs": agentHandoffsJSON(hs)})
}

// handleAPIAgentHandoffShow serves GET /api/v1/agent-handoffs/:id.
func (s *Server) handleAPIAgentHandoffShow(c echo.Context) error {
	ctx := c.Request().Context()
	h, err := s.db.FindAgentHandoffByID(ctx, callerFrom(ctx).WorkspaceID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newAgentHandoffJSON(h))
}

// handleAPIAgentHandoffAcknowledge serves POST /api/v1/agent-handoffs/:id/acknowledge {"by"}:
// 200 and the handoff; 409 if it was acknowledged before (the first
// acknowledgement stays).
func (s *Server) handleAPIAgentHandoffAcknowledge(c echo.Context) error {
	return s.agentHandoffUpdate(c, s.db.AcknowledgeAgentHandoff)
}

// handleAPIAgentHandoffClaim serves POST /api/v1/agent-handoffs/:id/claim {"by"}:
// 200 and the handoff; 409 if another agent claimed it first.
func (s *Server) handleAPIAgentHandoffClaim(c echo.Context) error {
	return s.agentHandoffUpdate(c, s.db.ClaimAgentHandoff)
}

func (s *Server) agentHandoffUpdate(c echo.Context, update func(ctx context.Context, workspaceID, id, by string) (*store.AgentHandoff, error)) error {
	var in struct {
		By string `json:"by"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	h, err := update(ctx, callerFrom(ctx).WorkspaceID, c.Param("id"), in.By)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newAgentHandoffJSON(h))
}
