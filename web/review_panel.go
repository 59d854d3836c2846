package web

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// withReviewPanel puts the team-review state of the handoff a route is
// about into the request's context, for the views (views.ReviewPanel): the
// whole panel for the review screen and the plan page, the comment counts
// for the item fragments the review screen swaps. Other routes pass.
func (s *Server) withReviewPanel(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		var p *views.ReviewPanel
		var err error
		switch path := c.Path(); {
		case path == "/h/:id" && c.Request().Method == http.MethodGet:
			p, err = s.reviewPanel(c, c.Param("id"), nil)
		case path == "/p/:id" && c.Request().Method == http.MethodGet:
			plan, ferr := s.db.FindPlanByID(ctx, c.Param("id"))
			if ferr != nil {
				return next(c) // the handler answers
			}
			p, err = s.reviewPanel(c, plan.HandoffID, plan)
		case strings.HasPrefix(path, "/h/:id/:kind"):
			p, err = s.countsPanel(ctx, c.Param("id"), "/h/"+c.Param("id"))
		}
		if err != nil {
			return err
		}
		if p != nil {
			c.SetRequest(c.Request().WithContext(views.WithReviewPanel(ctx, p)))
		}
		return next(c)
	}
}

// countsPanel is a panel with the comment counts only.
func (s *Server) countsPanel(ctx context.Context, handoffID, base string) (*views.ReviewPanel, error) {
	counts, err := s.db.CountComments(ctx, handoffID)
	if err != nil {
		return nil, err
	}
	return &views.ReviewPanel{HandoffID: handoffID, Base: base, Counts: counts}, nil
}

// reviewPresenceKey is where withReviewPanel keeps, for the handler, which
// of the handoff's lists have rows (store.ReviewPresence).
const reviewPresenceKey = "baton.reviewPresence"

// presence returns which of handoffID's lists have rows, as read for this
// request's panel, or reads it.
func (s *Server) presence(c echo.Context, handoffID string) (store.ReviewPresence, error) {
	if p, ok := c.Get(reviewPresenceKey).(presenceOf); ok && p.handoffID == handoffID {
		return p.ReviewPresence, nil
	}
	p, err := s.db.FindReviewPresence(c.Request().Context(), handoffID)
	if err == nil {
		c.Set(reviewPresenceKey, presenceOf{handoffID, p})
	}
	return p, err
}

// presenceOf is a handoff's store.ReviewPresence.
type presenceOf struct {
	handoffID string
	store.ReviewPresence
}

