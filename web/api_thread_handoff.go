package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// threadHandoffBlockJSON is a thread's handoff block in the JSON API.
type threadHandoffBlockJSON struct {
	HandoffID       string     `json:"handoffId"`
	SourceThreadID  string     `json:"sourceThreadId"`
	ChildThreadID   string     `json:"childThreadId"`
	Pending         bool       `json:"pending"`
	CleanupRequired bool       `json:"cleanupRequired"`
	LastCleanupAt   *time.Time `json:"lastCleanupAt"`
}

func newThreadHandoffBlockJSON(h *store.ThreadHandoff) *threadHandoffBlockJSON {
	b := &threadHandoffBlockJSON{HandoffID: h.ID, SourceThreadID: h.ParentThreadID, ChildThreadID: h.ChildThreadID,
		Pending: h.Pending, CleanupRequired: h.CleanupRequired}
	if !h.LastCleanupAt.IsZero() {
		t := h.LastCleanupAt
		b.LastCleanupAt = &t
	}
	return b
}

// threadHandoffBlocks returns a thread's handoff blocks for the JSON API:
// handoff is the one it was started by, or else the last one out of it;
// last is the last one out of it (its history).
func (s *Server) threadHandoffBlocks(ctx context.Context, threadID string) (handoff, last *threadHandoffBlockJSON, err error) {
	if h, err := s.db.FindLastThreadHandoff(ctx, threadID); err == nil {
		last = newThreadHandoffBlockJSON(h)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	handoff = last
	if h, err := s.db.FindThreadHandoffByChild(ctx, threadID); err == nil {
		handoff = newThreadHandoffBlockJSON(h)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	return handoff, last, nil
}

// handleAPIThreadHandoffCreate serves POST /api/v1/threads/:id/thread-handoffs
// {"goal"?, "apply"?}: it summarises the thread and returns the preview,
// 201 {"id","summaryJson","summaryMd","selected","left"}. Nothing is
// stored until the preview is accepted (with "apply": true, at once; the
// answer then carries "childThreadId").
func (s *Server) handleAPIThreadHandoffCreate(c echo.Context) error {
	ctx := c.Request().Context()
	var in struct {
		Goal  string `json:"goal"`
		Apply bool   `json:"apply"`
	}
	if c.Request().ContentLength != 0 {
		if err := bindJSON(c, &in); err != nil {
			return err
		}
	}
	t, err := s.db.FindThreadByID(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if s.jobs.find(threadHandoffKey(t.ID)) != nil {
		return store.Errorf(store.ECONFLICT, "A handoff of this thread is being written already. Wait for it, or cancel it on the thread page.")
	}
	j, err := s.startThreadHandoff(ctx, t, in.Goal, in.Apply)
	if err != nil {
		return err
	}
	if err := j.wait(ctx); ctx.Err() != nil {
		return err
	}
	if err := s.threadHandoffJobError(j.err); err != nil {
		return err
	}
	d, err := s.drafts.get(j.ref)
	if err != nil {
		return err
	}
	out := map[string]any{"id": d.id, "summaryMd": d.md, "left": d.selection.LeftCount,
		"selected": selectedIDs(d), "summaryJson": draftSummaryJSON(d)}
	if in.Apply {
		h, err := s.db.FindThreadHandoffByID(ctx, d.id)
		if err != nil {
			return err
		}
		out["childThreadId"] = h.ChildThreadID
		out["summaryJson"] = json.RawMessage(h.SummaryJSON)
	}
	return c.JSON(http.StatusCreated, out)
}

// selectedIDs are the IDs of the messages a preview drew on, in order.
func selectedIDs(d *handoffDraft) []string {
	ids := make([]string, len(d.selection.Messages))
	for i, m := range d.selection.Messages {
		ids[i] = m.ID
	}
	return ids
}

// draftSummaryJSON is a preview's summary_json: the child is not known yet.
func draftSummaryJSON(d *handoffDraft) store.ThreadSummary {
	body := d.summary.Body
	if body == nil {
		body = []store.SummaryPoint{}
	}
	return store.ThreadSummary{SchemaVersion: store.ThreadSummarySchemaVersion, HandoffID: d.id, WorkspaceID: d.workspaceID, ParentThreadID: d.threadID,
		Title: d.summary.Title, Body: body, TLDR: d.summary.TLDR, Model: d.summary.Model,
		TokensUsed: d.summary.TokensUsed, CreatedAt: d.created.UTC()}
}

// handleAPIThreadHandoffAccept serves POST /api/v1/thread-handoffs/:id/accept
// {"title"?, "summaryMd"?}: 201 with the child thread the first time, 200
// with the same one after that.
func (s *Server) handleAPIThreadHandoffAccept(c echo.Context) error {
	ctx := c.Request().Context()
	var in struct {
		Title     *string `json:"title"`
		SummaryMD *string `json:"summaryMd"`
	}
	if c.Request().ContentLength != 0 {
		if err := bindJSON(c, &in); err != nil {
			return err
		}
	}
	if err := s.threadHandoffOfCaller(ctx, c.Param("id")); err != nil {
		return err
	}
	h, created, err := s.acceptThreadHandoff(ctx, "", c.Param("id"), in.Title, in.SummaryMD)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, map[string]any{
		"id": h.ID, "childThreadId": h.ChildThreadID, "parentThreadId": h.ParentThreadID, "title": h.Title,
		"summaryJson": json.RawMessage(h.SummaryJSON), "summaryMd": h.SummaryMD,
		"handoff": newThreadHandoffBlockJSON(h),
	})
}

// handleAPIThreadHandoffDecline serves POST /api/v1/thread-handoffs/:id/decline:
// 200, and nothing is written.
func (s *Server) handleAPIThreadHandoffDecline(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if err := s.threadHandoffOfCaller(ctx, id); err != nil {
		return err
	}
	threadID := ""
	if d, err := s.drafts.get(id); err == nil {
		threadID = d.threadID
	}
	if err := s.stopOrDecline(ctx, threadID, id); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"id": id, "status": "declined"})
}

// threadHandoffOfCaller checks that handoff (or preview) id is of a thread
// of the caller's workspace: these API routes name no thread, so no route
// guard does. Another workspace's answers as an unknown id does.
func (s *Server) threadHandoffOfCaller(ctx context.Context, id string) error {
	ws := views.RequestStateFrom(ctx).WorkspaceID
	if h, err := s.db.FindThreadHandoffByID(ctx, id); err == nil {
		if h.WorkspaceID != ws {
			return errUnknownThreadHandoff
		}
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if d, err := s.drafts.get(id); err == nil && d.workspaceID != ws {
		return errUnknownThreadHandoff
	}
	return nil // unknown: accept and decline say so
}

// errUnknownThreadHandoff is the answer for a handoff id of another workspace.
var errUnknownThreadHandoff = store.Errorf(store.ENOTFOUND, "This handoff preview has expired or never existed. Run /handoff again.")
