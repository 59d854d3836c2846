package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// AuthConfig configures accounts and sign-in sessions.
type AuthConfig struct {
	// SetupCode, when set, must be typed on /setup before the first
	// account is made. Set it (and print it in the log) when Baton listens
	// on an address other machines can reach, so that the first stranger
	// to find the page cannot take the instance.
	SetupCode string
	// SessionIdle ends a session not used for this long; 7 days when zero.
	SessionIdle time.Duration
	// SessionLifetime ends a session this long after sign-in, however
	// active; 30 days when zero.
	SessionLifetime time.Duration
	// SecureCookies marks the session cookie Secure and names it with the
	// __Host- prefix. Set it when Baton is served over TLS, directly or
	// through a proxy (BATON_PUBLIC_URL is https).
	SecureCookies bool
	// Clock returns the time; time.Now when nil. Tests set it together
	// with store.DB.SetClock.
	Clock func() time.Time
}

// Session defaults.
const (
	DefaultSessionIdle     = 7 * 24 * time.Hour
	DefaultSessionLifetime = 30 * 24 * time.Hour
)

// touchEvery is how stale a session's or token's last use may be before
// a request records it: a write per request would cost more than the
// whole authentication.
const touchEvery = time.Minute

// sessionSecretKey is the one value in the session cookie: the secret
// whose SHA-256 names the server-side session record.
const sessionSecretKey = "sid"

// auth holds what authentication needs; it is set once in New.
type auth struct {
	cfg        AuthConfig
	cookies    *sessions.CookieStore
	cookieName string
	// setUp turns true once an account exists, and never turns back: until
	// then every page leads to /setup.
	setUp atomic.Bool
}

func newAuth(cfg AuthConfig, key []byte) *auth {
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = DefaultSessionIdle
	}
	if cfg.SessionLifetime <= 0 {
		cfg.SessionLifetime = DefaultSessionLifetime
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	a := &auth{cfg: cfg, cookies: sessions.NewCookieStore(key), cookieName: "baton_session"}
	a.cookies.Options = &sessions.Options{Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: cfg.SecureCookies}
	a.cookies.MaxAge(int(cfg.SessionLifetime / time.Second))
	for _, codec := range a.cookies.Codecs {
		if sc, ok := codec.(*securecookie.SecureCookie); ok {
			sc.SetSerializer(sidSerializer{})
		}
	}
	if cfg.SecureCookies {
		// __Host-: Secure, Path=/ and no Domain, so that no other host or
		// path can plant or read it.
		a.cookieName = "__Host-baton_session"
	}
	return a
}

// sidSerializer encodes the session cookie's one value, the secret, as
// its bytes. gob, the default, spends more decoding its type description
// on every request than the whole database lookup takes.
type sidSerializer struct{}

// Serialize encodes a session's values, which must hold only the secret.
func (sidSerializer) Serialize(src any) ([]byte, error) {
	values, ok := src.(map[any]any)
	secret, _ := values[sessionSecretKey].(string)
	if !ok || len(values) != 1 || secret == "" {
		return nil, errors.New("session cookie: only the session secret may be stored")
	}
	return []byte(secret), nil
}

// Deserialize decodes the secret into a session's values.
func (sidSerializer) Deserialize(src []byte, dst any) error {
	values, ok := dst.(*map[any]any)
	if !ok {
		return fmt.Errorf("session cookie: cannot decode into %T", dst)
	}
	if *values == nil {
		*values = make(map[any]any, 1)
	}
	(*values)[sessionSecretKey] = string(src)
	return nil
}

// principal is who makes a request: a person signed in with a session, or
// a program holding one of their API tokens. Exactly one of Session and
// Token is set.
type principal struct {
	User *store.User
	// WorkspaceID is the workspace the request acts in: the session's
	// current one or the token's; "" if the user is in none.
	WorkspaceID   string
	WorkspaceName string
	// Role is the user's role in WorkspaceID; "" without a workspace.
	Role    store.MemberRole
	Session *store.Session
	Token   *store.Token
	// Workspaces are the user's workspaces as the session was read with
	// them (for the header's switcher); workspacesRead says they were.
	Workspaces     []*store.Membership
	workspacesRead bool
}

// ReadOnly reports whether the principal may only read: a viewer, or a
// read-scoped token.
func (p *principal) ReadOnly() bool {
	return !p.Role.AtLeast(store.RoleEditor) || (p.Token != nil && p.Token.Scope == store.ScopeRead)
}

type principalKey struct{}

// principalOf returns who makes the request, or nil for an anonymous one.
func principalOf(c echo.Context) *principal {
	p, _ := c.Request().Context().Value(principalKey{}).(*principal)
	return p
}

