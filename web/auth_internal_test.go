package web

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// authFixture is a real server with the bearer and session middleware
// installed on test routes, the way phase 2 installs them on every route.
type authFixture struct {
	t   testing.TB
	db  *store.DB
	srv *Server
	now time.Time
	ws  string
}

func newAuthFixture(tb testing.TB) *authFixture {
	tb.Helper()
	db := storetest.MustOpen(tb)
	f := &authFixture{t: tb, db: db, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), ws: db.DefaultWorkspaceID()}
	db.SetClock(func() time.Time { return f.now })
	f.srv = newTestServer(tb, Config{DB: db, Provider: offline.New(), Logger: slog.New(slog.DiscardHandler),
		SessionKey: []byte("0123456789abcdef0123456789abcdef"), Auth: AuthConfig{Clock: func() time.Time { return f.now }}})
	whoami := func(c echo.Context) error {
		p := principalOf(c)
		return c.JSON(http.StatusOK, map[string]any{"user": p.User.Email, "workspace": p.WorkspaceID, "role": p.Role, "readOnly": p.ReadOnly()})
	}
	api := f.srv.echo.Group("/api/v1/test", requireJSON, f.srv.requireToken)
	api.GET("/whoami", whoami)
	api.POST("/read-action", whoami, requireRole(store.RoleViewer))
	api.POST("/edit-action", whoami, requireRole(store.RoleEditor))
	api.POST("/owner-action", whoami, requireRole(store.RoleOwner))
	f.srv.echo.GET("/test/page", whoami, f.srv.requireSession, requireRole(store.RoleViewer))
	return f
}

func (f *authFixture) user(email string, role store.MemberRole) *store.User {
	f.t.Helper()
	ctx := context.Background()
	u, err := f.db.CreateUser(ctx, store.UserCreate{Email: email, Name: strings.Split(email, "@")[0], Password: "correct horse battery"})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.db.AddMember(ctx, f.ws, u.ID, role); err != nil {
		f.t.Fatal(err)
	}
	return u
}

func (f *authFixture) token(u *store.User, scope store.TokenScope, expires time.Time) (*store.Token, string) {
	f.t.Helper()
	tok, secret, err := f.db.CreateToken(context.Background(), store.TokenCreate{UserID: u.ID, WorkspaceID: f.ws, Name: "t", Scope: scope, ExpiresAt: expires})
	if err != nil {
		f.t.Fatal(err)
	}
	return tok, secret
}

// sessionCookie signs u in and returns the cookie a browser would send.
func (f *authFixture) sessionCookie(u *store.User) *http.Cookie {
	f.t.Helper()
	rec := httptest.NewRecorder()
	c := f.srv.echo.NewContext(httptest.NewRequest(http.MethodPost, "/login", nil), rec)
	if err := f.srv.startSession(c, u, ""); err != nil {
		f.t.Fatal(err)
	}
	return rec.Result().Cookies()[0]
}

func (f *authFixture) serve(method, path, bearer string, cookie *http.Cookie) (int, http.Header, string) {
	f.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Host = "localhost"
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, rec.Header(), string(body)
}

