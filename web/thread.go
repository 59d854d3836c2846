package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// handleHome serves GET /: the workspace's brainstorms.
func (s *Server) handleHome(c echo.Context) error {
	ctx := c.Request().Context()
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	threads, err := s.db.FindThreads(ctx, store.ThreadFilter{WorkspaceID: ws})
	if err != nil {
		return err
	}
	handoffs, err := s.db.FindRecentHandoffs(ctx, ws, 10)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.HomePage(s.meta(c, "Brainstorms"), threads, handoffs))
}

// handleThreadCreate serves POST /threads and redirects to the new thread.
func (s *Server) handleThreadCreate(c echo.Context) error {
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	t, err := s.db.CreateThread(c.Request().Context(), store.ThreadCreate{Title: c.FormValue("title"), WorkspaceID: ws})
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+t.ID)
}

// handleThreadShow serves GET /t/:id: the brainstorm page. A user message
// still waiting for its reply is shown with a live stream for it.
func (s *Server) handleThreadShow(c echo.Context) error {
	ctx := c.Request().Context()
	page, err := guarded(c, c.Param("id"), s.threadPageIn)
	if err != nil {
		return err
	}
	t := page.thread
	mvs, err := s.threadMessages(ctx, t)
	if err != nil {
		return err
	}
	var pending *store.Message
	if n := len(mvs); n > 0 && mvs[n-1].Msg.Role == store.RoleUser {
		pending = mvs[n-1].Msg
	}
	ready := s.ready(t.ID, page.ready)
	handoffs, err := s.threadHandoffs(ctx, t)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.ThreadPage(s.meta(c, t.Title), t, mvs, pending, ready, handoffs))
}

// handleMessageCreate serves POST /t/:id/messages. The message is stored
// before any model call. With htmx it returns the message and a pending
// reply that streams over SSE; a plain form post waits for the whole reply
// and redirects back to the thread.
func (s *Server) handleMessageCreate(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.threadIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	if goal, apply, ok := parseHandoffCommand(c.FormValue("content")); ok {
		return s.startThreadHandoffFromPage(c, t, goal, apply)
	}
	user, err := s.db.CreateMessage(ctx, store.MessageCreate{ThreadID: t.ID, Role: store.RoleUser, Content: c.FormValue("content")})
	if err != nil {
		if !isHTMX(c) && errors.Is(err, store.ErrInvalid) {
			s.setFlash(c, errorMessage(err))
			return c.Redirect(http.StatusSeeOther, "/t/"+t.ID)
		}
		return err
	}
	if isHTMX(c) {
		return s.render(c, http.StatusCreated, views.SentMessage(s.messageView(user)))
	}
	if _, err := s.replyFor(ctx, user); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+t.ID+"#messages-end")
}

// handleReplyStream serves GET /t/:id/messages/:mid/reply: an event stream
// of the reply to user message :mid. "delta" events carry text as it
// arrives (a second tab, or a late one, gets the text so far first); one
// "done" event carries the stored message. If every client goes away the
// model call is cancelled and what arrived is stored as stopped.
//
// A GET is no proof of intent: it only starts a reply when Baton's own page
// asks (Sec-Fetch-Site: same-origin) for someone who may write. Anyone
// else may follow a reply being written, and is refused otherwise.
func (s *Server) handleReplyStream(c echo.Context) error {
	ctx := c.Request().Context()
	user, err := s.findUserMessage(c)
	if err != nil {
		return err
	}
	reply, err := s.findReply(ctx, user)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var j *job
	if reply == nil {
		if mayStartReply(c) {
			if j, err = s.startReply(ctx, user); err != nil {
				return err
			}
		} else if j = s.jobs.find(replyKey(user.ID)); j == nil {
			return errReplyNotStarted
		}
	}
	sse := startSSE(c)
	if j != nil {
		if !followJob(ctx, sse, j) {
			return nil // the client left
		}
		err := j.err
		if err == nil {
			reply, err = s.findReply(ctx, user)
		}
		if err != nil {
			s.log.Error("reply stream", "thread", user.ThreadID, "err", err)
			return sse.send("done", `<p class="flash error">The reply could not be saved. Reload the page to try again.</p>`)
		}
	}
	var buf bytes.Buffer
	if err := views.MessageItem(s.messageView(reply)).Render(ctx, &buf); err != nil {
		return err
	}
	return sse.send("done", buf.String())
}

var errReplyNotStarted = &store.Error{Code: store.EFORBIDDEN,
	Message: "This reply is not being written. Open the brainstorm in Baton and press Retry to start it."}

// mayStartReply reports whether a GET of a reply stream may start the
// reply: sent by Baton's own page, for an editor.
func mayStartReply(c echo.Context) bool {
	p := principalOf(c)
	return c.Request().Header.Get("Sec-Fetch-Site") == "same-origin" && p != nil && !p.ReadOnly()
}

