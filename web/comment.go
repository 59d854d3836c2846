package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// commenter is who comments on a page and through which route: a member on
// /h/{id}, or a guest of a review link on /s/{token}.
type commenter struct {
	base     string // "/h/{id}" or "/s/{token}"
	handoff  *store.Handoff
	actor    store.Actor // a guest's name comes with each comment
	guest    bool
	canWrite bool
	shareID  string
}

// memberCommenter is the request's caller on a member page of handoff h.
func memberCommenter(ctx context.Context, h *store.Handoff) commenter {
	return commenter{base: "/h/" + h.ID, handoff: h, actor: actor(ctx), canWrite: can(ctx, actComment)}
}

// anchorFrom reads an anchor from the query or form: kind, id, section.
func anchorFrom(c echo.Context) store.Anchor {
	return store.Anchor{Kind: store.AnchorKind(c.FormValue("kind")), ID: c.FormValue("id"), Section: c.FormValue("section")}
}

// threadView gathers the threads of one anchor.
func (s *Server) threadView(ctx context.Context, cm commenter, a store.Anchor, editing string) (views.ThreadView, error) {
	if err := a.Validate(); err != nil {
		return views.ThreadView{}, err
	}
	all, err := s.db.FindComments(ctx, store.CommentFilter{HandoffID: cm.handoff.ID})
	if err != nil {
		return views.ThreadView{}, err
	}
	var threads []*store.Comment
	for _, c := range all {
		if c.Anchor == a {
			threads = append(threads, c)
		}
	}
	viewer := cm.actor
	if cm.guest {
		viewer = store.Actor{Guest: true}
	}
	return views.ThreadView{Base: cm.base, Anchor: a, Threads: s.commentViews(ctx, threads, viewer), Editing: editing,
		CanComment: cm.canWrite, Guest: cm.guest}, nil
}

// renderThread answers a thread request or a change to a thread: the
// list alone (list=1, or after a change), or the list with its forms.
func (s *Server) renderThread(c echo.Context, cm commenter, a store.Anchor, listOnly bool, status int, editing string) error {
	tv, err := s.threadView(c.Request().Context(), cm, a, editing)
	if err != nil {
		return err
	}
	if listOnly {
		return s.render(c, status, views.ThreadList(tv))
	}
	return s.render(c, status, views.Thread(tv))
}

// afterComment answers a comment write: the anchor's thread list for htmx,
// else back to the page.
func (s *Server) afterComment(c echo.Context, cm commenter, a store.Anchor, status int) error {
	s.announce(cm.handoff.ID)
	if isHTMX(c) {
		return s.renderThread(c, cm, a, true, status, "")
	}
	back := cm.base
	if a.Kind == store.AnchorPlanSection || (a.Kind == store.AnchorGeneral && a.ID != "") {
		if cm.guest {
			back += "#share-plan"
		} else {
			back = "/p/" + a.ID
		}
	}
	return c.Redirect(http.StatusSeeOther, back+"#thread-"+url.PathEscape(a.Key()))
}

// memberHandoff loads the handoff of a member route.
func (s *Server) memberHandoff(c echo.Context) (commenter, error) {
	h, err := s.findHandoff(c.Request().Context(), c.Param("id"))
	if err != nil {
		return commenter{}, err
	}
	return memberCommenter(c.Request().Context(), h), nil
}

// commentOf loads a comment of cm's handoff: another handoff's is not found.
func (s *Server) commentOf(ctx context.Context, cm commenter, id string) (*store.Comment, error) {
	cmt, err := s.db.FindCommentByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if cmt.HandoffID != cm.handoff.ID {
		return nil, fmt.Errorf("comment %s: %w", id, store.ErrNotFound)
	}
	return cmt, nil
}

