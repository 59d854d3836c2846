package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
)

// anchorJSON is a comment's anchor in the JSON API.
type anchorJSON struct {
	Kind    string `json:"kind"`
	ID      string `json:"id,omitempty"`
	Section string `json:"section,omitempty"`
	Label   string `json:"label,omitempty"` // in answers only
}

func (a anchorJSON) anchor() store.Anchor {
	return store.Anchor{Kind: store.AnchorKind(a.Kind), ID: a.ID, Section: a.Section}
}

// actorJSON is an author or reviewer in the JSON API.
type actorJSON struct {
	UserID string `json:"userId,omitempty"`
	Name   string `json:"name"`
	Guest  bool   `json:"guest"`
}

func newActorJSON(a store.Actor) actorJSON {
	return actorJSON{UserID: a.UserID, Name: a.Name, Guest: a.Guest}
}

// commentJSON is a comment in the JSON API; a thread's first comment
// carries its replies and resolved state.
type commentJSON struct {
	ID         string          `json:"id"`
	HandoffID  string          `json:"handoffId"`
	PlanID     string          `json:"planId,omitempty"`
	ParentID   string          `json:"parentId,omitempty"`
	Anchor     anchorJSON      `json:"anchor"`
	Author     actorJSON       `json:"author"`
	Body       string          `json:"body"`
	Resolved   bool            `json:"resolved"`
	ResolvedAt *time.Time      `json:"resolvedAt,omitempty"`
	ResolvedBy string          `json:"resolvedBy,omitempty"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
	Replies    *[]*commentJSON `json:"replies,omitempty"` // a thread's first comment only
}

func newCommentJSON(c *store.Comment) *commentJSON {
	out := &commentJSON{ID: c.ID, HandoffID: c.HandoffID, PlanID: c.PlanID, ParentID: c.ParentID,
		Anchor: anchorJSON{Kind: string(c.Anchor.Kind), ID: c.Anchor.ID, Section: c.Anchor.Section, Label: c.AnchorLabel},
		Author: newActorJSON(c.Author), Body: c.Body, Resolved: c.Resolved(), ResolvedBy: c.ResolvedBy,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.Resolved() {
		out.ResolvedAt = &c.ResolvedAt
	}
	if c.ParentID == "" {
		replies := make([]*commentJSON, 0, len(c.Replies))
		for _, r := range c.Replies {
			replies = append(replies, newCommentJSON(r))
		}
		out.Replies = &replies
	}
	return out
}

// apiComment loads a comment of a handoff of the caller's workspace.
func (s *Server) apiComment(c echo.Context) (*store.Comment, error) {
	ctx := c.Request().Context()
	cm, err := s.db.FindCommentByID(ctx, c.Param("id"))
	if err != nil {
		return nil, err
	}
	if _, err := s.findHandoff(ctx, cm.HandoffID); err != nil {
		return nil, err
	}
	return cm, nil
}

// handleAPICommentCreate serves POST /api/v1/handoffs/:id/comments
// {"anchor":{"kind","id"?,"section"?},"body"} → 201 comment.
func (s *Server) handleAPICommentCreate(c echo.Context) error {
	ctx := c.Request().Context()
	var in struct {
		Anchor anchorJSON `json:"anchor"`
		Body   string     `json:"body"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if err := requireCan(ctx, actComment); err != nil {
		return err
	}
	h, err := s.findHandoff(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	cm, err := s.db.CreateComment(ctx, h.ID, store.CommentCreate{Anchor: in.Anchor.anchor(), Body: in.Body, Author: actor(ctx)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newCommentJSON(cm))
}

// handleAPICommentList serves GET /api/v1/handoffs/:id/comments →
// {"comments":[…]}: every thread, oldest first, with replies and resolved state.
func (s *Server) handleAPICommentList(c echo.Context) error {
	ctx := c.Request().Context()
	h, err := s.findHandoff(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	threads, err := s.db.FindComments(ctx, store.CommentFilter{HandoffID: h.ID})
	if err != nil {
		return err
	}
	out := struct {
		Comments []*commentJSON `json:"comments"`
	}{Comments: []*commentJSON{}}
	for _, t := range threads {
		out.Comments = append(out.Comments, newCommentJSON(t))
	}
	return c.JSON(http.StatusOK, out)
}

// handleAPIReplyCreate serves POST /api/v1/comments/:id/replies {"body"} → 201 reply.
func (s *Server) handleAPIReplyCreate(c echo.Context) error {
	ctx := c.Request().Context()
	var in struct {
		Body string `json:"body"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if err := requireCan(ctx, actComment); err != nil {
		return err
	}
	parent, err := s.apiComment(c)
	if err != nil {
		return err
	}
	r, err := s.db.CreateReply(ctx, parent.ID, in.Body, actor(ctx), "")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newCommentJSON(r))
}

// handleAPICommentResolve serves POST /api/v1/comments/:id/resolve and
// /reopen → 200 thread.
func (s *Server) handleAPICommentResolve(resolved bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		if err := requireCan(ctx, actComment); err != nil {
			return err
		}
		cm, err := s.apiComment(c)
		if err != nil {
			return err
		}
		t, err := s.db.ResolveComment(ctx, cm.ID, resolved, actor(ctx))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, newCommentJSON(t))
	}
}

// handleAPICommentUpdate serves PATCH /api/v1/comments/:id {"body"} → 200:
// its author edits a comment.
func (s *Server) handleAPICommentUpdate(c echo.Context) error {
	ctx := c.Request().Context()
	var in struct {
		Body string `json:"body"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	cm, err := s.apiComment(c)
	if err != nil {
		return err
	}
	u, err := s.db.UpdateComment(ctx, cm.ID, in.Body, actor(ctx))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newCommentJSON(u))
}

// handleAPICommentDelete serves DELETE /api/v1/comments/:id → 204: its
// author removes a comment.
func (s *Server) handleAPICommentDelete(c echo.Context) error {
	cm, err := s.apiComment(c)
	if err != nil {
		return err
	}
	if _, err := s.db.DeleteComment(c.Request().Context(), cm.ID, actor(c.Request().Context())); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// reviewJSON is a review in the JSON API.
type reviewJSON struct {
	ID        string    `json:"id"`
	HandoffID string    `json:"handoffId"`
	Reviewer  actorJSON `json:"reviewer"`
	State     string    `json:"state"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"createdAt"`
}

// handleAPIReviewCreate serves POST /api/v1/handoffs/:id/reviews
// {"state":"approved|commented|changes_requested","body"?} → 201 review.
func (s *Server) handleAPIReviewCreate(c echo.Context) error {
	ctx := c.Request().Context()
	var in struct {
		State string `json:"state"`
		Body  string `json:"body"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if err := requireCan(ctx, actReview); err != nil {
		return err
	}
	h, err := s.findHandoff(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	state, err := store.ParseReviewState(in.State)
	if err != nil {
		return err
	}
	r, err := s.db.CreateReview(ctx, h.ID, store.Review{Reviewer: actor(ctx), State: state, Body: in.Body})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, reviewJSON{ID: r.ID, HandoffID: r.HandoffID, Reviewer: newActorJSON(r.Reviewer),
		State: string(r.State), Body: r.Body, CreatedAt: r.CreatedAt})
}

// shareJSON is a share link in the JSON API: never its token.
type shareJSON struct {
	ID           string     `json:"id"`
	HandoffID    string     `json:"handoffId"`
	PlanID       string     `json:"planId,omitempty"`
	Mode         string     `json:"mode"`
	Label        string     `json:"label"`
	Last4        string     `json:"last4"`
	CreatedBy    actorJSON  `json:"createdBy"`
	CreatedAt    time.Time  `json:"createdAt"`
	ExpiresAt    *time.Time `json:"expiresAt"`
	Revoked      bool       `json:"revoked"`
	Active       bool       `json:"active"`
	Views        int        `json:"views"`
	LastViewedAt *time.Time `json:"lastViewedAt"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func newShareJSON(l *store.ShareLink, now time.Time) shareJSON {
	return shareJSON{ID: l.ID, HandoffID: l.HandoffID, PlanID: l.PlanID, Mode: string(l.Mode), Label: l.Label,
		Last4: l.TokenLast4, CreatedBy: newActorJSON(l.CreatedBy), CreatedAt: l.CreatedAt, ExpiresAt: timePtr(l.ExpiresAt),
		Revoked: !l.RevokedAt.IsZero(), Active: l.Active(now), Views: l.Views, LastViewedAt: timePtr(l.LastViewedAt)}
}

// handleAPIShareCreate serves POST /api/v1/handoffs/:id/shares and POST
// /api/v1/plans/:id/shares {"mode":"view|review","expiresIn":"1d|7d|30d|never","label"?}
// → 201 {"id","url","token","mode","expiresAt"}. The token is shown this once.
func (s *Server) handleAPIShareCreate(fromPlan bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		var in struct {
			Mode      string `json:"mode"`
			ExpiresIn string `json:"expiresIn"`
			Label     string `json:"label"`
		}
		if err := bindJSON(c, &in); err != nil {
			return err
		}
		if err := requireCan(ctx, actShare); err != nil {
			return err
		}
		sc := store.ShareCreate{Mode: store.ShareMode(in.Mode), ExpiresIn: in.ExpiresIn, Label: in.Label, By: actor(ctx)}
		if fromPlan {
			plan, err := s.db.FindPlanByID(ctx, c.Param("id"))
			if err != nil {
				return err
			}
			if _, err := s.findHandoff(ctx, plan.HandoffID); err != nil {
				return err
			}
			sc.PlanID = plan.ID
		} else {
			h, err := s.findHandoff(ctx, c.Param("id"))
			if err != nil {
				return err
			}
			sc.HandoffID = h.ID
		}
		l, token, err := s.db.CreateShareLink(ctx, sc)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, struct {
			ID        string     `json:"id"`
			URL       string     `json:"url"`
			Token     string     `json:"token"`
			Mode      string     `json:"mode"`
			ExpiresAt *time.Time `json:"expiresAt"`
		}{l.ID, shareURL(c, token), token, string(l.Mode), timePtr(l.ExpiresAt)})
	}
}

// handleAPIShareList serves GET /api/v1/shares → {"shares":[…]}: the
// workspace's links, newest first, never a token.
func (s *Server) handleAPIShareList(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireCan(ctx, actShare); err != nil {
		return err
	}
	links, err := s.db.FindShareLinks(ctx, store.ShareFilter{WorkspaceID: s.workspaceID(ctx)})
	if err != nil {
		return err
	}
	out := struct {
		Shares []shareJSON `json:"shares"`
	}{Shares: []shareJSON{}}
	now := time.Now()
	for _, l := range links {
		out.Shares = append(out.Shares, newShareJSON(l, now))
	}
	return c.JSON(http.StatusOK, out)
}

// handleAPIShareRevoke serves DELETE /api/v1/shares/:id → 204.
func (s *Server) handleAPIShareRevoke(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireCan(ctx, actShare); err != nil {
		return err
	}
	l, err := s.db.RevokeShareLink(ctx, s.workspaceID(ctx), c.Param("id"))
	if err != nil {
		return err
	}
	s.announce(l.HandoffID)
	return c.NoContent(http.StatusNoContent)
}
