package web

import (
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/views"
)

// csrfContextKey is where Echo's CSRF middleware leaves the token it issued
// for the request. Only withViewState reads it.
const csrfContextKey = "csrf"

// withViewState puts what views need to know about the request into its
// context, once per request: the CSRF token that Echo's CSRF middleware
// issued, and who is asking (the principal requireSession found), so it
// must run after both. Components read it with views.RequestStateFrom(ctx);
// handlers render with the request's context.
func withViewState(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		token, _ := c.Get(csrfContextKey).(string)
		st := views.RequestState{CSRF: token}
		if p := principalOf(c); p != nil {
			st.UserID, st.UserName = p.User.ID, p.User.Name
			st.WorkspaceID, st.WorkspaceName = p.WorkspaceID, p.WorkspaceName
			st.Role, st.ReadOnly = string(p.Role), p.ReadOnly()
		}
		r := c.Request()
		c.SetRequest(r.WithContext(views.WithRequestState(r.Context(), st)))
		return next(c)
	}
}
