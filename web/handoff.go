package web

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// handlePin serves POST /t/:id/messages/:mid/pin: the reply becomes a
// user-pinned decision of the thread's handoff, worded as the form's
// content, or as the reply's first sentence when there is none.
func (s *Server) handlePin(c echo.Context) error {
	ctx := c.Request().Context()
	if _, _, err := s.pinMessage(ctx, c.Param("id"), c.Param("mid"), c.FormValue("content")); err != nil {
		return err
	}
	return s.renderPinned(c)
}

// handleUnpin serves POST /t/:id/messages/:mid/unpin: the pinned decision is removed.
func (s *Server) handleUnpin(c echo.Context) error {
	if err := s.db.UnpinMessage(c.Request().Context(), c.Param("id"), c.Param("mid")); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return s.renderPinned(c)
}

func (s *Server) renderPinned(c echo.Context) error {
	ctx := c.Request().Context()
	threadID := c.Param("id")
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, "/t/"+threadID+"#msg-"+c.Param("mid"))
	}
	m, err := s.db.FindMessageByID(ctx, threadID, c.Param("mid"))
	if err != nil {
		return err
	}
	ready, err := s.readyState(c, threadID)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, templ.Join(views.MessageItem(s.messageView(m)), views.PinCount(ready.Pins, true)))
}

// readyState gathers what the "Ready to plan" bar shows.
func (s *Server) readyState(c echo.Context, threadID string) (views.Ready, error) {
	st, err := s.db.FindReadyState(c.Request().Context(), threadID)
	if err != nil {
		return views.Ready{ThreadID: threadID}, err
	}
	return s.ready(threadID, st), nil
}

// ready is the "Ready to plan" bar of a thread in state st.
func (s *Server) ready(threadID string, st store.ReadyState) views.Ready {
	r := views.Ready{ThreadID: threadID, Running: s.findExtraction(threadID) != nil}
	r.HandoffID, r.Pins = st.HandoffID, st.Pins
	if !r.Running && st.LastRunStatus == store.RunFailed {
		r.Error = st.LastRunError
	}
	return r
}

// handleExtractStart serves POST /t/:id/extract ("Ready to plan"): it
// starts the extraction in the background and returns the progress bar,
// which follows it over SSE. A second click joins the running extraction.
func (s *Server) handleExtractStart(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.threadIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	j, err := s.startExtraction(ctx, t)
	if err != nil {
		return err
	}
	if !isHTMX(c) {
		// Without JavaScript there is no progress to watch: wait for it, as
		// a watcher, so that the orphan timer does not cancel it. Leaving
		// stops watching; the job ends when nobody else watches.
		if err := j.wait(ctx); ctx.Err() != nil {
			return err
		}
		return s.redirectAfterExtraction(c, t.ID, j.ref)
	}
	ready, err := s.readyState(c, t.ID)
	if err != nil {
		return err
	}
	ready.Running = true
	return s.render(c, http.StatusOK, views.ReadyBar(ready))
}

func (s *Server) redirectAfterExtraction(c echo.Context, threadID, handoffID string) error {
	last, err := s.db.FindLatestExtractionRun(c.Request().Context(), handoffID)
	if err != nil {
		return err
	}
	if last.Status == store.RunSucceeded {
		return c.Redirect(http.StatusSeeOther, "/h/"+handoffID)
	}
	s.setFlash(c, last.Error)
	return c.Redirect(http.StatusSeeOther, "/t/"+threadID)
}

// handleExtractEvents serves GET /t/:id/extract/events: "progress" events
// while the thread's extraction runs, then one "done" event with the bar in
// its final state (on success it sends the page to the review screen).
// Closing the page cancels the extraction.
func (s *Server) handleExtractEvents(c echo.Context) error {
	ctx := c.Request().Context()
	threadID := c.Param("id")
	if _, err := s.db.FindThreadByID(ctx, threadID); err != nil {
		return err
	}
	sse := startSSE(c)
	if j := s.findExtraction(threadID); j != nil && !followJob(ctx, sse, j) {
		return nil // the client left
	}
	ready, err := s.readyState(c, threadID)
	if err != nil {
		return err
	}
	if ready.HandoffID != "" {
		if last, err := s.db.FindLatestExtractionRun(ctx, ready.HandoffID); err == nil {
			switch last.Status {
			case store.RunSucceeded:
				if time.Since(last.FinishedAt) < time.Minute {
					ready.Redirect = "/h/" + ready.HandoffID
					ready.Notice = fmt.Sprintf("Added %d items. Opening the review…", last.Added)
				}
			case store.RunFailed:
				ready.Error = last.Error
			case store.RunCancelled:
				ready.Notice = last.Error
			}
		}
	}
	var buf bytes.Buffer
	if err := views.ReadyBar(ready).Render(ctx, &buf); err != nil {
		return err
	}
	return sse.send("done", buf.String())
}