// handleCommentThreadShow serves GET /h/:id/comments?kind=&id=&section=: the
// anchor's threads, opened inline (list=1: the list alone, for live updates).
func (s *Server) handleCommentThreadShow(c echo.Context) error {
	cm, err := s.memberHandoff(c)
	if err != nil {
		return err
	}
	return s.renderThread(c, cm, anchorFrom(c), c.QueryParam("list") != "", http.StatusOK, "")
}

// handleCommentCreate serves POST /h/:id/comments: a new thread.
func (s *Server) handleCommentCreate(c echo.Context) error {
	cm, err := s.memberHandoff(c)
	if err != nil {
		return err
	}
	if err := requireCan(c.Request().Context(), actComment); err != nil {
		return err
	}
	a := anchorFrom(c)
	if _, err := s.db.CreateComment(c.Request().Context(), cm.handoff.ID,
		store.CommentCreate{Anchor: a, Body: c.FormValue("body"), Author: cm.actor}); err != nil {
		return err
	}
	return s.afterComment(c, cm, a, http.StatusCreated)
}

// handleReplyCreate serves POST /h/:id/comments/:cid/replies.
func (s *Server) handleReplyCreate(c echo.Context) error {
	cm, err := s.memberHandoff(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := requireCan(ctx, actComment); err != nil {
		return err
	}
	parent, err := s.commentOf(ctx, cm, c.Param("cid"))
	if err != nil {
		return err
	}
	if _, err := s.db.CreateReply(ctx, parent.ID, c.FormValue("body"), cm.actor, ""); err != nil {
		return err
	}
	return s.afterComment(c, cm, parent.Anchor, http.StatusCreated)
}

// handleCommentResolve serves POST /h/:id/comments/:cid/resolve and
// /reopen.
func (s *Server) handleCommentResolve(resolved bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		cm, err := s.memberHandoff(c)
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		if err := requireCan(ctx, actComment); err != nil {
			return err
		}
		cmt, err := s.commentOf(ctx, cm, c.Param("cid"))
		if err != nil {
			return err
		}
		if _, err := s.db.ResolveComment(ctx, cmt.ID, resolved, cm.actor); err != nil {
			return err
		}
		return s.afterComment(c, cm, cmt.Anchor, http.StatusOK)
	}
}

// handleCommentEditForm serves GET /h/:id/comments/:cid/edit: the
// thread list with the comment in edit mode.
func (s *Server) handleCommentEditForm(c echo.Context) error {
	cm, err := s.memberHandoff(c)
	if err != nil {
		return err
	}
	cmt, err := s.commentOf(c.Request().Context(), cm, c.Param("cid"))
	if err != nil {
		return err
	}
	return s.renderThread(c, cm, cmt.Anchor, true, http.StatusOK, cmt.ID)
}

