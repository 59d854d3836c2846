package web

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// setupFailureEmail is the account name under which wrong setup codes are
// counted, so that the per-client sign-in limit also bounds guessing them.
const setupFailureEmail = "(setup code)"

// publicAccountRoutes registers the account pages anyone may open on the
// public browser group: set-up, sign-in and -out, invites.
func (s *Server) publicAccountRoutes(g *echo.Group) {
	g.GET("/setup", s.handleSetupShow)
	g.POST("/setup", s.handleSetup)
	g.GET("/login", s.handleLoginShow)
	g.POST("/login", s.handleLogin)
	g.POST("/logout", s.handleLogout)
	g.GET("/invite/:token", s.handleInviteShow, s.optionalSession)
	g.POST("/invite/:token", s.handleInviteAccept, s.optionalSession)
}

// accountRoutes registers the signed-in account pages on the app group g;
// ownerOnly guards member management.
func (s *Server) accountRoutes(g *echo.Group, ownerOnly echo.MiddlewareFunc) {
	g.GET("/account", s.handleAccountShow)
	g.POST("/account/password", s.handlePasswordChange)
	g.POST("/workspace", s.handleWorkspaceSwitch)
	g.GET("/settings/tokens", s.handleTokensShow, requireRole(store.RoleViewer))
	g.POST("/settings/tokens", s.handleTokenCreate, requireRole(store.RoleViewer))
	g.POST("/settings/tokens/:id/revoke", s.handleTokenRevoke)
	g.GET("/members", s.handleMembersShow, requireRole(store.RoleViewer))
	g.POST("/members/:user/role", s.handleMemberRole, ownerOnly)
	g.POST("/members/:user/remove", s.handleMemberRemove, ownerOnly)
	g.POST("/invites", s.handleInviteCreate, ownerOnly)
	g.POST("/invites/:id/delete", s.handleInviteDelete, ownerOnly)
}

// linkTo returns the absolute URL of path for people to open: under
// Config.PublicURL when set, else under the request's own address.
func (s *Server) linkTo(c echo.Context, path string) string {
	if s.publicURL != "" {
		return s.publicURL + path
	}
	return c.Scheme() + "://" + c.Request().Host + path
}

// noStore keeps a page with a secret on it out of every cache.
func noStore(c echo.Context) {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
}

