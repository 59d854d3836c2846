package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/mirror"
	"github.com/baton-dev/baton/views"
)

// This file is the thread handoff: /handoff in the composer (or the "Hand
// off" action) summarises a long thread as a job, the person previews,
// edits and accepts or declines, and accepting starts a child thread whose
// first reply sees the summary. The preview lives in memory only, so that
// declining writes nothing; what is accepted is stored (and queued for the
// mirror, if there is one).

// Mirror copies accepted handoffs to a central store (PostgreSQL):
// *mirror.Mirror.
type Mirror interface {
	// Kick asks the mirror to copy what waits, soon; it never blocks.
	Kick()
	// Status reports the mirror's state for /healthz.
	Status(ctx context.Context) mirror.Status
}

// Limits of the in-memory previews.
const (
	draftTTL       = time.Hour
	maxDrafts      = 256
	maxGoalChars   = 500
	leftExcerpt    = 120
	handoffJobKind = "thread-handoff"
)

// draftState is where a preview stands.
type draftState int

const (
	draftReady    draftState = iota // summarised, waiting for the person
	draftDeclined                   // declined: it can no longer be accepted
	draftAccepted                   // accepted: the child exists
)

// handoffDraft is a summarised, not yet accepted handoff.
type handoffDraft struct {
	id, threadID, workspaceID string
	selection                 agent.Selection
	summary                   *agent.Summary
	md                        string
	cut                       bool
	created                   time.Time

	mu    sync.Mutex // held through accept and decline
	state draftState
	child string
}

// handoffDrafts holds previews in memory for draftTTL, at most maxDrafts.
type handoffDrafts struct {
	mu   sync.Mutex
	byID map[string]*handoffDraft
}

func newHandoffDrafts() *handoffDrafts { return &handoffDrafts{byID: map[string]*handoffDraft{}} }

// put keeps d, dropping expired previews and, over the limit, the oldest.
func (ds *handoffDrafts) put(d *handoffDraft) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	var oldest *handoffDraft
	for id, x := range ds.byID {
		if time.Since(x.created) > draftTTL {
			delete(ds.byID, id)
		} else if oldest == nil || x.created.Before(oldest.created) {
			oldest = x
		}
	}
	if len(ds.byID) >= maxDrafts && oldest != nil {
		delete(ds.byID, oldest.id)
	}
	ds.byID[d.id] = d
}

// get returns the preview id names, or ENOTFOUND.
func (ds *handoffDrafts) get(id string) (*handoffDraft, error) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	d := ds.byID[id]
	if d == nil || time.Since(d.created) > draftTTL {
		return nil, store.Errorf(store.ENOTFOUND, "This handoff preview has expired or never existed. Run /handoff again.")
	}
	return d, nil
}

// threadHandoffKey names the job that summarises a thread: one at a time.
func threadHandoffKey(threadID string) string { return "thread-handoff:" + threadID }

// parseHandoffCommand reads "/handoff [--apply] [goal]" from what a person
// typed in the composer; ok is false for anything else.
func parseHandoffCommand(content string) (goal string, apply, ok bool) {
	fields := strings.Fields(content)
	if len(fields) == 0 || fields[0] != "/handoff" {
		return "", false, false
	}
	var rest []string
	for _, f := range fields[1:] {
		if f == "--apply" {
			apply = true
			continue
		}
		rest = append(rest, f)
	}
	return strings.Join(rest, " "), apply, true
}

// startThreadHandoff starts summarising thread t, or returns the
// summariser already running for it. It refuses a thread with nothing to
// hand off and a goal that is too long. Nothing is written: the preview
// is kept in memory under the job's ref, the handoff's ID.
func (s *Server) startThreadHandoff(ctx context.Context, t *store.Thread, goal string, apply bool) (*job, error) {
	goal = strings.Join(strings.Fields(goal), " ")
	if n := utf8.RuneCountInString(goal); n > maxGoalChars {
		return nil, store.Errorf(store.EINVALID, "The goal is %d characters long; keep it to %d.", n, maxGoalChars)
	}
	msgs, err := s.db.FindMessages(ctx, store.MessageFilter{ThreadID: t.ID})
	if err != nil {
		return nil, err
	}
	if !hasContent(msgs) {
		return nil, store.Errorf(store.EINVALID, "This thread has no messages yet, so there is nothing to hand off. Say what you want to build first.")
	}
	j, _, err := s.jobs.start(ctx, jobSpec{key: threadHandoffKey(t.ID), kind: handoffJobKind, orphan: graceOrphan,
		setup: func(context.Context) (string, error) { return uuid.Must(uuid.NewV7()).String(), nil },
		run: func(ctx context.Context, j *job) error {
			return s.summariseThread(ctx, j, t, msgs, goal, apply)
		}})
	return j, err
}

