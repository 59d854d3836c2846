package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// errEmptyThread refuses "Ready to plan" on a brainstorm with nothing in
// it: extracting would only leave an empty handoff behind.
var errEmptyThread = &store.Error{Code: store.EINVALID,
	Message: "This brainstorm has no messages yet, so there is nothing to plan. Say what you want to build first, then press Ready to plan."}

// checkPlannable returns errEmptyThread (422) unless the thread has a message.
func (s *Server) checkPlannable(ctx context.Context, threadID string) error {
	heads, err := s.db.FindMessageHeads(ctx, threadID)
	if err != nil {
		return err
	}
	if len(heads) == 0 {
		return errEmptyThread
	}
	return nil
}

// handleThreadRename serves POST /t/:id/rename {title}.
func (s *Server) handleThreadRename(c echo.Context) error {
	title := c.FormValue("title")
	t, err := s.db.UpdateThread(c.Request().Context(), c.Param("id"), store.ThreadUpdate{Title: &title})
	if err != nil {
		if errors.Is(err, store.ErrInvalid) {
			s.setFlash(c, errorMessage(err))
			return c.Redirect(http.StatusSeeOther, "/t/"+c.Param("id"))
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+t.ID)
}

// handleThreadArchive serves POST /t/:id/archive {archived=true|false}:
// archiving hides the brainstorm from the list (it goes back to the list
// of brainstorms); unarchiving brings it back (it stays on the thread).
func (s *Server) handleThreadArchive(c echo.Context) error {
	archived := c.FormValue("archived") != "false"
	t, err := s.db.UpdateThread(c.Request().Context(), c.Param("id"), store.ThreadUpdate{Archived: &archived})
	if err != nil {
		return err
	}
	if archived {
		s.setFlash(c, fmt.Sprintf("Archived “%s”. It is listed under Archived brainstorms.", t.Title))
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+t.ID)
}

// handleThreadDeleteConfirm serves GET /t/:id/delete: what deleting
// removes and keeps, and the button that does it.
func (s *Server) handleThreadDeleteConfirm(c echo.Context) error {
	t, err := s.db.FindThreadByID(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.ThreadDeletePage(s.meta(c, "Delete "+t.Title), t))
}

// handleThreadDelete serves POST /t/:id/delete and goes back to the list.
func (s *Server) handleThreadDelete(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.db.FindThreadByID(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if err := s.db.DeleteThread(ctx, t.ID); err != nil {
		return err
	}
	s.setFlash(c, fmt.Sprintf("Deleted “%s”.", t.Title))
	return c.Redirect(http.StatusSeeOther, "/")
}

// handleThreadsArchived serves GET /archived: the archived brainstorms.
func (s *Server) handleThreadsArchived(c echo.Context) error {
	threads, err := s.db.FindThreads(c.Request().Context(), store.ThreadFilter{Archived: true})
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.ArchivedPage(s.meta(c, "Archived brainstorms"), threads))
}

// threadUpdateJSON is the body of PATCH /api/v1/threads/:id.
type threadUpdateJSON struct {
	Title    *string `json:"title"`
	Archived *bool   `json:"archived"`
}

// handleAPIThreadUpdate serves PATCH /api/v1/threads/:id {"title"?,
// "archived"?}: 200 with the thread.
func (s *Server) handleAPIThreadUpdate(c echo.Context) error {
	var in threadUpdateJSON
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	t, err := s.db.UpdateThread(c.Request().Context(), c.Param("id"), store.ThreadUpdate{Title: in.Title, Archived: in.Archived})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newThreadJSON(t))
}

// handleAPIThreadDelete serves DELETE /api/v1/threads/:id: 204. Snapshots
// and plans of the thread stay.
func (s *Server) handleAPIThreadDelete(c echo.Context) error {
	if err := s.db.DeleteThread(c.Request().Context(), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