// handleExtractCancel serves POST /t/:id/extract/cancel.
func (s *Server) handleExtractCancel(c echo.Context) error {
	if j := s.findExtraction(c.Param("id")); j != nil {
		j.stop(errCancelled)
	}
	if isHTMX(c) {
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+c.Param("id"))
}

// handleReviewShow serves GET /h/:id: the review screen.
func (s *Server) handleReviewShow(c echo.Context) error {
	h, err := guarded(c, c.Param("id"), s.handoffIn)
	if err != nil {
		return err
	}
	r, err := s.review(c, h)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.ReviewPage(s.meta(c, "Review: "+r.Thread.Title), r))
}

// review gathers what the review screen shows of a handoff.
func (s *Server) review(c echo.Context, h *store.Handoff) (views.Review, error) {
	ctx := c.Request().Context()
	r := views.Review{Handoff: h, Editing: c.QueryParam("edit"), Items: s.reviewItems}
	if h.Status == store.HandoffFrozen {
		r.Editing = "" // frozen is read-only until "Edit a new draft"
	}
	r.Thread = &store.Thread{ID: h.ThreadID, WorkspaceID: h.WorkspaceID, Title: h.ThreadTitle}
	has, err := s.presence(c, h.ID) // only the lists that have rows
	if err != nil {
		return r, err
	}
	if has.Snapshots {
		if r.Snapshots, err = s.db.FindSnapshots(ctx, h.ID); err != nil {
			return r, err
		}
	}
	if has.Plans {
		if r.Plans, err = s.db.FindPlans(ctx, store.PlanFilter{HandoffID: h.ID, Limit: 20}); err != nil {
			return r, err
		}
	}
	if has.ExtractionRuns {
		if run, err := s.db.FindLatestExtractionRun(ctx, h.ID); err == nil {
			r.LastRun = run
		}
	}
	return r, nil
}

// formVersion is the handoff version a form was built from; 0 when the
// form does not say.
func formVersion(c echo.Context) int {
	v, _ := strconv.Atoi(c.FormValue("version"))
	return v
}

// editVersion is the version an edit of h is based on: the one its form or
// request names, else h's current one (the client edits what is there now,
// as it asked for no check).
func editVersion(v int, h *store.Handoff) int {
	if v == 0 {
		return h.Version
	}
	return v
}

// itemKind describes one of the review screen's three lists: how an item
// is shown and edited, and how a form maps onto the store's calls.
type itemKind struct {
	name   string // decisions, files, risks
	view   func(h *store.Handoff, id string) templ.Component
	edit   func(h *store.Handoff, id string, c echo.Context, conflict string) templ.Component
	create func(s *Server, c echo.Context, h *store.Handoff) (store.Change, error)
	update func(s *Server, c echo.Context, h *store.Handoff, id string, version int) (store.Change, error)
	delete func(s *Server, c echo.Context, h *store.Handoff, id string, version int) (store.Change, error)
}

func findDecision(h *store.Handoff, id string) *store.Decision {
	for _, d := range h.Decisions {
		if d.ID == id {
			return d
		}
	}
	return nil
}

func findFile(h *store.Handoff, id string) *store.FileRef {
	for _, f := range h.Files {
		if f.ID == id {
			return f
		}
	}
	return nil
}

