package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
)

// pageViewRoutes are the pages people load all day: the home page, a
// brainstorm, a review, a plan.
var pageViewRoutes = map[string]bool{"/": true, "/t/:id": true, "/h/:id": true, "/p/:id": true}

// detachPageViews runs the view of a page of pageViewRoutes on a context
// that does not end when the client goes away. A view is a dozen short
// reads and a render: letting them finish costs less than watching for the
// end, which database/sql and the SQLite driver do with two goroutines for
// every statement run on a cancellable context (a fifth of the page's CPU
// time). Writes, event streams and every other route keep the request's
// context; PostgreSQL's statement timeout still bounds every read.
func detachPageViews(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if r := c.Request(); r.Method == http.MethodGet && pageViewRoutes[c.Path()] {
			c.SetRequest(r.WithContext(context.WithoutCancel(r.Context())))
		}
		return next(c)
	}
}