// hasContent reports whether msgs hold anything a summary could draw on.
func hasContent(msgs []*store.Message) bool {
	for _, m := range msgs {
		if m.Status != store.StatusFailed && strings.TrimSpace(m.Content) != "" {
			return true
		}
	}
	return false
}

// summariseThread is the job of a handoff: select, summarise, keep the
// preview (and accept it at once for --apply). Each step logs one line
// with the handoff's ID.
func (s *Server) summariseThread(ctx context.Context, j *job, t *store.Thread, msgs []*store.Message, goal string, apply bool) error {
	id := j.ref
	j.emit("progress", "Selecting messages…")
	sel := agent.SelectForHandoff(msgs, goal)
	s.log.Info("thread handoff: selected", "handoff_id", id, "thread", t.ID,
		"selected", len(sel.Messages), "left", sel.LeftCount, "tokens", sel.Tokens)

	j.emit("progress", fmt.Sprintf("Summarising %d messages…", len(sel.Messages)))
	start := time.Now()
	sum, err := s.summariser.Summarise(ctx, agent.SummaryInput{ThreadTitle: t.Title, Goal: goal, Selection: sel})
	if err != nil {
		if ctx.Err() != nil {
			s.log.Info("thread handoff: cancelled", "handoff_id", id, "cause", context.Cause(ctx))
			return context.Cause(ctx)
		}
		s.log.Warn("thread handoff: summary failed", "handoff_id", id, "provider", s.provider.Name(), "err", err)
		return err
	}
	if ctx.Err() != nil { // stopped or declined while the rules ran
		return context.Cause(ctx)
	}
	md, cut := agent.SummaryMarkdown(sum)
	if cut {
		s.log.Warn("thread handoff: summary over 1,000 characters was cut", "handoff_id", id, "model", sum.Model)
	}
	s.log.Info("thread handoff: summarised", "handoff_id", id, "model", sum.Model, "model_run_id", sum.ResponseID,
		"tokens_used", sum.TokensUsed, "points", len(sum.Body), "duration", time.Since(start))
	d := &handoffDraft{id: id, threadID: t.ID, workspaceID: t.WorkspaceID, selection: sel,
		summary: sum, md: md, cut: cut, created: time.Now()}
	s.drafts.put(d)
	if apply {
		if _, _, err := s.acceptThreadHandoff(context.WithoutCancel(ctx), t.ID, id, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// errOtherThread refuses a handoff asked for under another thread's URL.
var errOtherThread = store.Errorf(store.ENOTFOUND, "This handoff belongs to another thread. Open it from its own thread.")

// acceptThreadHandoff accepts the preview id of thread threadID ("" for
// whichever thread it is of), with the person's title and summary when
// given, and returns the stored handoff; created is false when it had been
// accepted already (a double click, a second tab), which returns the same
// child. Accepting a declined or unknown preview is an error that changes
// nothing.
func (s *Server) acceptThreadHandoff(ctx context.Context, threadID, id string, title, summaryMD *string) (*store.ThreadHandoff, bool, error) {
	if h, err := s.db.FindThreadHandoffByID(ctx, id); err == nil {
		if threadID != "" && h.ParentThreadID != threadID {
			return nil, false, errOtherThread
		}
		return h, false, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, false, err
	}
	d, err := s.drafts.get(id)
	if err != nil {
		return nil, false, err
	}
	if threadID != "" && d.threadID != threadID {
		return nil, false, errOtherThread
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == draftDeclined {
		return nil, false, store.Errorf(store.ECONFLICT, "This handoff was declined, so it cannot be accepted. Run /handoff again for a new one.")
	}
	in := store.ThreadHandoffAccept{ID: id, ParentThreadID: d.threadID, SummaryMD: d.md, ResponseID: d.summary.ResponseID,
		Mirror: s.mirror != nil,
		Summary: store.ThreadSummary{Title: d.summary.Title, Body: d.summary.Body, TLDR: d.summary.TLDR,
			Model: d.summary.Model, TokensUsed: d.summary.TokensUsed}}
	if title != nil {
		in.Summary.Title = *title
	}
	if summaryMD != nil {
		in.SummaryMD = *summaryMD
	}
	h, created, err := s.db.AcceptThreadHandoff(ctx, in)
	if err != nil {
		return nil, false, err
	}
	d.state, d.child = draftAccepted, h.ChildThreadID
	if created {
		s.log.Info("thread handoff: accepted", "handoff_id", h.ID, "parent_thread", h.ParentThreadID,
			"child_thread", h.ChildThreadID, "model", h.Model, "model_run_id", h.ResponseID, "tokens_used", h.TokensUsed,
			"edited", in.SummaryMD != d.md)
		if s.mirror != nil {
			s.mirror.Kick()
		}
	}
	return h, created, nil
}

// declineThreadHandoff declines the preview id of thread threadID ("" for
// whichever thread it is of): it writes nothing and the preview can no
// longer be accepted. Declining an accepted handoff is an error; declining
// twice is not.
func (s *Server) declineThreadHandoff(ctx context.Context, threadID, id string) error {
	if h, err := s.db.FindThreadHandoffByID(ctx, id); err == nil {
		if threadID != "" && h.ParentThreadID != threadID {
			return errOtherThread
		}
		return store.Errorf(store.ECONFLICT, "This handoff was accepted already; it continues in thread %s.", h.ChildThreadID)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	d, err := s.drafts.get(id)
	if err != nil {
		return err
	}
	if threadID != "" && d.threadID != threadID {
		return errOtherThread
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == draftAccepted {
		return store.Errorf(store.ECONFLICT, "This handoff was accepted already; it continues in thread %s.", d.child)
	}
	if d.state != draftDeclined {
		d.state = draftDeclined
		s.log.Info("thread handoff: declined", "handoff_id", id, "thread", d.threadID)
	}
	return nil
}

// stopOrDecline declines handoff id of a thread: a summary still being
// written is stopped (and never kept), a preview is declined.
func (s *Server) stopOrDecline(ctx context.Context, threadID, id string) error {
	if j := s.jobs.find(threadHandoffKey(threadID)); j != nil && j.ref == id {
		j.stop(errStopped)
		j.wait(ctx)
		if _, err := s.drafts.get(id); err != nil {
			s.log.Info("thread handoff: declined while summarising", "handoff_id", id, "thread", threadID)
			return nil
		}
	}
	return s.declineThreadHandoff(ctx, threadID, id)
}

// threadHandoffJobError turns how a handoff job failed into what people read.
func (s *Server) threadHandoffJobError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errStopped), errors.Is(err, errLeft), errors.Is(err, errShutdown), errors.Is(err, context.Canceled):
		return &store.Error{Code: eCancelled, Message: "The handoff was cancelled. Run /handoff again."}
	case store.ErrorCode(err) != store.EINTERNAL:
		return err
	}
	return &store.Error{Code: eSummaryFailed, Message: "The summary could not be written. " + modelFailure(s.provider, err)}
}

// pendingThreadSummary returns the handoff whose summary the next reply
// in a thread must carry, or nil.
func (s *Server) pendingThreadSummary(ctx context.Context, threadID string) *store.ThreadHandoff {
	h, err := s.db.FindPendingThreadSummary(ctx, threadID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("thread handoff: read pending summary", "thread", threadID, "err", err)
		}
		return nil
	}
	return h
}

// cleanupThreadHandoff clears a child's handoff block after its first
// complete reply, once, and logs the step.
func (s *Server) cleanupThreadHandoff(ctx context.Context, h *store.ThreadHandoff, reply *store.Message) {
	cleared, err := s.db.CleanupThreadHandoff(ctx, h.ChildThreadID)
	if err != nil {
		s.log.Warn("thread handoff: cleanup", "handoff_id", h.ID, "err", err)
		return
	}
	if cleared {
		s.log.Info("thread handoff: summary delivered and cleared", "handoff_id", h.ID, "child_thread", h.ChildThreadID,
			"model_run_id", reply.ResponseID, "tokens_used", reply.InputTokens+reply.OutputTokens)
	}
}

// threadHandoffs gathers what a thread page shows of its handoffs.
func (s *Server) threadHandoffs(ctx context.Context, t *store.Thread) (views.ThreadHandoffs, error) {
	hs, err := s.db.FindThreadHandoffsOf(ctx, t.ID)
	if err != nil {
		return views.ThreadHandoffs{}, err
	}
	out := views.ThreadHandoffs{In: hs.In, ParentTitle: hs.ParentTitle, Out: hs.Out, ChildTitle: hs.ChildTitle}
	if hs.In != nil {
		out.InHTML = s.markdown.Render(hs.In.SummaryMD)
	}
	if hs.Out != nil && out.ChildTitle == "" {
		out.ChildTitle = hs.Out.Title // the thread it started was deleted
	}
	return out, nil
}

// preview is what the panel shows of the handoff a job summarised: its
// preview, or how the job failed.
func (s *Server) preview(ctx context.Context, threadID, id string) views.ThreadHandoffPreview {
	p := views.ThreadHandoffPreview{ThreadID: threadID, HandoffID: id}
	if j := s.jobs.find(threadHandoffKey(threadID)); j != nil && j.ref == id {
		p.Running = true
		return p
	}
	if h, err := s.db.FindThreadHandoffByID(ctx, id); err == nil {
		p.Redirect = "/t/" + h.ChildThreadID
		return p
	}
	d, err := s.drafts.get(id)
	if err != nil {
		p.Error = errorMessage(err)
		return p
	}
	d.mu.Lock()
	state := d.state
	d.mu.Unlock()
	if state == draftDeclined {
		p.Error = "This handoff was declined. Run /handoff again for a new one."
		return p
	}
	pos := map[string]int{}
	msgs, _ := s.db.FindMessageHeads(ctx, threadID)
	for i, m := range msgs {
		pos[m.ID] = i + 1
	}
	p.Title, p.SummaryMD, p.Cut = d.summary.Title, d.md, d.cut
	p.Model, p.ResponseID, p.TokensUsed = d.summary.Model, d.summary.ResponseID, d.summary.TokensUsed
	p.Selected, p.LeftCount = len(d.selection.Messages), d.selection.LeftCount
	for _, pt := range d.summary.Body {
		hp := views.HandoffPoint{Kind: pt.Kind, Text: pt.Text}
		for _, id := range pt.Sources {
			hp.Sources = append(hp.Sources, views.HandoffSource{ID: id, N: pos[id]})
		}
		p.Points = append(p.Points, hp)
	}
	for _, m := range d.selection.Left {
		p.Left = append(p.Left, views.HandoffSource{ID: m.ID, N: pos[m.ID], Role: m.Role,
			Excerpt: excerpt(m.Content, leftExcerpt)})
	}
	return p
}

// excerpt is the start of s on one line, at most n characters.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// handleThreadHandoffStart serves POST /t/:id/handoff {goal, apply}: the
// "Hand off" action. See startThreadHandoffFromPage.
func (s *Server) handleThreadHandoffStart(c echo.Context) error {
	t, err := s.db.FindThreadByID(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return s.startThreadHandoffFromPage(c, t, c.FormValue("goal"), c.FormValue("apply") != "")
}

// startThreadHandoffFromPage starts a handoff from the thread page (its
// action or the composer's /handoff). With htmx it answers with the panel,
// which follows the job and becomes the preview; without, it waits for
// the summary and redirects to the preview's page (or, for --apply, to the
// child thread).
func (s *Server) startThreadHandoffFromPage(c echo.Context, t *store.Thread, goal string, apply bool) error {
	ctx := c.Request().Context()
	j, err := s.startThreadHandoff(ctx, t, goal, apply)
	if err != nil {
		if !isHTMX(c) && store.ErrorCode(err) == store.EINVALID {
			s.setFlash(c, errorMessage(err))
			return c.Redirect(http.StatusSeeOther, "/t/"+t.ID)
		}
		return err
	}
	if !isHTMX(c) {
		if err := j.wait(ctx); ctx.Err() != nil {
			return err
		}
		if h, err := s.db.FindThreadHandoffByID(ctx, j.ref); err == nil {
			return c.Redirect(http.StatusSeeOther, "/t/"+h.ChildThreadID)
		}
		return c.Redirect(http.StatusSeeOther, "/t/"+t.ID+"/handoffs/"+j.ref)
	}
	c.Response().Header().Set("HX-Retarget", "#handoff-slot")
	c.Response().Header().Set("HX-Reswap", "innerHTML")
	return s.render(c, http.StatusAccepted, views.ThreadHandoffPanel(views.ThreadHandoffPreview{
		ThreadID: t.ID, HandoffID: j.ref, Running: true}))
}

// handleThreadHandoffShow serves GET /t/:id/handoffs/:hid: the handoff's
// panel on a page of its own.
func (s *Server) handleThreadHandoffShow(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.db.FindThreadByID(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	p := s.preview(ctx, t.ID, c.Param("hid"))
	return s.render(c, http.StatusOK, views.ThreadHandoffPage(s.meta(c, "Hand off: "+t.Title), t, p))
}

// handleThreadHandoffEvents serves GET /t/:id/handoffs/:hid/events:
// "progress" events while the summary is written, then one "done" event
// with the panel in its final state (the preview, or the failure).
func (s *Server) handleThreadHandoffEvents(c echo.Context) error {
	ctx := c.Request().Context()
	threadID, id := c.Param("id"), c.Param("hid")
	if _, err := s.db.FindThreadByID(ctx, threadID); err != nil {
		return err
	}
	sse := startSSE(c)
	var jobErr error
	if j := s.jobs.find(threadHandoffKey(threadID)); j != nil && j.ref == id {
		if !followJob(ctx, sse, j) {
			return nil // the client left
		}
		jobErr = j.err
	}
	p := s.preview(ctx, threadID, id)
	if jobErr != nil {
		p = views.ThreadHandoffPreview{ThreadID: threadID, HandoffID: id, Error: errorMessage(s.threadHandoffJobError(jobErr))}
	}
	var buf bytes.Buffer
	if err := views.ThreadHandoffPanel(p).Render(ctx, &buf); err != nil {
		return err
	}
	return sse.send("done", buf.String())
}

// handleThreadHandoffCancel serves POST /t/:id/handoffs/:hid/cancel.
func (s *Server) handleThreadHandoffCancel(c echo.Context) error {
	if j := s.jobs.find(threadHandoffKey(c.Param("id"))); j != nil && j.ref == c.Param("hid") {
		j.stop(errStopped)
	}
	if isHTMX(c) {
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+c.Param("id"))
}

// handleThreadHandoffAccept serves POST /t/:id/handoffs/:hid/accept
// {title, summary_md}: the child thread is created (once) and opened.
func (s *Server) handleThreadHandoffAccept(c echo.Context) error {
	ctx := c.Request().Context()
	var title, md *string
	if v, ok := formValue(c, "title"); ok {
		title = &v
	}
	if v, ok := formValue(c, "summary_md"); ok {
		md = &v
	}
	h, _, err := s.acceptThreadHandoff(ctx, c.Param("id"), c.Param("hid"), title, md)
	if err != nil {
		return err
	}
	if isHTMX(c) {
		return s.render(c, http.StatusOK, views.ThreadHandoffPanel(views.ThreadHandoffPreview{
			ThreadID: h.ParentThreadID, HandoffID: h.ID, Redirect: "/t/" + h.ChildThreadID}))
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+h.ChildThreadID)
}

// formValue returns a form field and whether the form had it at all.
func formValue(c echo.Context, name string) (string, bool) {
	if err := c.Request().ParseForm(); err != nil {
		return "", false
	}
	_, ok := c.Request().PostForm[name]
	return c.Request().PostForm.Get(name), ok
}

// handleThreadHandoffDecline serves POST /t/:id/handoffs/:hid/decline:
// nothing is written, and the panel goes away.
func (s *Server) handleThreadHandoffDecline(c echo.Context) error {
	if err := s.stopOrDecline(c.Request().Context(), c.Param("id"), c.Param("hid")); err != nil {
		return err
	}
	if isHTMX(c) {
		return c.HTML(http.StatusOK, `<p id="handoff-panel" class="muted" role="status" data-testid="handoff-declined">Handoff declined. Nothing was saved.</p>`)
	}
	s.setFlash(c, "Handoff declined. Nothing was saved.")
	return c.Redirect(http.StatusSeeOther, "/t/"+c.Param("id"))
}