// handleCommentUpdate serves POST /h/:id/comments/:cid/edit: its author
// changes a comment.
func (s *Server) handleCommentUpdate(c echo.Context) error {
	cm, err := s.memberHandoff(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cmt, err := s.commentOf(ctx, cm, c.Param("cid"))
	if err != nil {
		return err
	}
	if _, err := s.db.UpdateComment(ctx, cmt.ID, c.FormValue("body"), cm.actor); err != nil {
		return err
	}
	return s.afterComment(c, cm, cmt.Anchor, http.StatusOK)
}

// handleCommentDelete serves POST /h/:id/comments/:cid/delete: its author
// removes a comment (a thread's first comment takes its replies along).
func (s *Server) handleCommentDelete(c echo.Context) error {
	cm, err := s.memberHandoff(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cmt, err := s.commentOf(ctx, cm, c.Param("cid"))
	if err != nil {
		return err
	}
	if _, err := s.db.DeleteComment(ctx, cmt.ID, cm.actor); err != nil {
		return err
	}
	return s.afterComment(c, cm, cmt.Anchor, http.StatusOK)
}

// handleReviewCreate serves POST /h/:id/reviews: approve, approve with
// comments, or request changes.
func (s *Server) handleReviewCreate(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireCan(ctx, actReview); err != nil {
		return err
	}
	h, err := s.findHandoff(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	state, err := store.ParseReviewState(c.FormValue("state"))
	if err != nil {
		return err
	}
	if _, err := s.db.CreateReview(ctx, h.ID, store.Review{Reviewer: actor(ctx), State: state, Body: c.FormValue("body")}); err != nil {
		return err
	}
	s.announce(h.ID)
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, "/h/"+h.ID+"#reviews-h")
	}
	p := &views.ReviewPanel{HandoffID: h.ID, Base: "/h/" + h.ID}
	if p.Reviewers, err = s.db.FindReviewerStates(ctx, h.ID); err != nil {
		return err
	}
	return s.render(c, http.StatusCreated, views.ReviewsSection(p))
}

// handleReviewRequest serves POST /h/:id/review-requests: ask members
// (form field reviewer, repeated: user ids) for their review.
func (s *Server) handleReviewRequest(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireCan(ctx, actRequestReview); err != nil {
		return err
	}
	h, err := s.findHandoff(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	var reviewers []store.Actor
	for _, id := range form["reviewer"] {
		m, err := s.findMember(ctx, id)
		if err != nil {
			return err
		}
		reviewers = append(reviewers, m)
	}
	if err := s.db.RequestReview(ctx, h.ID, actor(ctx), reviewers); err != nil {
		return err
	}
	s.announce(h.ID)
	return c.Redirect(http.StatusSeeOther, "/h/"+h.ID+"#reviews-h")
}

// shareURL is the address of a share link's page.
func shareURL(c echo.Context, token string) string {
	return c.Scheme() + "://" + c.Request().Host + "/s/" + token
}

// handleShareCreate serves POST /h/:id/shares and POST /p/:id/shares: a
// new link, whose address is shown once in the flash.
func (s *Server) handleShareCreate(fromPlan bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		if err := requireCan(ctx, actShare); err != nil {
			return err
		}
		in := store.ShareCreate{Mode: store.ShareMode(c.FormValue("mode")), ExpiresIn: c.FormValue("expiresIn"),
			Label: c.FormValue("label"), By: actor(ctx)}
		back := "/h/" + c.Param("id")
		if fromPlan {
			in.PlanID, back = c.Param("id"), "/p/"+c.Param("id")
		} else {
			in.HandoffID = c.Param("id")
		}
		l, token, err := s.db.CreateShareLink(ctx, in)
		if err != nil {
			if errors.Is(err, store.ErrInvalid) {
				s.setFlash(c, errorMessage(err))
				return c.Redirect(http.StatusSeeOther, back+"#shares-h")
			}
			return err
		}
		s.setFlash(c, fmt.Sprintf("New %s link (copy it now, it is shown once): %s", l.Mode, shareURL(c, token)))
		return c.Redirect(http.StatusSeeOther, back+"#shares-h")
	}
}

// handleShareRevoke serves POST /h/:id/shares/:sid/revoke.
func (s *Server) handleShareRevoke(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireCan(ctx, actShare); err != nil {
		return err
	}
	links, err := s.db.FindShareLinks(ctx, store.ShareFilter{WorkspaceID: s.workspaceID(ctx), HandoffID: c.Param("id")})
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(links, func(l *store.ShareLink) bool { return l.ID == c.Param("sid") }) {
		return fmt.Errorf("share link %s: %w", c.Param("sid"), store.ErrNotFound)
	}
	l, err := s.db.RevokeShareLink(ctx, s.workspaceID(ctx), c.Param("sid"))
	if err != nil {
		return err
	}
	s.announce(l.HandoffID) // its guests' pages learn the link is gone
	s.setFlash(c, "Link …"+l.TokenLast4+" revoked: it opens nothing any more.")
	return c.Redirect(http.StatusSeeOther, "/h/"+l.HandoffID+"#shares-h")
}
