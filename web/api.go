package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
)

// threadJSON is a thread in the JSON API.
type threadJSON struct {
	ID             string         `json:"id"`
	WorkspaceID    string         `json:"workspaceId"`
	ParentThreadID string         `json:"parentThreadId,omitempty"`
	Title          string         `json:"title"`
	CreatedAt      time.Time      `json:"createdAt"`
	UpdatedAt      time.Time      `json:"updatedAt"`
	Archived       bool           `json:"archived"`
	MessageCount   *int           `json:"messageCount,omitempty"`
	Messages       []*messageJSON `json:"messages,omitempty"`
	// Handoff and LastHandoff are the thread's handoff blocks (GET only).
	Handoff     *threadHandoffBlockJSON `json:"handoff,omitempty"`
	LastHandoff *threadHandoffBlockJSON `json:"lastHandoff,omitempty"`
}

func newThreadJSON(t *store.Thread) *threadJSON {
	return &threadJSON{ID: t.ID, WorkspaceID: t.WorkspaceID, ParentThreadID: t.ParentThreadID,
		Title: t.Title, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Archived: !t.ArchivedAt.IsZero()}
}

// messageJSON is a message in the JSON API.
type messageJSON struct {
	ID           string    `json:"id"`
	ThreadID     string    `json:"threadId"`
	Role         string    `json:"role"`
	Content      string    `json:"content"`
	Status       string    `json:"status"`
	Error        string    `json:"error,omitempty"`
	Model        string    `json:"model,omitempty"`
	InputTokens  int64     `json:"inputTokens"`
	OutputTokens int64     `json:"outputTokens"`
	ResponseID   string    `json:"responseId,omitempty"`
	ReplyTo      string    `json:"replyTo,omitempty"`
	Pinned       bool      `json:"pinned"`
	CreatedAt    time.Time `json:"createdAt"`
}

func newMessageJSON(m *store.Message) *messageJSON {
	return &messageJSON{ID: m.ID, ThreadID: m.ThreadID, Role: string(m.Role), Content: m.Content,
		Status: string(m.Status), Error: m.Error, Model: m.Model, InputTokens: m.InputTokens,
		OutputTokens: m.OutputTokens, ResponseID: m.ResponseID, ReplyTo: m.ReplyTo, Pinned: m.Pinned,
		CreatedAt: m.CreatedAt}
}

// bindJSON decodes a JSON body strictly: unknown fields and trailing data
// are errors a client should hear about.
func bindJSON(c echo.Context, v any) error {
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe), errors.Is(err, echo.ErrStatusRequestEntityTooLarge):
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
		case errors.Is(err, io.EOF):
			return &store.Error{Code: eBadJSON, Message: "The request body is empty; send a JSON object."}
		}
		return &store.Error{Code: eBadJSON, Message: "The request body is not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return &store.Error{Code: eBadJSON, Message: "The request body has data after the JSON object."}
	}
	return nil
}

// handleAPIThreadList serves GET /api/v1/threads.
func (s *Server) handleAPIThreadList(c echo.Context) error {
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	threads, err := s.db.FindThreads(c.Request().Context(), store.ThreadFilter{WorkspaceID: ws})
	if err != nil {
		return err
	}
	out := make([]*threadJSON, len(threads))
	for i, t := range threads {
		out[i] = newThreadJSON(t)
		out[i].MessageCount = &t.MessageCount
	}
	return c.JSON(http.StatusOK, map[string]any{"threads": out})
}

// handleAPIThreadCreate serves POST /api/v1/threads {"title"}.
func (s *Server) handleAPIThreadCreate(c echo.Context) error {
	var in struct {
		Title string `json:"title"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	t, err := s.db.CreateThread(c.Request().Context(), store.ThreadCreate{Title: in.Title, WorkspaceID: ws})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newThreadJSON(t))
}

// handleAPIThreadShow serves GET /api/v1/threads/:id: the thread with its messages.
func (s *Server) handleAPIThreadShow(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.threadIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	msgs, err := s.db.FindMessages(ctx, store.MessageFilter{ThreadID: t.ID})
	if err != nil {
		return err
	}
	out := newThreadJSON(t)
	if out.Handoff, out.LastHandoff, err = s.threadHandoffBlocks(ctx, t.ID); err != nil {
		return err
	}
	out.Messages = make([]*messageJSON, len(msgs))
	for i, m := range msgs {
		out.Messages[i] = newMessageJSON(m)
	}
	return c.JSON(http.StatusOK, out)
}

// handleAPIMessageCreate serves POST /api/v1/threads/:id/messages
// {"content"}: it stores the message, waits for the whole reply and returns
// both. A failed model call still returns 201 with the user's message
// stored and the assistant message marked failed, saying why.
func (s *Server) handleAPIMessageCreate(c echo.Context) error {
	ctx := c.Request().Context()
	var in struct {
		Content string `json:"content"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	t, err := s.threadIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	user, err := s.db.CreateMessage(ctx, store.MessageCreate{ThreadID: t.ID, Role: store.RoleUser, Content: in.Content})
	if err != nil {
		return err
	}
	reply, err := s.replyFor(ctx, user)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{
		"user_message":      newMessageJSON(user),
		"assistant_message": newMessageJSON(reply),
	})
}