func TestRequireToken(t *testing.T) {
	f := newAuthFixture(t)
	ana := f.user("ana@example.com", store.RoleOwner)
	vic := f.user("vic@example.com", store.RoleViewer)
	_, anaRead := f.token(ana, store.ScopeRead, time.Time{})
	_, anaWrite := f.token(ana, store.ScopeWrite, time.Time{})
	_, vicWrite := f.token(vic, store.ScopeWrite, time.Time{})
	_, expiring := f.token(ana, store.ScopeWrite, f.now.Add(time.Hour))
	revokedTok, revoked := f.token(ana, store.ScopeWrite, time.Time{})
	if _, err := f.db.RevokeToken(context.Background(), revokedTok.ID, ""); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(2 * time.Hour) // expiring has expired

	tests := []struct {
		name     string
		method   string
		path     string
		bearer   string
		cookie   bool
		want     int
		wantCode string
		wantMsg  string
	}{
		{"no token", "GET", "/api/v1/test/whoami", "", false, 401, "unauthorized", "Authorization: Bearer"},
		{"session cookie is not enough", "GET", "/api/v1/test/whoami", "", true, 401, "unauthorized", ""},
		{"wrong token", "GET", "/api/v1/test/whoami", "baton_nope", false, 401, "unauthorized", "not valid"},
		{"revoked token", "GET", "/api/v1/test/whoami", revoked, false, 401, "unauthorized", "revoked"},
		{"expired token", "GET", "/api/v1/test/whoami", expiring, false, 401, "unauthorized", "expired"},
		{"read token reads", "GET", "/api/v1/test/whoami", anaRead, false, 200, "", ""},
		{"read token writes", "POST", "/api/v1/test/read-action", anaRead, false, 403, "forbidden", "read-only"},
		{"write token of an owner", "POST", "/api/v1/test/owner-action", anaWrite, false, 200, "", ""},
		{"viewer's write token on a viewer's action", "POST", "/api/v1/test/read-action", vicWrite, false, 200, "", ""},
		{"viewer's write token on an editor's action", "POST", "/api/v1/test/edit-action", vicWrite, false, 403, "forbidden", "viewer"},
	}
	cookie := f.sessionCookie(ana)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *http.Cookie
			if tt.cookie {
				c = cookie
			}
			status, header, body := f.serve(tt.method, tt.path, tt.bearer, c)
			if status != tt.want {
				t.Fatalf("status=%d, want %d\n%s", status, tt.want, body)
			}
			if tt.want == 200 {
				return
			}
			var got struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if got.Error.Code != tt.wantCode || !strings.Contains(got.Error.Message, tt.wantMsg) {
				t.Fatalf("error=%+v, want code %q saying %q", got.Error, tt.wantCode, tt.wantMsg)
			}
			if tt.want == 401 && !strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate=%q on a 401", header.Get("WWW-Authenticate"))
			}
		})
	}

	t.Run("principal", func(t *testing.T) {
		_, _, body := f.serve("GET", "/api/v1/test/whoami", anaRead, nil)
		want := `{"readOnly":true,"role":"owner","user":"ana@example.com","workspace":"` + f.ws + `"}`
		if strings.TrimSpace(body) != want {
			t.Fatalf("principal=%s, want %s", body, want)
		}
	})
	t.Run("last use recorded", func(t *testing.T) {
		tokens, _ := f.db.FindTokens(context.Background(), store.TokenFilter{UserID: ana.ID})
		for _, tok := range tokens {
			if tok.Scope == store.ScopeRead && !tok.LastUsedAt.Equal(f.now) {
				t.Fatalf("LastUsedAt=%v, want %v", tok.LastUsedAt, f.now)
			}
		}
	})
	t.Run("member removed", func(t *testing.T) {
		if err := f.db.RemoveMember(context.Background(), f.ws, vic.ID); err != nil {
			t.Fatal(err)
		}
		if status, _, body := f.serve("GET", "/api/v1/test/whoami", vicWrite, nil); status != 401 {
			t.Fatalf("removed member's token: status=%d, want 401\n%s", status, body)
		}
	})
}

func TestRequireSessionPrincipal(t *testing.T) {
	f := newAuthFixture(t)
	ana := f.user("ana@example.com", store.RoleEditor)
	status, _, body := f.serve("GET", "/test/page", "", f.sessionCookie(ana))
	want := `{"readOnly":false,"role":"editor","user":"ana@example.com","workspace":"` + f.ws + `"}`
	if status != 200 || strings.TrimSpace(body) != want {
		t.Fatalf("status=%d principal=%s, want %s", status, body, want)
	}
	// A bearer token does not sign a page request in.
	_, secret := f.token(ana, store.ScopeWrite, time.Time{})
	if status, _, _ := f.serve("GET", "/test/page", secret, nil); status != http.StatusSeeOther {
		t.Fatalf("page with a bearer token: status=%d, want 303 to /login", status)
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/t/1?x=2": "/t/1?x=2", "": "/", "//evil": "/", "/\\evil": "/", "https://evil": "/", "/logout": "/", "/login?next=/x": "/", "/a\r\nb": "/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q)=%q, want %q", in, got, want)
		}
	}
}

// BenchmarkAuthSession measures what the session middleware adds to a
// page request: cookie check, one indexed read, context. The session was
// seen less than a minute ago, so nothing is written (the common case).
func BenchmarkAuthSession(b *testing.B) {
	f := newAuthFixture(b)
	ana := f.user("ana@example.com", store.RoleEditor)
	cookie := f.sessionCookie(ana)
	benchAuth(b, f, f.srv.requireSession, func(r *http.Request) { r.AddCookie(cookie) })
}

// BenchmarkAuthToken measures what the bearer middleware adds to an API
// request: header, SHA-256, one indexed read, context.
func BenchmarkAuthToken(b *testing.B) {
	f := newAuthFixture(b)
	ana := f.user("ana@example.com", store.RoleEditor)
	_, secret := f.token(ana, store.ScopeWrite, time.Time{})
	// The first use records itself; the benchmark measures the others.
	benchAuth(b, f, f.srv.requireToken, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) })
}

func benchAuth(b *testing.B, f *authFixture, mw echo.MiddlewareFunc, prepare func(*http.Request)) {
	h := mw(func(c echo.Context) error {
		if principalOf(c) == nil {
			return echo.ErrUnauthorized
		}
		return nil
	})
	req := httptest.NewRequest(http.MethodGet, "/t/x", nil)
	prepare(req)
	rec := httptest.NewRecorder()
	if err := h(f.srv.echo.NewContext(req, rec)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		rec := httptest.NewRecorder()
		for pb.Next() {
			c := f.srv.echo.NewContext(req, rec)
			if err := h(c); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if cpu != 0 {
		// CPU time per request: what the check costs the server, which
		// wall time on a shared machine overstates.
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
}

// newTestServer is New(cfg) shut down when the test ends: on a shared
// database (PostgreSQL) a server runs listeners and heartbeats until then.
func newTestServer(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s := New(cfg)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Errorf("Shutdown: %v", err)
		}
	})
	return s
}
