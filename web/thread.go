package web

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// handleHome serves GET /: the workspace's brainstorms.
func (s *Server) handleHome(c echo.Context) error {
	ctx := c.Request().Context()
	threads, err := s.db.FindThreads(ctx, store.ThreadFilter{})
	if err != nil {
		return err
	}
	handoffs, err := s.db.FindRecentHandoffs(ctx, "", 10)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.HomePage(s.meta(c, "Brainstorms"), threads, handoffs))
}

// handleThreadCreate serves POST /threads and redirects to the new thread.
func (s *Server) handleThreadCreate(c echo.Context) error {
	t, err := s.db.CreateThread(c.Request().Context(), store.ThreadCreate{Title: c.FormValue("title")})
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+t.ID)
}

// handleThreadShow serves GET /t/:id: the brainstorm page. A user message
// still waiting for its reply is shown with a live stream for it.
func (s *Server) handleThreadShow(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.db.FindThreadByID(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	msgs, err := s.db.FindMessages(ctx, store.MessageFilter{ThreadID: t.ID})
	if err != nil {
		return err
	}
	var pending *store.Message
	if n := len(msgs); n > 0 && msgs[n-1].Role == store.RoleUser {
		pending = msgs[n-1]
		msgs = msgs[:n-1]
	}
	mvs := s.messageViews(msgs)
	if pending != nil {
		// The pending message itself is shown; its reply streams after it.
		mvs = append(mvs, s.messageView(pending))
	}
	ready, err := s.readyState(c, t.ID)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.ThreadPage(s.meta(c, t.Title), t, mvs, pending, ready))
}

// handleMessageCreate serves POST /t/:id/messages. The message is stored
// before any model call. With htmx it returns the message and a pending
// reply that streams over SSE; a plain form post waits for the whole reply
// and redirects back to the thread.
func (s *Server) handleMessageCreate(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.db.FindThreadByID(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	user, err := s.db.CreateMessage(ctx, store.MessageCreate{ThreadID: t.ID, Role: store.RoleUser, Content: c.FormValue("content")})
	if err != nil {
		if !isHTMX(c) && errors.Is(err, store.ErrInvalid) {
			s.setFlash(c, errorStatus(err).Message)
			return c.Redirect(http.StatusSeeOther, "/t/"+t.ID)
		}
		return err
	}
	if isHTMX(c) {
		return s.render(c, http.StatusCreated, views.SentMessage(s.csrf(c), s.messageView(user)))
	}
	if _, err := s.replyFor(ctx, user, nil); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/t/"+t.ID+"#messages-end")
}

// handleReplyStream serves GET /t/:id/messages/:mid/reply: an event stream
// of the reply to user message :mid. "delta" events carry text as it
// arrives; one "done" event carries the stored message. If the client goes
// away the model call is cancelled and what arrived is stored as stopped.
func (s *Server) handleReplyStream(c echo.Context) error {
	ctx := c.Request().Context()
	user, err := s.findUserMessage(c)
	if err != nil {
		return err
	}
	sse := startSSE(c)
	reply, err := s.replyFor(ctx, user, func(text string) error {
		return sse.send("delta", html.EscapeString(text))
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil // the client left
		}
		s.log.Error("reply stream", "thread", user.ThreadID, "err", err)
		return sse.send("done", `<p class="flash error">The reply could not be saved. Reload the page to try again.</p>`)
	}
	var buf bytes.Buffer
	if err := views.MessageItem(s.csrf(c), s.messageView(reply)).Render(ctx, &buf); err != nil {
		return err
	}
	return sse.send("done", buf.String())
}

// handleReplyStop serves POST /t/:id/messages/:mid/stop: it cancels the
// reply being written; the stream then ends with what arrived, marked stopped.
func (s *Server) handleReplyStop(c echo.Context) error {
	user, err := s.findUserMessage(c)
	if err != nil {
		return err
	}
	s.replies.stop(user.ID, errStopped)
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
		return apiError(http.StatusConflict, "not_failed", "Only a failed reply can be retried.")
	}
	if err := s.db.DeleteFailedReply(ctx, threadID, failed.ID); err != nil {
		return err
	}
	if isHTMX(c) {
		return s.render(c, http.StatusOK, views.PendingReply(s.csrf(c), threadID, failed.ReplyTo))
	}
	user, err := s.db.FindMessageByID(ctx, threadID, failed.ReplyTo)
	if err != nil {
		return err
	}
	if _, err := s.replyFor(ctx, user, nil); err != nil {
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
		return nil, apiError(http.StatusUnprocessableEntity, "not_user_message", "Replies are generated for user messages only.")
	}
	return m, nil
}

func (s *Server) csrf(c echo.Context) string {
	token, _ := c.Get("csrf").(string)
	return token
}

func (s *Server) messageView(m *store.Message) views.MessageView {
	return views.MessageView{Msg: m, HTML: s.markdown.Render(m.Content)}
}

func (s *Server) messageViews(msgs []*store.Message) []views.MessageView {
	out := make([]views.MessageView, len(msgs))
	for i, m := range msgs {
		out[i] = s.messageView(m)
	}
	return out
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
	w.Flush()
	return &sseWriter{w: w}
}

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
	for line := range strings.SplitSeq(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data), "\n") {
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
