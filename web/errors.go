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

// Codes the web layer adds to store's: requests refused before they reach
// the domain, and outcomes of long runs. Like store's codes they appear as
// "code" in the JSON API's error bodies.
const (
	eBadJSON              = "bad_json"               // the body is not the JSON object expected
	eBadVersion           = "bad_version"            // If-Match is not a handoff version
	eCrossSite            = "cross_site"             // a browser sent an API request from another site
	eUnsupportedMediaType = "unsupported_media_type" // an API body that is not JSON
	eNotFailed            = "not_failed"             // a retry of a reply that did not fail
	eNotUserMessage       = "not_user_message"       // a reply asked for a message that is not the user's
	eCancelled            = "cancelled"              // the run was cancelled before it finished
	eExtractionFailed     = "extraction_failed"      // the model's extraction failed
	eBadQuery             = "bad_query"              // a query parameter that cannot be read
	eSummaryFailed        = "summary_failed"         // the model's thread-handoff summary failed
)

// errorStatuses maps each error code to its HTTP status: the one table for
// pages, htmx fragments and the JSON API. A code missing here is a 500.
var errorStatuses = map[string]int{
	store.ECONFLICT:       http.StatusConflict,
	store.EFORBIDDEN:      http.StatusForbidden,
	store.EINTERNAL:       http.StatusInternalServerError,
	store.EINVALID:        http.StatusUnprocessableEntity,
	store.ENOTFOUND:       http.StatusNotFound,
	store.ERATELIMITED:    http.StatusTooManyRequests,
	store.EUNAUTHORIZED:   http.StatusUnauthorized,
	eBadJSON:              http.StatusBadRequest,
	eBadVersion:           http.StatusBadRequest,
	eCrossSite:            http.StatusForbidden,
	eUnsupportedMediaType: http.StatusUnsupportedMediaType,
	eNotFailed:            http.StatusConflict,
	eNotUserMessage:       http.StatusUnprocessableEntity,
	eCancelled:            http.StatusConflict,
	eExtractionFailed:     http.StatusBadGateway,
	eBadQuery:             http.StatusBadRequest,
	eSummaryFailed:        http.StatusBadGateway,
}

// httpErrorCode gives the code of an *echo.HTTPError (a route not found, a
// body too large, a rate limit) by its status: store's code where one maps
// to that status in errorStatuses, so that a 404 is a not_found however it
// arose, else the status's name ("method_not_allowed").
func httpErrorCode(status int) string {
	for _, code := range []string{store.ECONFLICT, store.EFORBIDDEN, store.EINTERNAL, store.EINVALID,
		store.ENOTFOUND, store.ERATELIMITED, store.EUNAUTHORIZED} {
		if errorStatuses[code] == status {
			return code
		}
	}
	return strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
}

// errorResponse says what a person should see of err and with which
// status. An *store.Error keeps its code and message; an *echo.HTTPError
// keeps its status and gets a code; anything else is internal: a generic
// message, never its text.
func errorResponse(err error) (int, *store.Error) {
	var e *store.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &e):
		status, ok := errorStatuses[e.Code]
		if !ok {
			status = http.StatusInternalServerError
		}
		return status, e
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
		return he.Code, &store.Error{Code: httpErrorCode(he.Code), Message: msg}
	}
	return http.StatusInternalServerError, store.ErrInternal
}

// errorMessage is what a person is told about err.
func errorMessage(err error) string {
	_, e := errorResponse(err)
	return e.Message
}

// errorJSON is the JSON API's error body: {"error": {"code", "message"}}.
type errorJSON struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
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
	status, e := errorResponse(err)
	if status >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	var rerr error
	switch {
	case strings.HasPrefix(c.Request().URL.Path, "/api/"), c.Request().URL.Path == "/mcp":
		var body errorJSON
		body.Error.Code, body.Error.Message = e.Code, e.Message
		rerr = c.JSON(status, body)
	case isHTMX(c):
		c.Response().Header().Set("HX-Retarget", "#flash")
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		rerr = s.render(c, status, views.ErrorFlash(e.Message))
	default:
		rerr = s.render(c, status, views.ErrorPage(s.meta(c, http.StatusText(status)), status, e.Message))
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
	m := views.Meta{
		Title:    title,
		Provider: s.provider.Name(),
		Model:    s.provider.Model(),
		Flash:    s.popFlash(c),
		Assets:   s.assets,
	}
	if p := principalOf(c); p != nil && p.Session != nil {
		// The header's workspace switcher: as read with the session on a
		// page view, read again after a change (which may be to them). A
		// page renders without it rather than fail for it.
		if method := c.Request().Method; p.workspacesRead && (method == http.MethodGet || method == http.MethodHead) {
			m.Workspaces = p.Workspaces
			return m
		}
		ms, err := s.db.FindMemberships(c.Request().Context(), store.MembershipFilter{UserID: p.User.ID})
		if err != nil {
			s.log.Warn("header workspaces", "err", err)
		}
		m.Workspaces = ms
	}
	return m
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