// handleReplyStop serves POST /t/:id/messages/:mid/stop: it cancels the
// reply being written; the stream then ends with what arrived, marked stopped.
func (s *Server) handleReplyStop(c echo.Context) error {
	user, err := s.findUserMessage(c)
	if err != nil {
		return err
	}
	if j := s.jobs.find(replyKey(user.ID)); j != nil {
		j.stop(errStopped)
	}
	if isHTMX(c) {
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+user.ThreadID)
}

// handleReplyRetry serves POST /t/:id/messages/:mid/retry, where :mid is a
// failed reply: it is removed and the reply to the same user message is
// generated again. The user's message is not duplicated.
func (s *Server) handleReplyRetry(c echo.Context) error {
	ctx := c.Request().Context()
	threadID := c.Param("id")
	failed, err := s.db.FindMessageByID(ctx, threadID, c.Param("mid"))
	if err != nil {
		return err
	}
	if failed.Status != store.StatusFailed || failed.ReplyTo == "" {
		return &store.Error{Code: eNotFailed, Message: "Only a failed reply can be retried."}
	}
	if err := s.db.DeleteFailedReply(ctx, threadID, failed.ID); err != nil {
		return err
	}
	if isHTMX(c) {
		return s.render(c, http.StatusOK, views.PendingReply(views.PendingReplyProps{ThreadID: threadID, UserMessageID: failed.ReplyTo}))
	}
	user, err := s.db.FindMessageByID(ctx, threadID, failed.ReplyTo)
	if err != nil {
		return err
	}
	if _, err := s.replyFor(ctx, user); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+threadID+"#messages-end")
}

func (s *Server) findUserMessage(c echo.Context) (*store.Message, error) {
	m, err := s.db.FindMessageByID(c.Request().Context(), c.Param("id"), c.Param("mid"))
	if err != nil {
		return nil, err
	}
	if m.Role != store.RoleUser {
		return nil, &store.Error{Code: eNotUserMessage, Message: "Replies are generated for user messages only."}
	}
	return m, nil
}

func (s *Server) messageView(m *store.Message) views.MessageView {
	return views.MessageView{Msg: m, HTML: s.markdown.Render(m.Content)}
}

// threadMessages renders a thread's messages for its page. A stored
// message only changes when it is pinned or unpinned, so each rendered item
// is cached under its ID, pin, the CSRF token its forms carry and whether
// it has forms at all (both from ctx); the full rows are read only when an item is missing.
func (s *Server) threadMessages(ctx context.Context, t *store.Thread) ([]views.MessageView, error) {
	csrf := views.CSRF(ctx)
	heads, err := s.db.FindMessageHeadsOf(ctx, t)
	if err != nil {
		return nil, err
	}
	out := make([]views.MessageView, len(heads))
	// Read-only views (viewers) get items without their pin and retry forms.
	key := func(m *store.Message) string {
		return m.ID + "|" + strconv.FormatBool(m.Pinned) + "|" + csrf + "|" + strconv.FormatBool(views.CanEdit(ctx))
	}
	var missing bool
	for i, h := range heads {
		out[i].Msg = h
		out[i].Item, _ = s.items.Get(key(h))
		missing = missing || out[i].Item == ""
	}
	if !missing {
		return out, nil
	}
	msgs, err := s.db.FindMessages(ctx, store.MessageFilter{ThreadID: t.ID})
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*store.Message, len(msgs))
	for _, m := range msgs {
		byID[m.ID] = m
	}
	var buf bytes.Buffer
	for i := range out {
		m, ok := byID[out[i].Msg.ID]
		if !ok || out[i].Item != "" {
			continue // deleted since, or cached
		}
		mv := s.messageView(m)
		buf.Reset()
		if err := views.MessageItem(mv).Render(ctx, &buf); err != nil {
			return nil, err
		}
		mv.Item = buf.String()
		s.items.Put(key(m), mv.Item)
		out[i] = mv
	}
	return out, nil
}

// startSSE starts an event stream response. Streams may outlast the
// server's write timeout, so it is lifted for them.
func startSSE(c echo.Context) *sseWriter {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set(echo.HeaderCacheControl, "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	http.NewResponseController(w.Writer).SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	// A comment line, which browsers ignore, sends the headers at once:
	// the compression layer holds them back until there is a body, and
	// only then sees that the content type is not one it compresses.
	fmt.Fprint(w, ": stream\n\n")
	w.Flush()
	return &sseWriter{w: w}
}

// newlines normalises line endings: a lone \r would end an SSE line too.
var newlines = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// sseWriter writes server-sent events and flushes each one.
type sseWriter struct {
	w *echo.Response
}

// send writes one event. Multi-line data becomes several data lines, which
// the browser joins with newlines.
func (s *sseWriter) send(event, data string) error {
	var b strings.Builder
	b.Grow(len(data) + 32)
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteByte('\n')
	for line := range strings.SplitSeq(newlines.Replace(data), "\n") {
		b.WriteString("data: ")
		b.WriteString(strings.TrimSuffix(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	if _, err := fmt.Fprint(s.w, b.String()); err != nil {
		return err
	}
	s.w.Flush()
	return nil
}
