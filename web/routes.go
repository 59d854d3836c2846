package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/baton-dev/baton/store"
)

// Route groups. Every route belongs to exactly one of them, and a route
// added to a group gets its authentication from the group:
//
//   - on e itself: /healthz and /static/ — public, no CSRF, no session.
//     A route that checks its own credentials (an MCP endpoint with its
//     bearer token) goes here too.
//   - public (browser, prefix ""): CSRF and view state, no session —
//     set-up, sign-in, sign-out, invites; public share pages belong here.
//   - app (browser, prefix ""): CSRF, requireSession, view state — every
//     other page. It is registered after public, so that its catch-all
//     answers unknown paths: an anonymous request is sent to sign in, a
//     signed-in one gets 404.
//   - api (/api/v1): requireJSON and requireToken, never the cookie. An
//     unknown path answers 401 without a token and 404 with one.
//
// Roles are per route, never per group (a group's middleware would also
// answer its unknown paths): editorOnly on writes, ownerOnly on member
// management. Reads need no role beyond membership: the workspace helpers
// (scope.go) refuse a principal without a workspace.
func (s *Server) routes(e *echo.Echo, modelLimit echo.MiddlewareFunc, shareRate float64) {
	// Browser routes: CSRF-protected (Fetch Metadata first, token as fallback);
	// withViewState then hands the token and the principal to the views.
	csrf := middleware.CSRFWithConfig(middleware.CSRFConfig{
		TokenLookup:    "header:X-CSRF-Token,form:_csrf",
		ContextKey:     csrfContextKey,
		CookieName:     "baton_csrf",
		CookiePath:     "/",
		CookieHTTPOnly: true,
		CookieSameSite: http.SameSiteStrictMode,
		ErrorHandler:   func(err error, c echo.Context) error { return errCSRF },
		// Baton has one origin: a write from another site, or from another
		// port of the same host ("same-site", which could also plant the
		// token cookie), is refused outright. Browsers without Fetch
		// Metadata fall back to the token.
		AllowSecFetchSiteFunc: func(echo.Context) (bool, error) { return false, errCSRF },
	})
	editorOnly := requireRole(store.RoleEditor)
	ownerOnly := requireRole(store.RoleOwner)

	// MCP checks its own bearer token (read tokens see read tools only);
	// share pages check the token in their path.
	e.Match([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, "/mcp", echo.WrapHandler(s.mcpHandler()), s.requireMCPToken)
	s.shareRoutes(e, shareRate)

	public := e.Group("", csrf, withViewState)
	s.publicAccountRoutes(public)

	app := e.Group("", detachPageViews, csrf, s.requireSession, withViewState, s.withReviewPanel, s.announceChanges)
	app.GET("/", s.handleHome)
	app.POST("/threads", s.handleThreadCreate, editorOnly)
	app.GET("/t/:id", s.handleThreadShow, s.inThreadPage)
	app.GET("/archived", s.handleThreadsArchived)
	app.POST("/t/:id/rename", s.handleThreadRename, editorOnly, s.inThread)
	app.POST("/t/:id/archive", s.handleThreadArchive, editorOnly, s.inThread)
	app.GET("/t/:id/delete", s.handleThreadDeleteConfirm, editorOnly, s.inThread)
	app.POST("/t/:id/delete", s.handleThreadDelete, editorOnly, s.inThread)
	app.POST("/t/:id/messages", s.handleMessageCreate, editorOnly, s.inThread, modelLimit)
	app.GET("/t/:id/messages/:mid/reply", s.handleReplyStream, s.inThread, modelLimit)
	app.POST("/t/:id/messages/:mid/stop", s.handleReplyStop, editorOnly, s.inThread)
	app.POST("/t/:id/messages/:mid/retry", s.handleReplyRetry, editorOnly, s.inThread, modelLimit)
	app.POST("/t/:id/messages/:mid/pin", s.handlePin, editorOnly, s.inThread)
	app.POST("/t/:id/messages/:mid/unpin", s.handleUnpin, editorOnly, s.inThread)
	app.POST("/t/:id/extract", s.handleExtractStart, editorOnly, s.inThread, modelLimit)
	app.GET("/t/:id/extract/events", s.handleExtractEvents, s.inThread)
	app.POST("/t/:id/extract/cancel", s.handleExtractCancel, editorOnly, s.inThread)
	app.POST("/t/:id/handoff", s.handleThreadHandoffStart, editorOnly, s.inThread, modelLimit)
	app.GET("/t/:id/handoffs/:hid", s.handleThreadHandoffShow, s.inThread)
	app.GET("/t/:id/handoffs/:hid/events", s.handleThreadHandoffEvents, s.inThread)
	app.POST("/t/:id/handoffs/:hid/cancel", s.handleThreadHandoffCancel, editorOnly, s.inThread)
	app.POST("/t/:id/handoffs/:hid/accept", s.handleThreadHandoffAccept, editorOnly, s.inThread)
	app.POST("/t/:id/handoffs/:hid/decline", s.handleThreadHandoffDecline, editorOnly, s.inThread)
	app.GET("/h/:id", s.handleReviewShow, s.inHandoff)
	app.POST("/h/:id/freeze", s.handleFreeze, editorOnly, s.inHandoff, modelLimit)
	app.POST("/h/:id/draft", s.handleHandoffReopen, editorOnly, s.inHandoff)
	app.GET("/h/:id/export.zip", s.handleHandoffExport, s.inHandoff)
	app.GET("/p/:id", s.handlePlanShow, s.inPlan)
	app.GET("/p/:id/events", s.handlePlanEvents, s.inPlan)
	app.GET("/p/:id/plan.md", s.handlePlanDownload, s.inPlan)
	app.GET("/p/:id/export.zip", s.handlePlanExport, s.inPlan)
	app.POST("/p/:id/cancel", s.handlePlanCancel, editorOnly, s.inPlan)
	app.POST("/p/:id/rerun", s.handlePlanRerun, editorOnly, s.inPlan, modelLimit)
	app.POST("/p/:id/replan", s.handlePlanReplan, editorOnly, s.inPlan, modelLimit)
	app.GET("/memory", s.handleMemory)
	app.GET("/decisions/adr.zip", s.handleADRZip)
	app.GET("/decisions/:id", s.handleDecisionShow, s.inDecision)
	app.GET("/decisions/:id/adr.md", s.handleDecisionADR, s.inDecision)
	app.POST("/decisions/:id/supersede", s.handleDecisionSupersede, editorOnly, s.inDecision)
	app.POST("/decisions/:id/reactivate", s.handleDecisionReactivate, editorOnly, s.inDecision)
	app.GET("/files/*", s.handleFileShow)
	s.reviewRoutes(app, editorOnly)
	app.GET("/agents", s.handleAgents)
	app.GET("/agents/feed", s.handleAgentsFeed)
	app.POST("/agents/connect", s.handleAgentConnect, requireRole(store.RoleViewer))
	app.GET("/agents/entries/:id", s.handleAgentEntryShow)
	app.GET("/agents/handoffs/:id", s.handleAgentHandoffShow)
	app.POST("/agents/handoffs/:id/acknowledge", s.handleAgentHandoffAcknowledge, editorOnly)
	app.POST("/h/:id/:kind", s.handleItemCreate, editorOnly, s.inHandoff)
	app.GET("/h/:id/:kind/:item", s.handleItemShow, s.inHandoff)
	app.GET("/h/:id/:kind/:item/edit", s.handleItemEdit, editorOnly, s.inHandoff)
	app.POST("/h/:id/:kind/:item", s.handleItemUpdate, editorOnly, s.inHandoff)
	app.POST("/h/:id/:kind/:item/delete", s.handleItemDelete, editorOnly, s.inHandoff)
	s.accountRoutes(app, ownerOnly)

	// JSON API: for scripts and agents. Bearer tokens, no cookies, so no
	// CSRF token; requireJSON refuses what a cross-site form could send.
	api := e.Group("/api/v1", requireJSON, s.requireToken, s.announceChanges)
	api.GET("/threads", s.handleAPIThreadList)
	api.POST("/threads", s.handleAPIThreadCreate, editorOnly)
	api.GET("/threads/:id", s.handleAPIThreadShow, s.inThread)
	api.PATCH("/threads/:id", s.handleAPIThreadUpdate, editorOnly, s.inThread)
	api.DELETE("/threads/:id", s.handleAPIThreadDelete, editorOnly, s.inThread)
	api.POST("/threads/:id/messages", s.handleAPIMessageCreate, editorOnly, s.inThread, modelLimit)
	api.POST("/threads/:id/messages/:mid/pin", s.handleAPIPin, editorOnly, s.inThread)
	api.DELETE("/threads/:id/messages/:mid/pin", s.handleAPIUnpin, editorOnly, s.inThread)
	api.POST("/threads/:id/handoff", s.handleAPIExtract, editorOnly, s.inThread, modelLimit)
	api.POST("/threads/:id/thread-handoffs", s.handleAPIThreadHandoffCreate, editorOnly, s.inThread, modelLimit)
	api.POST("/thread-handoffs/:id/accept", s.handleAPIThreadHandoffAccept, editorOnly)
	api.POST("/thread-handoffs/:id/decline", s.handleAPIThreadHandoffDecline, editorOnly)
	api.GET("/handoffs/:id", s.handleAPIHandoffShow, s.inHandoff)
	api.POST("/handoffs/:id/freeze", s.handleAPIFreeze, editorOnly, s.inHandoff, longWrite)
	api.POST("/handoffs/:id/plan", s.handleAPIPlanCreate, editorOnly, s.inHandoff, modelLimit)
	api.GET("/plans/:id", s.handleAPIPlanShow, s.inPlan)
	api.GET("/decisions", s.handleAPIDecisionList)
	api.GET("/decisions/:id", s.handleAPIDecisionShow, s.inDecision)
	api.POST("/decisions/:id/supersede", s.handleAPIDecisionSupersede, editorOnly, s.inDecision)
	api.POST("/decisions/:id/reactivate", s.handleAPIDecisionReactivate, editorOnly, s.inDecision)
	api.GET("/files/*", s.handleAPIFileRelationships)
	api.POST("/handoffs/:id/:kind", s.handleAPIItemCreate, editorOnly, s.inHandoff)
	api.PATCH("/handoffs/:id/:kind/:item", s.handleAPIItemUpdate, editorOnly, s.inHandoff)
	api.DELETE("/handoffs/:id/:kind/:item", s.handleAPIItemDelete, editorOnly, s.inHandoff)
	api.GET("/snapshots/:id", s.handleAPISnapshotShow, s.inSnapshot)
	s.apiReviewRoutes(api, editorOnly)
	api.POST("/blackboard", s.handleAPIBlackboardCreate, editorOnly)
	api.GET("/blackboard", s.handleAPIBlackboardList)
	api.POST("/agent-handoffs", s.handleAPIAgentHandoffCreate, editorOnly)
	api.GET("/agent-handoffs", s.handleAPIAgentHandoffList)
	api.GET("/agent-handoffs/inbox", s.handleAPIInbox)
	api.GET("/agent-handoffs/:id", s.handleAPIAgentHandoffShow)
	api.POST("/agent-handoffs/:id/acknowledge", s.handleAPIAgentHandoffAcknowledge, editorOnly)
	api.POST("/agent-handoffs/:id/claim", s.handleAPIAgentHandoffClaim, editorOnly)
	api.GET("/handoffs/:id/envelope", s.handleAPIHandoffEnvelope, s.inHandoff)
	api.GET("/plans/:id/envelope", s.handleAPIPlanEnvelope, s.inPlan)
	api.GET("/agent-handoffs/:id/envelope", s.handleAPIAgentHandoffEnvelope)
	api.POST("/envelopes", s.handleAPIEnvelopeImport, editorOnly)
	api.POST("/envelopes/validate", s.handleAPIEnvelopeValidate)
}
