package web

import (
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/views"
)

// csrfContextKey is where Echo's CSRF middleware leaves the token it issued
// for the request. Only withViewState reads it.
const csrfContextKey = "csrf"

// withViewState puts what views need to know about the request into its
// context, once per request: for now the CSRF token that Echo's CSRF
// middleware issued, so it must run after that middleware. Components read
// it with views.CSRF(ctx); handlers render with the request's context.
func withViewState(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		token, _ := c.Get(csrfContextKey).(string)
		r := c.Request()
		c.SetRequest(r.WithContext(views.WithRequestState(r.Context(), views.RequestState{CSRF: token})))
		return next(c)
	}
}
