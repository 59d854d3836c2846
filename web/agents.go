package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// agentsPageLimit bounds each list of the /agents page.
const agentsPageLimit = 50

// agentsFeed reads the feed filter from the query and the entries it selects.
func (s *Server) agentsFeed(c echo.Context) (views.AgentsFeed, error) {
	ctx := c.Request().Context()
	feed := views.AgentsFeed{Filter: views.AgentsFeedFilter{Type: c.QueryParam("type"), Scope: c.QueryParam("scope")}, Refresh: s.feedRefresh}
	f := store.BlackboardFilter{WorkspaceID: callerFrom(ctx).WorkspaceID, Scope: feed.Filter.Scope, Limit: agentsPageLimit}
	if feed.Filter.Type != "" {
		t, err := store.ParseEntryType(feed.Filter.Type)
		if err != nil {
			return feed, err
		}
		f.Types = []store.EntryType{t}
	}
	var err error
	feed.Entries, err = s.db.FindBlackboardEntries(ctx, f)
	return feed, err
}

// handleAgents serves GET /agents?type=&scope=: the blackboard feed, the
// pending and acknowledged handoffs, and how to connect an agent.
func (s *Server) handleAgents(c echo.Context) error {
	return s.renderAgents(c, http.StatusOK, views.AgentConnect{})
}

// renderAgents renders the /agents page with the connect section as given
// (its MCP URL filled in).
func (s *Server) renderAgents(c echo.Context, status int, connect views.AgentConnect) error {
	ctx := c.Request().Context()
	feed, err := s.agentsFeed(c)
	if err != nil {
		return err
	}
	ws := callerFrom(ctx).WorkspaceID
	connect.MCPURL = s.linkTo(c, "/mcp")
	p := views.AgentsPage{Feed: feed, Connect: connect}
	if p.Pending, err = s.db.FindAgentHandoffs(ctx, store.AgentHandoffFilter{WorkspaceID: ws, Status: store.AgentHandoffPending, Limit: agentsPageLimit}); err != nil {
		return err
	}
	if p.Acknowledged, err = s.db.FindAgentHandoffs(ctx, store.AgentHandoffFilter{WorkspaceID: ws, Status: store.AgentHandoffAcknowledged, Limit: agentsPageLimit}); err != nil {
		return err
	}
	return s.render(c, status, views.Agents(s.meta(c, "Agents"), p))
}

// handleAgentConnect serves POST /agents/connect (fields name, scope,
// expires_days; 0 for none): it creates an API token of the person for the
// current workspace and shows the /agents page with the agents' setups
// carrying it, this once.
func (s *Server) handleAgentConnect(c echo.Context) error {
	t, secret, problem, err := s.createFormToken(c)
	if problem != "" {
		return s.renderAgents(c, http.StatusUnprocessableEntity, views.AgentConnect{Error: problem})
	} else if err != nil {
		return err
	}
	noStore(c)
	return s.renderAgents(c, http.StatusCreated, views.AgentConnect{TokenName: t.Name, Token: secret})
}

// handleAgentsFeed serves GET /agents/feed?type=&scope=: the feed fragment
// the page polls.
func (s *Server) handleAgentsFeed(c echo.Context) error {
	feed, err := s.agentsFeed(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return s.render(c, http.StatusOK, views.AgentsFeedList(feed))
}

// handleAgentEntryShow serves GET /agents/entries/:id.
func (s *Server) handleAgentEntryShow(c echo.Context) error {
	ctx := c.Request().Context()
	e, err := s.db.FindBlackboardEntryByID(ctx, callerFrom(ctx).WorkspaceID, c.Param("id"))
	if err != nil {
		return err
	}
	p := views.AgentEntryPage{Entry: e}
	if e.Detail != "" {
		p.DetailHTML = s.markdown.Render(e.Detail)
	}
	return s.render(c, http.StatusOK, views.AgentEntryShow(s.meta(c, "Blackboard entry"), p))
}

// handleAgentHandoffShow serves GET /agents/handoffs/:id.
func (s *Server) handleAgentHandoffShow(c echo.Context) error {
	ctx := c.Request().Context()
	h, err := s.db.FindAgentHandoffByID(ctx, callerFrom(ctx).WorkspaceID, c.Param("id"))
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.AgentHandoffShow(s.meta(c, "Handoff"), views.AgentHandoffPage{Handoff: h}))
}

// handleAgentHandoffAcknowledge serves POST /agents/handoffs/:id/acknowledge
// (form field "by") and goes back to the handoff's page. A handoff that was
// acknowledged meanwhile stays as it was; the page says by whom.
func (s *Server) handleAgentHandoffAcknowledge(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	_, err := s.db.AcknowledgeAgentHandoff(ctx, callerFrom(ctx).WorkspaceID, id, c.FormValue("by"))
	switch {
	case errors.Is(err, store.ErrConflict):
		s.setFlash(c, store.ErrorMessage(err))
	case err != nil:
		return err
	default:
		s.setFlash(c, "Handoff acknowledged.")
	}
	return c.Redirect(http.StatusSeeOther, "/agents/handoffs/"+id)
}
