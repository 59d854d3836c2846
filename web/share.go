package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// Share pages: /s/{token} shows one handoff and its latest plan to whoever
// holds a live link, read only, with guest comments in review mode. A
// wrong, revoked or expired token is one 404; lookups are rate-limited per
// client; the pages link to no member page and show nothing else.

// shareRoutes registers the share routes on e.
func (s *Server) shareRoutes(e *echo.Echo, perSecond float64) {
	limit := middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store:               s.limiterStore("share", perSecond, max(1, int(5*perSecond))),
		IdentifierExtractor: func(c echo.Context) (string, error) { return c.RealIP(), nil },
		DenyHandler: func(c echo.Context, _ string, _ error) error {
			return store.Errorf(store.ERATELIMITED, "Too many requests for shared links. Wait a minute and try again.")
		},
	})
	g := e.Group("/s", shareHeaders, s.shareErrors, limit)
	g.GET("/:token", s.handleShareShow)
	g.GET("/:token/live", s.handleShareLive)
	g.GET("/:token/comments", s.handleShareThread)
	g.POST("/:token/comments", s.handleShareCommentCreate)
	g.POST("/:token/comments/:cid/replies", s.handleShareReplyCreate)
}

// shareHeaders keeps share pages out of referrers, search engines and
// caches, refuses cross-origin writes, and marks the request read-only
// for the views.
func shareHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Robots-Tag", "noindex, nofollow")
		h.Set(echo.HeaderCacheControl, "private, no-store")
		r := c.Request()
		if err := crossOrigin.Check(r); err != nil {
			return &store.Error{Code: eCrossSite, Message: "Comments on a shared link must come from its own page."}
		}
		c.SetRequest(r.WithContext(views.WithRequestState(r.Context(), views.RequestState{ReadOnly: true})))
		return next(c)
	}
}

// shared is what a share route works on.
type shared struct {
	link    *store.ShareLink
	handoff *store.Handoff
	base    string // "/s/{token}"
}

// commenter is a guest of the link: they may comment in review mode.
func (sh shared) commenter() commenter {
	return commenter{base: sh.base, handoff: sh.handoff, guest: true, canWrite: sh.link.Mode == store.ShareReview, shareID: sh.link.ID}
}

// findShared resolves the route's token.
func (s *Server) findShared(c echo.Context) (shared, error) {
	ctx := c.Request().Context()
	token := c.Param("token")
	l, err := s.db.FindShareLinkByToken(ctx, token)
	if err != nil {
		return shared{}, err
	}
	h, err := s.db.FindHandoffByID(ctx, l.HandoffID)
	if err != nil {
		return shared{}, err
	}
	return shared{link: l, handoff: h, base: "/s/" + token}, nil
}

// handleShareShow serves GET /s/:token: the handoff and its latest plan.
func (s *Server) handleShareShow(c echo.Context) error {
	ctx := c.Request().Context()
	sh, err := s.findShared(c)
	if err != nil {
		return err
	}
	// A page refreshing itself for a live update (static/live.js) is not
	// another view.
	if c.Request().Header.Get("X-Live") == "" {
		if err := s.db.RecordShareView(ctx, sh.link.ID); err != nil {
			s.log.Warn("record share view", "err", err)
		}
	}
	sv, p, err := s.shareView(ctx, sh)
	if err != nil {
		return err
	}
	c.SetRequest(c.Request().WithContext(views.WithReviewPanel(ctx, p)))
	return s.render(c, http.StatusOK, views.SharePage(s.shareMeta(c, sv.Title), sv))
}

// shareMeta is meta without the session's flash: guests have no session.
func (s *Server) shareMeta(c echo.Context, title string) views.Meta {
	return views.Meta{Title: title, Assets: s.assets}
}

// shareView gathers a share page and its panel.
func (s *Server) shareView(ctx context.Context, sh shared) (views.ShareView, *views.ReviewPanel, error) {
	sv := views.ShareView{Link: sh.link, Handoff: sh.handoff}
	t, err := s.db.FindThreadByID(ctx, sh.handoff.ThreadID)
	if err != nil {
		return sv, nil, err
	}
	sv.Title = t.Title
	plans, err := s.db.FindPlans(ctx, store.PlanFilter{HandoffID: sh.handoff.ID, Limit: 1})
	if err != nil {
		return sv, nil, err
	}
	if len(plans) > 0 {
		sv.Plan = plans[0]
		sv.PlanHTML = s.markdown.Render(sv.Plan.Markdown)
		sv.Sections = store.PlanSections(sv.Plan.Markdown)
	}
	p, err := s.countsPanel(ctx, sh.handoff.ID, sh.base)
	if err != nil {
		return sv, nil, err
	}
	p.LiveURL = sh.base + "/live"
	p.StyleURL, p.ScriptURL = s.assets.URL("review.css"), s.assets.URL("live.js")
	p.CanComment, p.Guest = sh.link.Mode == store.ShareReview, true
	if p.Overview, err = s.overview(ctx, sh.handoff.ID, true); err != nil {
		return sv, nil, err
	}
	return sv, p, nil
}