func findRisk(h *store.Handoff, id string) *store.Risk {
	for _, r := range h.Risks {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// formField is a form value as an update field: forms post all their
// fields, so each is set.
func formField(c echo.Context, name string) *string {
	v := c.FormValue(name)
	return &v
}

// formLevel is formField for a relevance or severity.
func formLevel(c echo.Context, name string) *store.Level {
	l := store.Level(c.FormValue(name))
	return &l
}

// Adding overwrites nothing, so the create closures do not check the version.
var itemKinds = map[string]itemKind{
	"decisions": {
		name: "decisions",
		view: func(h *store.Handoff, id string) templ.Component {
			return views.DecisionItem(h, findDecision(h, id))
		},
		edit: func(h *store.Handoff, id string, c echo.Context, conflict string) templ.Component {
			d := findDecision(h, id)
			draft := d.Content
			if c != nil {
				draft = c.FormValue("content")
			}
			return views.DecisionEdit(views.DecisionEditProps{Handoff: h, Decision: d, Content: draft, Conflict: conflict})
		},
		create: func(s *Server, c echo.Context, h *store.Handoff) (store.Change, error) {
			_, ch, err := s.db.CreateDecision(c.Request().Context(), h.ID, store.DecisionCreate{Content: c.FormValue("content")}, 0)
			return ch, err
		},
		update: func(s *Server, c echo.Context, h *store.Handoff, id string, version int) (store.Change, error) {
			_, ch, err := s.db.UpdateDecision(c.Request().Context(), h.ID, id,
				store.DecisionUpdate{Content: formField(c, "content"), Version: version})
			return ch, err
		},
		delete: func(s *Server, c echo.Context, h *store.Handoff, id string, version int) (store.Change, error) {
			return s.db.DeleteDecision(c.Request().Context(), h.ID, id, version)
		},
	},
	"files": {
		name: "files",
		view: func(h *store.Handoff, id string) templ.Component {
			return views.FileItem(h, findFile(h, id))
		},
		edit: func(h *store.Handoff, id string, c echo.Context, conflict string) templ.Component {
			f := findFile(h, id)
			if c == nil {
				return views.FileEdit(views.FileEditProps{Handoff: h, File: f, Path: f.Path, Relevance: string(f.Relevance), Context: f.Context})
			}
			return views.FileEdit(views.FileEditProps{Handoff: h, File: f, Path: c.FormValue("path"), Relevance: c.FormValue("relevance"),
				Context: c.FormValue("context"), Conflict: conflict})
		},
		create: func(s *Server, c echo.Context, h *store.Handoff) (store.Change, error) {
			return s.db.CreateFileRef(c.Request().Context(), h.ID, store.FileRefInput{Path: c.FormValue("path"),
				Relevance: store.Level(c.FormValue("relevance")), Context: c.FormValue("context")}, 0)
		},
		update: func(s *Server, c echo.Context, h *store.Handoff, id string, version int) (store.Change, error) {
			_, ch, err := s.db.UpdateFileRef(c.Request().Context(), h.ID, id, store.FileRefUpdate{Path: formField(c, "path"),
				Relevance: formLevel(c, "relevance"), Context: formField(c, "context"), Version: version})
			return ch, err
		},
		delete: func(s *Server, c echo.Context, h *store.Handoff, id string, version int) (store.Change, error) {
			return s.db.DeleteFileRef(c.Request().Context(), h.ID, id, version)
		},
	},
	"risks": {
		name: "risks",
		view: func(h *store.Handoff, id string) templ.Component {
			return views.RiskItem(h, findRisk(h, id))
		},
		edit: func(h *store.Handoff, id string, c echo.Context, conflict string) templ.Component {
			r := findRisk(h, id)
			if c == nil {
				return views.RiskEdit(views.RiskEditProps{Handoff: h, Risk: r, Description: r.Description, Severity: string(r.Severity), Mitigation: r.Mitigation})
			}
			return views.RiskEdit(views.RiskEditProps{Handoff: h, Risk: r, Description: c.FormValue("description"), Severity: c.FormValue("severity"),
				Mitigation: c.FormValue("mitigation"), Conflict: conflict})
		},
		create: func(s *Server, c echo.Context, h *store.Handoff) (store.Change, error) {
			return s.db.CreateRisk(c.Request().Context(), h.ID, store.RiskInput{Description: c.FormValue("description"),
				Severity: store.Level(c.FormValue("severity")), Mitigation: c.FormValue("mitigation")}, 0)
		},
		update: func(s *Server, c echo.Context, h *store.Handoff, id string, version int) (store.Change, error) {
			_, ch, err := s.db.UpdateRisk(c.Request().Context(), h.ID, id, store.RiskUpdate{Description: formField(c, "description"),
				Severity: formLevel(c, "severity"), Mitigation: formField(c, "mitigation"), Version: version})
			return ch, err
		},
		delete: func(s *Server, c echo.Context, h *store.Handoff, id string, version int) (store.Change, error) {
			return s.db.DeleteRisk(c.Request().Context(), h.ID, id, version)
		},
	},
}

// reviewItem loads the handoff and checks the kind and item of a review route.
func (s *Server) reviewItem(c echo.Context) (*store.Handoff, itemKind, string, error) {
	kind, ok := itemKinds[c.Param("kind")]
	if !ok {
		return nil, kind, "", echo.NewHTTPError(http.StatusNotFound)
	}
	h, err := s.handoffIn(c, c.Param("id"))
	if err != nil {
		return nil, kind, "", err
	}
	id := c.Param("item")
	// The item must be of the route's kind: a decision's id under /files/ is not found.
	found := map[string]bool{"decisions": findDecision(h, id) != nil, "files": findFile(h, id) != nil, "risks": findRisk(h, id) != nil}
	if id != "" && !found[kind.name] {
		return nil, kind, "", fmt.Errorf("item %s: %w", id, store.ErrNotFound)
	}
	return h, kind, id, nil
}

// handleItemShow serves GET /h/:id/:kind/:item: one item in view mode (Cancel).
func (s *Server) handleItemShow(c echo.Context) error {
	h, kind, id, err := s.reviewItem(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, kind.view(h, id))
}

// handleItemEdit serves GET /h/:id/:kind/:item/edit: one item in edit mode.
func (s *Server) handleItemEdit(c echo.Context) error {
	h, kind, id, err := s.reviewItem(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, kind.edit(h, id, nil, ""))
}

// handleItemCreate serves POST /h/:id/:kind: add a decision, file or risk.
func (s *Server) handleItemCreate(c echo.Context) error {
	h, kind, _, err := s.reviewItem(c)
	if err != nil {
		return err
	}
	ch, err := kind.create(s, c, h)
	if err != nil {
		return err
	}
	return s.renderChange(c, kind, ch, http.StatusCreated)
}

// handleItemUpdate serves POST /h/:id/:kind/:item: save an edit. A stale
// edit gets 409 with the draft kept and the way to reload the item.
func (s *Server) handleItemUpdate(c echo.Context) error {
	h, kind, id, err := s.reviewItem(c)
	if err != nil {
		return err
	}
	ch, err := kind.update(s, c, h, id, editVersion(formVersion(c), h))
	if errors.Is(err, store.ErrStaleVersion) {
		msg := "Someone else changed this handoff since you opened it. Your draft is kept below: save to replace their version, or discard it and reload the item."
		if !isHTMX(c) {
			// The whole page, with the draft in place of the item.
			r, err := s.review(c, h)
			if err != nil {
				return err
			}
			r.Editing, r.Draft = id, kind.edit(h, id, c, msg)
			return s.render(c, http.StatusConflict, views.ReviewPage(s.meta(c, "Review: "+r.Thread.Title), r))
		}
		// The conflicting form carries the current version itself (app.js
		// keeps it): saving again overwrites knowingly, and nothing else on
		// the page is taken as up to date.
		return s.render(c, http.StatusConflict, kind.edit(h, id, c, msg))
	}
	if err != nil {
		return err
	}
	return s.renderChange(c, kind, ch, http.StatusOK)
}

// handleItemDelete serves POST /h/:id/:kind/:item/delete: remove for good.
func (s *Server) handleItemDelete(c echo.Context) error {
	h, kind, id, err := s.reviewItem(c)
	if err != nil {
		return err
	}
	ch, err := kind.delete(s, c, h, id, formVersion(c))
	if err != nil {
		return err
	}
	ch.ID = ""
	return s.renderChange(c, kind, ch, http.StatusOK)
}

// renderChange answers an edit: the item (none after a delete) and, out of
// band, the counts, version and footer. Plain forms are redirected.
func (s *Server) renderChange(c echo.Context, kind itemKind, ch store.Change, status int) error {
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, "/h/"+c.Param("id")+"#"+kind.name+"-h")
	}
	h, err := s.handoffIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	parts := []templ.Component{views.ReviewChanged(h)}
	if ch.ID != "" {
		parts = append([]templ.Component{kind.view(h, ch.ID)}, parts...)
	}
	return s.render(c, status, templ.Join(parts...))
}

// handleFreeze serves POST /h/:id/freeze ("Start planning"): an immutable
// snapshot of the handoff as it is now.
func (s *Server) handleFreeze(c echo.Context) error {
	sn, err := s.db.Freeze(c.Request().Context(), c.Param("id"), formVersion(c))
	if err != nil {
		if !isHTMX(c) && errors.Is(err, store.ErrStaleVersion) {
			s.setFlash(c, "Someone changed this handoff since you opened it. Review the current version, then start planning.")
			return c.Redirect(http.StatusSeeOther, "/h/"+c.Param("id"))
		}
		if !isHTMX(c) && errors.Is(err, store.ErrInvalid) {
			s.setFlash(c, errorMessage(err))
			return c.Redirect(http.StatusSeeOther, "/h/"+c.Param("id"))
		}
		return err
	}
	return s.afterFreeze(c, sn)
}
