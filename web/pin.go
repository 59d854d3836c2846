package web

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// pinMessage pins an assistant reply as a decision worded content, or,
// when content is blank, as the reply's first meaningful sentence in
// plain text: a decision is one sentence, not the whole reply.
func (s *Server) pinMessage(ctx context.Context, threadID, messageID, content string) (*store.Decision, bool, error) {
	if strings.TrimSpace(content) == "" {
		m, err := s.db.FindMessageByID(ctx, threadID, messageID)
		if err != nil {
			return nil, false, err
		}
		if m.Role != store.RoleAssistant || m.Status == store.StatusFailed || strings.TrimSpace(m.Content) == "" {
			return nil, false, store.Errorf(store.EINVALID, "Only an assistant reply with content can be pinned.")
		}
		content = views.FirstSentence(m.Content)
	}
	return s.db.PinMessageAs(ctx, threadID, messageID, content)
}

// pinRequest is the optional body of POST /api/v1/threads/:id/messages/:mid/pin.
type pinRequest struct {
	Content string `json:"content"`
}

// apiPinContent reads the optional {"content"} of an API pin; an empty
// body pins the reply's first sentence.
func apiPinContent(c echo.Context) (string, error) {
	if c.Request().ContentLength == 0 {
		return "", nil
	}
	var in pinRequest
	if err := bindJSON(c, &in); err != nil {
		return "", err
	}
	return in.Content, nil
}
