package web

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/baton-dev/baton/views"
)

// TestWithViewState checks that the token a component reads from the
// request's context is the one Echo's CSRF middleware issued (and set as the
// cookie), and that without withViewState a form carries no token.
func TestWithViewState(t *testing.T) {
	tests := []struct {
		name      string
		viewState bool
	}{
		{name: "with view state", viewState: true},
		{name: "without view state", viewState: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mw := []echo.MiddlewareFunc{middleware.CSRFWithConfig(middleware.CSRFConfig{ContextKey: csrfContextKey, CookieName: "baton_csrf"})}
			if tt.viewState {
				mw = append(mw, withViewState)
			}
			var read string
			var field bytes.Buffer
			e := echo.New()
			e.GET("/", func(c echo.Context) error {
				ctx := c.Request().Context()
				read = views.CSRF(ctx)
				return views.CSRFField().Render(ctx, &field)
			}, mw...)
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))

			var issued string
			for _, c := range rec.Result().Cookies() {
				if c.Name == "baton_csrf" {
					issued = c.Value
				}
			}
			if issued == "" {
				t.Fatal("Echo's CSRF middleware set no baton_csrf cookie")
			}
			want := ""
			if tt.viewState {
				want = issued
			}
			if read != want {
				t.Fatalf("views.CSRF(ctx)=%q, want %q", read, want)
			}
			if got, want := field.String(), `<input type="hidden" name="_csrf" value="`+want+`">`; got != want {
				t.Fatalf("CSRFField=%s, want %s", got, want)
			}
		})
	}
}