// setPrincipal puts p in the request's context, with its user as the
// author of the changes the request makes (store.WithActor) and its
// workspace for the model calls it makes (budgets count per workspace).
// Jobs keep the request's context values.
func setPrincipal(c echo.Context, p *principal) {
	r := c.Request()
	ctx := context.WithValue(r.Context(), principalKey{}, p)
	ctx = store.WithActor(ctx, p.User.ID) // what it changes records who did
	if p.WorkspaceID != "" {
		ctx = agent.WithWorkspace(ctx, p.WorkspaceID)
	}
	// The API, MCP and review code read who is asking from these two.
	scope := scopeWrite
	if p.ReadOnly() {
		scope = scopeRead
	}
	ctx = withCaller(ctx, caller{WorkspaceID: p.WorkspaceID, UserID: p.User.ID, Scope: scope})
	ctx = views.WithRequestState(ctx, views.RequestState{UserID: p.User.ID, UserName: p.User.Name,
		WorkspaceID: p.WorkspaceID, WorkspaceName: p.WorkspaceName, Role: string(p.Role), ReadOnly: p.ReadOnly()})
	c.SetRequest(r.WithContext(ctx))
}

// isSetUp reports whether an account exists, asking the database until one does.
func (s *Server) isSetUp(ctx context.Context) (bool, error) {
	if s.auth.setUp.Load() {
		return true, nil
	}
	ok, err := s.db.HasUsers(ctx)
	if ok {
		s.auth.setUp.Store(true)
	}
	return ok, err
}

// sessionFromCookie returns the principal of the request's session cookie.
// It returns store.ErrUnauthorized when there is no cookie, or its session
// has ended, passed its lifetime or been idle too long (then it is ended).
func (s *Server) sessionFromCookie(c echo.Context) (*principal, error) {
	r := c.Request()
	if _, err := r.Cookie(s.auth.cookieName); err != nil {
		return nil, store.ErrUnauthorized
	}
	cookie, err := s.auth.cookies.New(r, s.auth.cookieName)
	if err != nil {
		return nil, store.ErrUnauthorized // forged, from an old key, or expired
	}
	secret, _ := cookie.Values[sessionSecretKey].(string)
	if secret == "" {
		return nil, store.ErrUnauthorized
	}
	ctx := r.Context()
	sess, workspaces, err := s.db.FindSessionWithWorkspaces(ctx, secret)
	if err != nil {
		return nil, err
	}
	now := s.auth.cfg.Clock()
	if idle := now.Sub(sess.LastSeenAt); idle >= s.auth.cfg.SessionIdle {
		if err := s.db.EndSession(ctx, sess.ID); err != nil {
			return nil, err
		}
		return nil, store.ErrUnauthorized
	} else if idle >= touchEvery {
		if err := s.db.TouchSession(ctx, sess.ID); err != nil {
			return nil, err
		}
	}
	p := &principal{User: sess.User, Session: sess, WorkspaceID: sess.WorkspaceID, WorkspaceName: sess.WorkspaceName, Role: sess.Role,
		Workspaces: workspaces, workspacesRead: true}
	if p.Role == "" {
		// No workspace chosen yet, or removed from it: show the first of
		// the user's workspaces, if any.
		if len(workspaces) > 0 {
			if err := s.db.SetSessionWorkspace(ctx, sess.ID, workspaces[0].WorkspaceID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			p.WorkspaceID, p.WorkspaceName, p.Role = workspaces[0].WorkspaceID, workspaces[0].WorkspaceName, workspaces[0].Role
			sess.WorkspaceID, sess.WorkspaceName, sess.Role = p.WorkspaceID, p.WorkspaceName, p.Role
		}
	}
	return p, nil
}

// requireSession lets a page request through only with a live session,
// and puts its principal in the request's context. Before set-up every
// page leads to /setup; without a session, to /login and back.
func (s *Server) requireSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ok, err := s.isSetUp(c.Request().Context())
		if err != nil {
			return err
		}
		if !ok {
			return redirect(c, "/setup")
		}
		p, err := s.sessionFromCookie(c)
		if errors.Is(err, store.ErrUnauthorized) {
			s.clearSessionCookie(c)
			return redirect(c, "/login?next="+url.QueryEscape(safeNext(c.Request().URL.RequestURI())))
		} else if err != nil {
			return err
		}
		setPrincipal(c, p)
		return next(c)
	}
}

// optionalSession puts the principal of a live session, if the request
// has one, in its context, and lets every request through.
func (s *Server) optionalSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := s.sessionFromCookie(c)
		if err == nil {
			setPrincipal(c, p)
		} else if !errors.Is(err, store.ErrUnauthorized) {
			return err
		}
		return next(c)
	}
}

// redirect sends a browser to path: a 303, or for htmx an HX-Redirect so
// that the whole page changes instead of a fragment.
func redirect(c echo.Context, path string) error {
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", path)
		return c.NoContent(http.StatusUnauthorized)
	}
	return c.Redirect(http.StatusSeeOther, path)
}

// safeNext returns path if it is a local path to go back to after signing
// in, and "/" otherwise: never another site (//evil, /\evil, https://…).
func safeNext(path string) string {
	if path == "" || path[0] != '/' || strings.HasPrefix(path, "//") || strings.HasPrefix(path, "/\\") ||
		strings.ContainsAny(path, "\r\n\x00") || strings.HasPrefix(path, "/logout") || strings.HasPrefix(path, "/login") {
		return "/"
	}
	return path
}