// reviewPanel gathers the whole panel of a handoff's member page; plan is
// set on a plan page. It asks only for the lists that have rows.
func (s *Server) reviewPanel(c echo.Context, handoffID string, plan *store.Plan) (*views.ReviewPanel, error) {
	ctx := c.Request().Context()
	has, err := s.presence(c, handoffID)
	if err != nil {
		return nil, err
	}
	p := &views.ReviewPanel{HandoffID: handoffID, Base: "/h/" + handoffID, Counts: map[string]store.CommentCount{}}
	if has.Comments {
		if p.Counts, err = s.db.CountComments(ctx, handoffID); err != nil {
			return nil, err
		}
	}
	p.LiveURL = "/h/" + handoffID + "/live"
	p.StyleURL, p.ScriptURL = s.assets.URL("review.css"), s.assets.URL("live.js")
	p.CanComment, p.CanReview = can(ctx, actComment), can(ctx, actReview)
	p.CanRequestReview, p.CanShare, p.CanReplan = can(ctx, actRequestReview), can(ctx, actShare), can(ctx, actReplan)
	if has.Comments {
		if p.Overview, err = s.overview(ctx, handoffID, false); err != nil {
			return nil, err
		}
	}
	if has.Reviews {
		if p.Reviewers, err = s.db.FindReviewerStates(ctx, handoffID); err != nil {
			return nil, err
		}
	}
	p.ChangesRequested = store.ChangesRequested(p.Reviewers)
	if p.CanRequestReview {
		if p.Members, err = s.reviewMembers(ctx); err != nil {
			return nil, err
		}
	}
	if p.Activity, err = s.db.FindActivityAt(ctx, handoffID, has.ActivityRev, 30); err != nil {
		return nil, err
	}
	if p.CanShare && has.Shares {
		if p.Shares, err = s.db.FindShareLinks(ctx, store.ShareFilter{WorkspaceID: s.workspaceID(ctx), HandoffID: handoffID}); err != nil {
			return nil, err
		}
	}
	if plan != nil {
		if p.Plan, err = s.planExtras(ctx, plan); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// overview returns the handoff's open threads in document order: the
// summary, decisions, files and risks in their order, general comments,
// then the plans' comments by plan (newest first) and section. shared
// keeps links on the page (a share page links to no member page).
func (s *Server) overview(ctx context.Context, handoffID string, shared bool) ([]views.CommentView, error) {
	threads, err := s.db.FindComments(ctx, store.CommentFilter{HandoffID: handoffID, OpenOnly: true})
	if err != nil || len(threads) == 0 {
		return nil, err
	}
	order := map[string]int{store.Anchor{Kind: store.AnchorSummary}.Key(): 0}
	n := 1
	items, err := s.db.FindItemAnchors(ctx, handoffID)
	if err != nil {
		return nil, err
	}
	for _, a := range items {
		order[a.Key()] = n
		n++
	}
	order[store.Anchor{Kind: store.AnchorGeneral}.Key()] = n
	n++
	if slices.ContainsFunc(threads, func(c *store.Comment) bool { return c.PlanID != "" }) {
		plans, err := s.db.FindPlans(ctx, store.PlanFilter{HandoffID: handoffID, Limit: 20})
		if err != nil {
			return nil, err
		}
		for _, p := range plans {
			order[store.Anchor{Kind: store.AnchorGeneral, ID: p.ID}.Key()] = n
			n++
			for _, sec := range store.PlanSections(p.Markdown) {
				order[store.Anchor{Kind: store.AnchorPlanSection, ID: p.ID, Section: sec.Slug}.Key()] = n
				n++
			}
		}
	}
	rank := func(c *store.Comment) int {
		if i, ok := order[c.Anchor.Key()]; ok {
			return i
		}
		return n // a removed item or an old plan: last
	}
	slices.SortStableFunc(threads, func(a, b *store.Comment) int { return rank(a) - rank(b) })
	out := s.commentViews(ctx, threads, store.Actor{})
	for i := range out {
		out[i].Href = anchorHref(out[i].Anchor, shared)
	}
	return out, nil
}

// anchorHref points at what a thread is about.
func anchorHref(a store.Anchor, shared bool) string {
	switch a.Kind {
	case store.AnchorDecision, store.AnchorFile, store.AnchorRisk:
		return "#item-" + a.ID
	case store.AnchorSummary:
		return "#summary-h"
	case store.AnchorPlanSection:
		if shared {
			return "#section-" + a.Section
		}
		return "/p/" + a.ID + "#section-" + a.Section
	case store.AnchorGeneral:
		if a.ID != "" && !shared {
			return "/p/" + a.ID + "#plan-review-h"
		}
	}
	return "#general-h"
}

// commentViews renders threads for the views; viewer decides which are
// theirs to edit.
func (s *Server) commentViews(ctx context.Context, threads []*store.Comment, viewer store.Actor) []views.CommentView {
	out := make([]views.CommentView, len(threads))
	for i, c := range threads {
		out[i] = s.commentView(c, viewer)
		for _, r := range c.Replies {
			out[i].Replies = append(out[i].Replies, s.commentView(r, viewer))
		}
	}
	return out
}

func (s *Server) commentView(c *store.Comment, viewer store.Actor) views.CommentView {
	mine := viewer.Name != "" && !viewer.Guest && !c.Author.Guest && viewer.UserID == c.Author.UserID
	return views.CommentView{Comment: c, HTML: s.markdown.Render(c.Body), Mine: mine}
}

// reviewRoutes registers the team-review routes of member pages.
// Viewers comment and review; sharing and requesting reviews need an
// editor (editorOnly), and every route checks the handoff or plan is the
// caller's workspace's.
func (s *Server) reviewRoutes(b *echo.Group, editorOnly echo.MiddlewareFunc) {
	b.GET("/h/:id/live", s.handleLive, s.inHandoff)
	b.GET("/h/:id/comments", s.handleCommentThreadShow, s.inHandoff)
	b.POST("/h/:id/comments", s.handleCommentCreate, s.inHandoff)
	b.POST("/h/:id/comments/:cid/replies", s.handleReplyCreate, s.inHandoff)
	b.POST("/h/:id/comments/:cid/resolve", s.handleCommentResolve(true), s.inHandoff)
	b.POST("/h/:id/comments/:cid/reopen", s.handleCommentResolve(false), s.inHandoff)
	b.GET("/h/:id/comments/:cid/edit", s.handleCommentEditForm, s.inHandoff)
	b.POST("/h/:id/comments/:cid/edit", s.handleCommentUpdate, s.inHandoff)
	b.POST("/h/:id/comments/:cid/delete", s.handleCommentDelete, s.inHandoff)
	b.POST("/h/:id/reviews", s.handleReviewCreate, s.inHandoff)
	b.POST("/h/:id/review-requests", s.handleReviewRequest, editorOnly, s.inHandoff)
	b.POST("/h/:id/shares", s.handleShareCreate(false), editorOnly, s.inHandoff)
	b.POST("/h/:id/shares/:sid/revoke", s.handleShareRevoke, editorOnly, s.inHandoff)
	b.POST("/p/:id/shares", s.handleShareCreate(true), editorOnly, s.inPlan)
}

// apiReviewRoutes registers the team-review routes of the JSON API.
func (s *Server) apiReviewRoutes(api *echo.Group, editorOnly echo.MiddlewareFunc) {
	api.GET("/handoffs/:id/comments", s.handleAPICommentList, s.inHandoff)
	api.POST("/handoffs/:id/comments", s.handleAPICommentCreate, s.inHandoff)
	api.POST("/comments/:id/replies", s.handleAPIReplyCreate)
	api.POST("/comments/:id/resolve", s.handleAPICommentResolve(true))
	api.POST("/comments/:id/reopen", s.handleAPICommentResolve(false))
	api.PATCH("/comments/:id", s.handleAPICommentUpdate)
	api.DELETE("/comments/:id", s.handleAPICommentDelete)
	api.POST("/handoffs/:id/reviews", s.handleAPIReviewCreate, s.inHandoff)
	api.POST("/handoffs/:id/shares", s.handleAPIShareCreate(false), editorOnly, s.inHandoff)
	api.POST("/plans/:id/shares", s.handleAPIShareCreate(true), editorOnly, s.inPlan)
	api.GET("/shares", s.handleAPIShareList)
	api.DELETE("/shares/:id", s.handleAPIShareRevoke, editorOnly)
}