// handleShareLive serves GET /s/:token/live: the handoff's changes, and
// who is viewing, for a share page. A guest shows as "Guest".
func (s *Server) handleShareLive(c echo.Context) error {
	sh, err := s.findShared(c)
	if err != nil {
		return err
	}
	token := c.Param("token")
	return s.streamLive(c, sh.handoff.ID, "Guest", func(ctx context.Context) error {
		_, err := s.db.FindShareLinkByToken(ctx, token)
		return err
	})
}

// handleShareThread serves GET /s/:token/comments?kind=&id=&section=.
func (s *Server) handleShareThread(c echo.Context) error {
	sh, err := s.findShared(c)
	if err != nil {
		return err
	}
	a := anchorFrom(c)
	if err := s.shareAnchorVisible(c.Request().Context(), sh, a); err != nil {
		return err
	}
	return s.renderThread(c, sh.commenter(), a, c.QueryParam("list") != "", http.StatusOK, "")
}

// shareAnchorVisible keeps a share page to what it shows: comments on
// plans other than the latest are not part of it.
func (s *Server) shareAnchorVisible(ctx context.Context, sh shared, a store.Anchor) error {
	if a.Kind != store.AnchorPlanSection && (a.Kind != store.AnchorGeneral || a.ID == "") {
		return nil
	}
	plans, err := s.db.FindPlans(ctx, store.PlanFilter{HandoffID: sh.handoff.ID, Limit: 1})
	if err != nil {
		return err
	}
	if len(plans) == 0 || plans[0].ID != a.ID {
		return fmt.Errorf("plan %s: %w", a.ID, store.ErrNotFound)
	}
	return nil
}

// shareCommentBody is POST /s/{token}/comments as JSON.
type shareCommentBody struct {
	Name   string     `json:"name"`
	Anchor anchorJSON `json:"anchor"`
	Body   string     `json:"body"`
}

var errShareReadOnly = store.Errorf(store.EFORBIDDEN, "This link is read-only. Ask for a review link to comment.")

// handleShareCommentCreate serves POST /s/:token/comments, JSON
// {"name","anchor","body"} or a form (name, kind, id, section, body): a
// guest's comment, 201 in review mode, 403 in view mode.
func (s *Server) handleShareCommentCreate(c echo.Context) error {
	ctx := c.Request().Context()
	sh, err := s.findShared(c)
	if err != nil {
		return err
	}
	if sh.link.Mode != store.ShareReview {
		return errShareReadOnly
	}
	isJSON := strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON)
	var in shareCommentBody
	if isJSON {
		if err := bindJSON(c, &in); err != nil {
			return err
		}
	} else {
		in = shareCommentBody{Name: c.FormValue("name"), Body: c.FormValue("body"),
			Anchor: anchorJSON{Kind: c.FormValue("kind"), ID: c.FormValue("id"), Section: c.FormValue("section")}}
	}
	a := in.Anchor.anchor()
	if err := s.shareAnchorVisible(ctx, sh, a); err != nil {
		return err
	}
	cm, err := s.db.CreateComment(ctx, sh.handoff.ID, store.CommentCreate{Anchor: a, Body: in.Body,
		Author: store.Actor{Name: in.Name, Guest: true}, ShareID: sh.link.ID})
	if err != nil {
		return err
	}
	if isJSON {
		s.announce(sh.handoff.ID)
		return c.JSON(http.StatusCreated, newCommentJSON(cm))
	}
	return s.afterComment(c, sh.commenter(), a, http.StatusCreated)
}

// handleShareReplyCreate serves POST /s/:token/comments/:cid/replies
// (form: name, body): a guest's reply, in review mode.
func (s *Server) handleShareReplyCreate(c echo.Context) error {
	ctx := c.Request().Context()
	sh, err := s.findShared(c)
	if err != nil {
		return err
	}
	if sh.link.Mode != store.ShareReview {
		return errShareReadOnly
	}
	cm := sh.commenter()
	parent, err := s.commentOf(ctx, cm, c.Param("cid"))
	if err != nil {
		return err
	}
	if err := s.shareAnchorVisible(ctx, sh, parent.Anchor); err != nil {
		return err
	}
	if _, err := s.db.CreateReply(ctx, parent.ID, c.FormValue("body"), store.Actor{Name: c.FormValue("name"), Guest: true}, sh.link.ID); err != nil {
		return err
	}
	return s.afterComment(c, cm, parent.Anchor, http.StatusCreated)
}

// shareErrors answers a share route's errors itself, so that even an error
// page links to no member page: JSON for JSON requests, the flash fragment
// for htmx, else a bare page. A wrong, revoked or expired token is the
// same 404.
func (s *Server) shareErrors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil || c.Response().Committed {
			return err
		}
		status, e := errorResponse(err)
		if status >= 500 {
			s.log.Error("request failed", "method", c.Request().Method, "path", "/s/…", "err", err)
		}
		switch {
		case strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON),
			strings.Contains(c.Request().Header.Get(echo.HeaderAccept), echo.MIMEApplicationJSON):
			var body errorJSON
			body.Error.Code, body.Error.Message = e.Code, e.Message
			return c.JSON(status, body)
		case isHTMX(c):
			c.Response().Header().Set("HX-Retarget", "#flash")
			c.Response().Header().Set("HX-Reswap", "innerHTML")
			return s.render(c, status, views.ErrorFlash(e.Message))
		}
		return s.render(c, status, views.ShareErrorPage(s.shareMeta(c, http.StatusText(status)), e.Message))
	}
}