// errUnauthorizedAPI is the API's answer to a missing or wrong token.
func errUnauthorizedAPI(message string) error {
	return &store.Error{Code: store.EUNAUTHORIZED, Message: message}
}

// requireToken lets an API request through only with a valid bearer token,
// and puts its principal in the request's context. The session cookie is
// never looked at. A read token may only GET (or HEAD); a write method
// answers 403.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return s.tokenAuth(next, true)
}

// requireMCPToken is requireToken for the MCP endpoint: every MCP call is a
// POST, so a read token passes and the server offers it only read tools;
// and no WWW-Authenticate challenge is sent, which some MCP clients take as
// an invitation to OAuth and then drop the static Authorization header.
func (s *Server) requireMCPToken(next echo.HandlerFunc) echo.HandlerFunc {
	h := s.tokenAuth(next, false)
	return func(c echo.Context) error {
		err := h(c)
		c.Response().Header().Del(echo.HeaderWWWAuthenticate)
		return err
	}
}

// tokenAuth authenticates a bearer token; with readOnlyByMethod, a read
// token may only GET or HEAD.
func (s *Server) tokenAuth(next echo.HandlerFunc, readOnlyByMethod bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		scheme, secret, ok := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="baton"`)
			return errUnauthorizedAPI("Send an API token: Authorization: Bearer <token>. Create one in Settings › API tokens or with baton token create.")
		}
		ctx := r.Context()
		tok, err := s.db.FindTokenBySecret(ctx, strings.TrimSpace(secret))
		if errors.Is(err, store.ErrUnauthorized) {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="baton", error="invalid_token"`)
			return errUnauthorizedAPI(store.ErrorMessage(err))
		} else if err != nil {
			return err
		}
		if readOnlyByMethod && tok.Scope == store.ScopeRead && r.Method != http.MethodGet && r.Method != http.MethodHead {
			return &store.Error{Code: store.EFORBIDDEN, Message: "This token is read-only: it may only read (GET). Create a write token to make changes."}
		}
		if s.auth.cfg.Clock().Sub(tok.LastUsedAt) >= touchEvery {
			if err := s.db.TouchToken(ctx, tok.ID); err != nil {
				return err
			}
		}
		setPrincipal(c, &principal{User: tok.User, Token: tok, WorkspaceID: tok.WorkspaceID, WorkspaceName: tok.WorkspaceName, Role: tok.Role})
		return next(c)
	}
}

// requireRole lets a request through only if its principal has at least
// role min in the workspace it acts in: 403 otherwise. It runs after
// requireSession or requireToken.
func requireRole(min store.MemberRole) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p := principalOf(c)
			switch {
			case p == nil:
				return errUnauthorizedAPI("Sign in first.")
			case p.Role == "":
				return &store.Error{Code: store.EFORBIDDEN, Message: "You are not a member of any workspace. Ask an owner for an invite."}
			case !p.Role.AtLeast(min):
				return &store.Error{Code: store.EFORBIDDEN, Message: "Your role in " + p.WorkspaceName + " is " + string(p.Role) + "; this needs " + string(min) + ". Ask an owner to change your role."}
			}
			return next(c)
		}
	}
}

// startSession signs user in: it ends the request's previous session, if
// any, starts a new one (a new secret, so that a planted cookie is never
// promoted) showing workspaceID ("" for the user's first), and sets the cookie.
func (s *Server) startSession(c echo.Context, user *store.User, workspaceID string) error {
	ctx := c.Request().Context()
	if old, err := s.sessionFromCookie(c); err == nil {
		if err := s.db.EndSession(ctx, old.Session.ID); err != nil {
			return err
		}
	}
	sess, secret, err := s.db.CreateSession(ctx, store.SessionCreate{UserID: user.ID, WorkspaceID: workspaceID, Lifetime: s.auth.cfg.SessionLifetime})
	if err != nil {
		return err
	}
	// Sign-ins are rare: a good moment to forget sessions nobody can use.
	if _, err := s.db.DeleteExpiredSessions(ctx, s.auth.cfg.SessionIdle); err != nil {
		s.log.Warn("delete expired sessions", "err", err)
	}
	cookie := sessions.NewSession(s.auth.cookies, s.auth.cookieName)
	opts := *s.auth.cookies.Options
	cookie.Options = &opts
	cookie.Values[sessionSecretKey] = secret
	if err := s.auth.cookies.Save(c.Request(), c.Response(), cookie); err != nil {
		return err
	}
	setPrincipal(c, &principal{User: user, Session: sess})
	return nil
}

// clearSessionCookie tells the browser to drop the session cookie.
func (s *Server) clearSessionCookie(c echo.Context) {
	if _, err := c.Request().Cookie(s.auth.cookieName); err != nil {
		return
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: s.auth.cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.auth.cfg.SecureCookies, SameSite: http.SameSiteLaxMode})
}
