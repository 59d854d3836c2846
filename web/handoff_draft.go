package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// handleHandoffReopen serves POST /h/:id/draft ("Edit a new draft"): a
// frozen handoff becomes an editable draft again; what was frozen and
// planned stays. It redirects back to the review screen.
func (s *Server) handleHandoffReopen(c echo.Context) error {
	if _, err := s.db.ReopenHandoff(c.Request().Context(), c.Param("id"), formVersion(c)); err != nil {
		return err
	}
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", "/h/"+c.Param("id"))
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, "/h/"+c.Param("id"))
}