// handleSetupShow serves GET /setup: the first account, until one exists.
func (s *Server) handleSetupShow(c echo.Context) error {
	ok, err := s.isSetUp(c.Request().Context())
	if err != nil {
		return err
	}
	if ok {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	return s.render(c, http.StatusOK, views.SetupPage(s.meta(c, "Set up"), views.SetupForm{NeedCode: s.auth.cfg.SetupCode != ""}))
}

// handleSetup serves POST /setup: it creates the owner and the first
// workspace, and signs the owner in.
func (s *Server) handleSetup(c echo.Context) error {
	ctx := c.Request().Context()
	ok, err := s.isSetUp(ctx)
	if err != nil {
		return err
	}
	if ok {
		return &store.Error{Code: store.ECONFLICT, Message: "Baton is already set up. Sign in, or ask an owner for an invite."}
	}
	form := views.SetupForm{
		Name: c.FormValue("name"), Email: c.FormValue("email"), Workspace: c.FormValue("workspace"),
		NeedCode: s.auth.cfg.SetupCode != "",
	}
	show := func(status int, msg string) error {
		form.Error = msg
		return s.render(c, status, views.SetupPage(s.meta(c, "Set up"), form))
	}
	if form.NeedCode {
		client := c.RealIP()
		if limited, err := s.db.SignInLimited(ctx, setupFailureEmail, client); err != nil {
			return err
		} else if limited {
			return show(http.StatusTooManyRequests, tooManyFailures)
		}
		code := strings.ToUpper(strings.TrimSpace(c.FormValue("code")))
		if subtle.ConstantTimeCompare([]byte(code), []byte(strings.ToUpper(s.auth.cfg.SetupCode))) != 1 {
			if err := s.db.RecordSignInFailure(ctx, setupFailureEmail, client); err != nil {
				return err
			}
			return show(http.StatusForbidden, "The setup code is wrong. It is printed in the server's log at start-up.")
		}
	}
	u, err := s.db.SetUp(ctx, store.Setup{
		Owner:     store.UserCreate{Email: form.Email, Name: form.Name, Password: c.FormValue("password")},
		Workspace: form.Workspace,
	})
	if err != nil {
		if store.ErrorCode(err) == store.EINVALID {
			return show(http.StatusUnprocessableEntity, store.ErrorMessage(err))
		}
		if errors.Is(err, store.ErrConflict) {
			s.auth.setUp.Store(true)
		}
		return err
	}
	s.auth.setUp.Store(true)
	if err := s.startSession(c, u, s.db.DefaultWorkspaceID()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/")
}

const tooManyFailures = "Too many failed sign-ins for this account or from this address. Wait 15 minutes, then try again."

// handleLoginShow serves GET /login.
func (s *Server) handleLoginShow(c echo.Context) error {
	ok, err := s.isSetUp(c.Request().Context())
	if err != nil {
		return err
	}
	if !ok {
		return c.Redirect(http.StatusSeeOther, "/setup")
	}
	return s.render(c, http.StatusOK, views.LoginPage(s.meta(c, "Sign in"), views.LoginForm{Next: safeNext(c.QueryParam("next"))}))
}

// handleLogin serves POST /login (fields email, password, next). A wrong
// email and a wrong password get the same answer; after
// store.SignInFailureLimit failures in store.SignInFailureWindow for the
// account or the client, it answers 429 without checking the password.
func (s *Server) handleLogin(c echo.Context) error {
	ctx := c.Request().Context()
	form := views.LoginForm{Email: strings.TrimSpace(c.FormValue("email")), Next: safeNext(c.FormValue("next"))}
	show := func(status int, msg string) error {
		form.Error = msg
		return s.render(c, status, views.LoginPage(s.meta(c, "Sign in"), form))
	}
	client := c.RealIP()
	limited, err := s.db.SignInLimited(ctx, form.Email, client)
	if err != nil {
		return err
	}
	if limited {
		return show(http.StatusTooManyRequests, tooManyFailures)
	}
	u, err := s.db.AuthenticateUser(ctx, form.Email, c.FormValue("password"))
	if errors.Is(err, store.ErrUnauthorized) {
		if err := s.db.RecordSignInFailure(ctx, form.Email, client); err != nil {
			return err
		}
		return show(http.StatusUnauthorized, "The email or password is wrong.")
	} else if err != nil {
		return err
	}
	if err := s.startSession(c, u, ""); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, form.Next)
}

// handleLogout serves POST /logout: it ends this browser's session (with
// everywhere=1, every session of the user) and drops the cookie.
func (s *Server) handleLogout(c echo.Context) error {
	p, err := s.sessionFromCookie(c)
	if err == nil {
		ctx := c.Request().Context()
		if c.FormValue("everywhere") == "1" {
			_, err = s.db.EndUserSessions(ctx, p.User.ID, "")
		} else {
			err = s.db.EndSession(ctx, p.Session.ID)
		}
		if err != nil {
			return err
		}
	} else if !errors.Is(err, store.ErrUnauthorized) {
		return err
	}
	s.clearSessionCookie(c)
	return c.Redirect(http.StatusSeeOther, "/login")
}

// handleAccountShow serves GET /account.
func (s *Server) handleAccountShow(c echo.Context) error {
	return s.renderAccount(c, http.StatusOK, "")
}

func (s *Server) renderAccount(c echo.Context, status int, msg string) error {
	p := principalOf(c)
	ms, err := s.db.FindMemberships(c.Request().Context(), store.MembershipFilter{UserID: p.User.ID})
	if err != nil {
		return err
	}
	return s.render(c, status, views.AccountPage(s.meta(c, "Your account"), views.AccountView{User: p.User, Memberships: ms, Error: msg}))
}

// handlePasswordChange serves POST /account/password (fields
// current_password, new_password). It ends the user's other sessions.
func (s *Server) handlePasswordChange(c echo.Context) error {
	p := principalOf(c)
	err := s.db.ChangePassword(c.Request().Context(), store.PasswordChange{
		UserID: p.User.ID, Current: c.FormValue("current_password"), New: c.FormValue("new_password"), KeepSessionID: p.Session.ID,
	})
	switch {
	case errors.Is(err, store.ErrUnauthorized):
		return s.renderAccount(c, http.StatusUnprocessableEntity, "The current password is wrong. Nothing was changed.")
	case store.ErrorCode(err) == store.EINVALID:
		return s.renderAccount(c, http.StatusUnprocessableEntity, store.ErrorMessage(err))
	case err != nil:
		return err
	}
	s.setFlash(c, "Password changed. Your other browsers were signed out.")
	return c.Redirect(http.StatusSeeOther, "/account")
}

// handleMembersShow serves GET /members: the current workspace's members.
func (s *Server) handleMembersShow(c echo.Context) error {
	return s.renderMembers(c, http.StatusOK, "", "")
}

func (s *Server) renderMembers(c echo.Context, status int, inviteURL, msg string) error {
	ctx := c.Request().Context()
	p := principalOf(c)
	members, err := s.db.FindMemberships(ctx, store.MembershipFilter{WorkspaceID: p.WorkspaceID})
	if err != nil {
		return err
	}
	v := views.MembersView{WorkspaceName: p.WorkspaceName, Me: p.User.ID, CanManage: p.Role == store.RoleOwner,
		Members: members, InviteURL: inviteURL, Error: msg}
	if v.CanManage {
		if v.Invites, err = s.db.FindInvites(ctx, p.WorkspaceID); err != nil {
			return err
		}
	}
	if inviteURL != "" {
		noStore(c)
	}
	return s.render(c, status, views.MembersPage(s.meta(c, "Members"), v))
}

// memberChangeFailed shows a refused member change (bad role, last owner)
// on the members page; other errors go to the error handler.
func (s *Server) memberChangeFailed(c echo.Context, err error) error {
	switch {
	case store.ErrorCode(err) == store.EINVALID:
		return s.renderMembers(c, http.StatusUnprocessableEntity, "", store.ErrorMessage(err))
	case errors.Is(err, store.ErrConflict):
		return s.renderMembers(c, http.StatusConflict, "", store.ErrorMessage(err)+" Nothing was changed.")
	}
	return err
}

// handleMemberRole serves POST /members/:user/role (field role); owners only.
func (s *Server) handleMemberRole(c echo.Context) error {
	p := principalOf(c)
	m, err := s.db.ChangeRole(c.Request().Context(), p.WorkspaceID, c.Param("user"), store.MemberRole(c.FormValue("role")))
	if err != nil {
		return s.memberChangeFailed(c, err)
	}
	s.setFlash(c, m.UserName+" is now "+string(m.Role)+".")
	return c.Redirect(http.StatusSeeOther, "/members")
}

// handleMemberRemove serves POST /members/:user/remove; owners only. The
// member's API tokens for the workspace are revoked with it.
func (s *Server) handleMemberRemove(c echo.Context) error {
	p := principalOf(c)
	userID := c.Param("user")
	if err := s.db.RemoveMember(c.Request().Context(), p.WorkspaceID, userID); err != nil {
		return s.memberChangeFailed(c, err)
	}
	if userID == p.User.ID {
		return c.Redirect(http.StatusSeeOther, "/account")
	}
	s.setFlash(c, "Member removed.")
	return c.Redirect(http.StatusSeeOther, "/members")
}

// handleInviteCreate serves POST /invites (fields role, days 1–7); owners
// only. The page shows the link once.
func (s *Server) handleInviteCreate(c echo.Context) error {
	p := principalOf(c)
	days, err := strconv.Atoi(c.FormValue("days"))
	if err != nil || days < 1 || days > 7 {
		return s.renderMembers(c, http.StatusUnprocessableEntity, "", "An invite is valid for 1 to 7 days; choose how many.")
	}
	_, secret, err := s.db.CreateInvite(c.Request().Context(), store.InviteCreate{
		WorkspaceID: p.WorkspaceID, Role: store.MemberRole(c.FormValue("role")), CreatedBy: p.User.ID,
		Lifetime: time.Duration(days) * 24 * time.Hour,
	})
	if err != nil {
		return s.memberChangeFailed(c, err)
	}
	return s.renderMembers(c, http.StatusCreated, s.linkTo(c, "/invite/"+secret), "")
}

// handleInviteDelete serves POST /invites/:id/delete; owners only.
func (s *Server) handleInviteDelete(c echo.Context) error {
	p := principalOf(c)
	if err := s.db.DeleteInvite(c.Request().Context(), p.WorkspaceID, c.Param("id")); err != nil {
		return err
	}
	s.setFlash(c, "Invite withdrawn: its link no longer works.")
	return c.Redirect(http.StatusSeeOther, "/members")
}

// handleInviteShow serves GET /invite/:token: who invites to what, and a
// form to join (signed in) or to create an account.
func (s *Server) handleInviteShow(c echo.Context) error {
	noStore(c)
	inv, err := s.db.FindInviteBySecret(c.Request().Context(), c.Param("token"))
	if err != nil {
		return err
	}
	v := views.InviteView{Invite: inv, Secret: c.Param("token")}
	if p := principalOf(c); p != nil {
		v.SignedInAs = p.User
	}
	return s.render(c, http.StatusOK, views.InvitePage(s.meta(c, "Join "+inv.WorkspaceName), v))
}

// handleInviteAccept serves POST /invite/:token. Signed in, the person
// joins; otherwise the fields name, email and password create an account
// that joins, and sign it in. The invite is used up either way.
func (s *Server) handleInviteAccept(c echo.Context) error {
	ctx := c.Request().Context()
	secret := c.Param("token")
	noStore(c)
	if p := principalOf(c); p != nil {
		m, err := s.db.AcceptInvite(ctx, secret, p.User.ID)
		if err != nil {
			return err
		}
		if err := s.db.SetSessionWorkspace(ctx, p.Session.ID, m.WorkspaceID); err != nil {
			return err
		}
		s.setFlash(c, "You joined "+m.WorkspaceName+" as "+string(m.Role)+".")
		return c.Redirect(http.StatusSeeOther, "/")
	}
	v := views.InviteView{Secret: secret, Name: c.FormValue("name"), Email: c.FormValue("email")}
	u, m, err := s.db.AcceptInviteAsNewUser(ctx, secret, store.UserCreate{Name: v.Name, Email: v.Email, Password: c.FormValue("password")})
	if err != nil {
		isField := store.ErrorCode(err) == store.EINVALID
		if !isField && !errors.Is(err, store.ErrConflict) {
			return err // unknown invite
		}
		status, msg := http.StatusUnprocessableEntity, store.ErrorMessage(err)
		inv, ferr := s.db.FindInviteBySecret(ctx, secret)
		if ferr != nil {
			return ferr
		}
		if inv.Usable(s.auth.cfg.Clock()) != nil {
			return err // used or expired meanwhile
		}
		v.Invite = inv
		if !isField {
			status, msg = http.StatusConflict, "An account with this email exists already. Sign in first, then open the link again."
		}
		v.Error = msg
		return s.render(c, status, views.InvitePage(s.meta(c, "Join "+v.Invite.WorkspaceName), v))
	}
	s.auth.setUp.Store(true)
	if err := s.startSession(c, u, m.WorkspaceID); err != nil {
		return err
	}
	s.setFlash(c, "Welcome! You joined "+m.WorkspaceName+" as "+string(m.Role)+".")
	return c.Redirect(http.StatusSeeOther, "/")
}

// handleTokensShow serves GET /settings/tokens: the person's API tokens.
func (s *Server) handleTokensShow(c echo.Context) error {
	return s.renderTokens(c, http.StatusOK, "", "")
}

func (s *Server) renderTokens(c echo.Context, status int, newSecret, msg string) error {
	p := principalOf(c)
	tokens, err := s.db.FindTokens(c.Request().Context(), store.TokenFilter{UserID: p.User.ID})
	if err != nil {
		return err
	}
	noStore(c)
	return s.render(c, status, views.TokensPage(s.meta(c, "API tokens"), views.TokensView{
		WorkspaceName: p.WorkspaceName, Tokens: tokens, NewSecret: newSecret, Now: s.auth.cfg.Clock(), Error: msg,
	}))
}

// handleTokenCreate serves POST /settings/tokens (fields name, scope,
// expires_days; 0 for none): a token for the current workspace, shown once.
func (s *Server) handleTokenCreate(c echo.Context) error {
	_, secret, problem, err := s.createFormToken(c)
	if problem != "" {
		return s.renderTokens(c, http.StatusUnprocessableEntity, "", problem)
	} else if err != nil {
		return err
	}
	return s.renderTokens(c, http.StatusCreated, secret, "")
}

// createFormToken creates the API token a form asks for (fields name,
// scope, expires_days; 0 for none): the person's, for the current
// workspace. problem says what to fix when the form is wrong.
func (s *Server) createFormToken(c echo.Context) (t *store.Token, secret, problem string, err error) {
	p := principalOf(c)
	in := store.TokenCreate{UserID: p.User.ID, WorkspaceID: p.WorkspaceID, Name: c.FormValue("name"), Scope: store.TokenScope(c.FormValue("scope"))}
	days, err := strconv.Atoi(c.FormValue("expires_days"))
	if err != nil || days < 0 || days > 3650 {
		return nil, "", "Choose when the token expires, or never.", nil
	}
	if days > 0 {
		in.ExpiresAt = s.auth.cfg.Clock().UTC().Add(time.Duration(days) * 24 * time.Hour)
	}
	t, secret, err = s.db.CreateToken(c.Request().Context(), in)
	if store.ErrorCode(err) == store.EINVALID {
		return nil, "", store.ErrorMessage(err), nil
	}
	return t, secret, "", err
}

// handleTokenRevoke serves POST /settings/tokens/:id/revoke: a person
// revokes one of their own tokens.
func (s *Server) handleTokenRevoke(c echo.Context) error {
	p := principalOf(c)
	t, err := s.db.RevokeToken(c.Request().Context(), c.Param("id"), p.User.ID)
	if err != nil {
		return err
	}
	s.setFlash(c, "Token "+strconv.Quote(t.Name)+" revoked: programs using it are refused from now on.")
	return c.Redirect(http.StatusSeeOther, "/settings/tokens")
}

// handleWorkspaceSwitch serves POST /workspace (field workspace): the
// session shows another of the user's workspaces from now on. A workspace
// the user is not a member of answers 404, as if it did not exist.
func (s *Server) handleWorkspaceSwitch(c echo.Context) error {
	p := principalOf(c)
	if err := s.db.SetSessionWorkspace(c.Request().Context(), p.Session.ID, c.FormValue("workspace")); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/")
}
