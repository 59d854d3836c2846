package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// apiErr is an error with the status, code and message to show.
type apiErr struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *apiErr) Error() string { return e.Message }

func apiError(status int, code, message string) error {
	return &apiErr{Status: status, Code: code, Message: message}
}

// errorStatus maps any error to what a person should see. Unknown errors
// are internal: they get a generic message, never their text.
func errorStatus(err error) *apiErr {
	var ae *apiErr
	var he *echo.HTTPError
	var ve *store.ValidationError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ve):
		return &apiErr{http.StatusUnprocessableEntity, "invalid", ve.Message}
	case errors.Is(err, store.ErrInvalid):
		return &apiErr{http.StatusUnprocessableEntity, "invalid", "The request is not valid."}
	case errors.Is(err, store.ErrNotFound):
		return &apiErr{http.StatusNotFound, "not_found", "Not found: it may have been deleted, or the link is wrong."}
	case errors.Is(err, store.ErrConflict):
		return &apiErr{http.StatusConflict, "conflict", conflictMessage(err)}
	case errors.As(err, &he):
		msg, _ := he.Message.(string)
		switch he.Code {
		case http.StatusRequestEntityTooLarge:
			msg = "The request is too large: bodies can be at most 1 MiB, and a message at most 32 KiB."
		case http.StatusNotFound:
			msg = "Not found: the link may be wrong."
		case http.StatusMethodNotAllowed:
			msg = "That action is not available here."
		}
		if msg == "" {
			msg = http.StatusText(he.Code)
		}
		return &apiErr{he.Code, strings.ReplaceAll(strings.ToLower(http.StatusText(he.Code)), " ", "_"), msg}
	}
	return &apiErr{http.StatusInternalServerError, "internal", "Something went wrong on our side. It was logged; try again in a moment."}
}

func conflictMessage(err error) string {
	// Store conflict errors are written for people: "message X already has a reply: conflict".
	msg := strings.TrimSuffix(err.Error(), ": "+store.ErrConflict.Error())
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}

// handleError is Echo's one error handler: JSON for the API, a flash
// fragment for htmx, a full page otherwise.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
		return // the client went away: nobody to answer, nothing to log
	}
	e := errorStatus(err)
	if e.Status >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	var rerr error
	switch {
	case strings.HasPrefix(c.Request().URL.Path, "/api/"):
		rerr = c.JSON(e.Status, map[string]*apiErr{"error": e})
	case isHTMX(c):
		c.Response().Header().Set("HX-Retarget", "#flash")
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		rerr = s.render(c, e.Status, views.ErrorFlash(e.Message))
	default:
		rerr = s.render(c, e.Status, views.ErrorPage(s.meta(c, http.StatusText(e.Status)), e.Status, e.Message))
	}
	if rerr != nil {
		s.log.Warn("write error response", "err", rerr)
	}
}

func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// render writes a templ component as an HTML response. It renders into a
// buffer and writes once: templ flushes when it is done, and a flush makes
// the compressor end its block early, which costs CPU and bytes.
func (s *Server) render(c echo.Context, status int, comp templ.Component) error {
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	if err := comp.Render(c.Request().Context(), buf); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	if buf.Len() >= 1024 && acceptsGzip(c.Request()) {
		return s.writeGzip(c, status, buf.Bytes())
	}
	c.Response().WriteHeader(status)
	_, err := c.Response().Write(buf.Bytes())
	return err
}

var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// meta gathers what every full page needs.
func (s *Server) meta(c echo.Context, title string) views.Meta {
	token, _ := c.Get("csrf").(string)
	return views.Meta{
		Title:    title,
		CSRF:     token,
		Provider: s.provider.Name(),
		Model:    s.provider.Model(),
		Flash:    s.popFlash(c),
		Assets:   s.assets,
	}
}

const flashKey = "flash"

// setFlash keeps a message for the next page view (Post/Redirect/Get).
func (s *Server) setFlash(c echo.Context, msg string) {
	sess, _ := s.sessions.Get(c.Request(), "baton")
	sess.AddFlash(msg, flashKey)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		s.log.Warn("save session", "err", err)
	}
}

func (s *Server) popFlash(c echo.Context) string {
	if _, err := c.Request().Cookie("baton"); err != nil {
		return "" // no session cookie: nothing to pop, nothing to write
	}
	sess, err := s.sessions.Get(c.Request(), "baton")
	if err != nil {
		return ""
	}
	flashes := sess.Flashes(flashKey)
	if len(flashes) == 0 {
		return ""
	}
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		s.log.Warn("save session", "err", err)
	}
	msg, _ := flashes[0].(string)
	return msg
}
