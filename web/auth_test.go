package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/web"
)

const ownerPassword = "correct horse battery"

// testClock is a settable clock shared by the store and the server.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newAuthApp starts a server with accounts configured by auth and a clock
// the test moves.
func newAuthApp(t *testing.T, auth web.AuthConfig) (*testApp, *testClock) {
	t.Helper()
	clk := &testClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	auth.Clock = clk.Now
	a := newBareApp(t, web.Config{Provider: newFakeModel("ok"), ModelRate: 100, Auth: auth})
	a.DB.SetClock(clk.Now)
	return a, clk
}

// browser is one person's browser: its own cookie jar.
type browser struct {
	a *testApp
	c *http.Client
}

func (a *testApp) browser() *browser { return &browser{a: a, c: newClient(a.t, a.TS)} }

func (b *browser) do(req *http.Request) (*http.Response, string) {
	saved := b.a.Client
	b.a.Client = b.c
	defer func() { b.a.Client = saved }()
	return b.a.do(req)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.a.t.Helper()
	return b.do(b.a.newRequest(http.MethodGet, path, nil, nil))
}

// post sends a form as Baton's own pages do (same-origin Fetch Metadata).
func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.a.t.Helper()
	req := b.a.newRequest(http.MethodPost, path, strings.NewReader(form.Encode()), sameOrigin)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

func (b *browser) login(email, password string) *http.Response {
	b.a.t.Helper()
	res, body := b.post("/login", url.Values{"email": {email}, "password": {password}})
	if res.StatusCode != http.StatusSeeOther {
		b.a.t.Fatalf("sign in %s: status %d, want 303\n%s", email, res.StatusCode, body)
	}
	return res
}

// setUp creates the owner Ana through the store and returns her.
func (a *testApp) setUp() *store.User {
	a.t.Helper()
	u, err := a.DB.SetUp(context.Background(), store.Setup{
		Owner: store.UserCreate{Email: "ana@example.com", Name: "Ana", Password: ownerPassword}, Workspace: "Acme"})
	if err != nil {
		a.t.Fatal(err)
	}
	return u
}

func wantStatus(t *testing.T, res *http.Response, body string, want int) {
	t.Helper()
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d\n%s", res.Request.Method, res.Request.URL.Path, res.StatusCode, want, body)
	}
}

func wantRedirect(t *testing.T, res *http.Response, body, want string) {
	t.Helper()
	wantStatus(t, res, body, http.StatusSeeOther)
	if got := res.Header.Get("Location"); got != want {
		t.Fatalf("%s %s: Location=%q, want %q", res.Request.Method, res.Request.URL.Path, got, want)
	}
}

func formError(t *testing.T, body string) string {
	t.Helper()
	n := findAll(parseHTML(t, body), "", "data-testid", "form-error")
	if len(n) == 0 {
		return ""
	}
	return textOf(n[0])
}

func sessionCookie(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestSetup(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	b := a.browser()
	for _, path := range []string{"/login", "/account", "/members", "/settings/tokens"} {
		res, body := b.get(path)
		wantRedirect(t, res, body, "/setup")
	}
	res, body := b.get("/setup")
	wantStatus(t, res, body, http.StatusOK)
	doc := parseHTML(t, body)
	findOne(t, doc, "form", "data-testid", "setup-form")
	if n := findAll(doc, "input", "name", "code"); len(n) != 0 {
		t.Fatal("setup asks for a code on loopback (no SetupCode configured)")
	}

	form := url.Values{"name": {"Ana"}, "email": {"ana@example.com"}, "password": {"too short"}, "workspace": {"Acme"}}
	res, body = b.post("/setup", form)
	wantStatus(t, res, body, http.StatusUnprocessableEntity)
	if got := formError(t, body); !strings.Contains(got, "at least 12") {
		t.Fatalf("form error=%q, want the password rule", got)
	}
	if has, _ := a.DB.HasUsers(context.Background()); has {
		t.Fatal("a refused set-up created an account")
	}

	form.Set("password", ownerPassword)
	res, body = b.post("/setup", form)
	wantRedirect(t, res, body, "/")
	c := sessionCookie(res, "baton_session")
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/" {
		t.Fatalf("session cookie=%+v, want HttpOnly, SameSite=Lax, Path=/, not Secure over plain HTTP", c)
	}
	res, body = b.get("/account")
	wantStatus(t, res, body, http.StatusOK)
	if got := textOf(findOne(t, parseHTML(t, body), "", "data-testid", "account-name")); got != "Ana" {
		t.Fatalf("account name=%q, want Ana", got)
	}
	if w, _ := a.DB.FindWorkspaceByID(context.Background(), a.DB.DefaultWorkspaceID()); w.Name != "Acme" {
		t.Fatalf("workspace=%q, want Acme", w.Name)
	}

	res, body = a.browser().get("/setup")
	wantRedirect(t, res, body, "/login")
	form.Set("email", "mallory@example.com")
	res, body = a.browser().post("/setup", form)
	wantStatus(t, res, body, http.StatusConflict)
	if _, err := a.DB.FindUserByEmail(context.Background(), "mallory@example.com"); err == nil {
		t.Fatal("a second set-up created an account")
	}
}

func TestSetupCode(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{SetupCode: "ABCDE23456"})
	b := a.browser()
	_, body := b.get("/setup")
	findOne(t, parseHTML(t, body), "input", "name", "code")

	form := url.Values{"name": {"Ana"}, "email": {"ana@example.com"}, "password": {ownerPassword}, "workspace": {"Acme"}}
	for _, code := range []string{"", "WRONG12345"} {
		form.Set("code", code)
		res, body := b.post("/setup", form)
		wantStatus(t, res, body, http.StatusForbidden)
		if got := formError(t, body); !strings.Contains(got, "setup code is wrong") {
			t.Fatalf("form error=%q", got)
		}
	}
	if has, _ := a.DB.HasUsers(context.Background()); has {
		t.Fatal("set-up without the code created an account")
	}
	form.Set("code", " abcde23456 ")
	res, body := b.post("/setup", form)
	wantRedirect(t, res, body, "/")
}

func TestSetupCodeGuessesLimited(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{SetupCode: "ABCDE23456"})
	b := a.browser()
	form := url.Values{"name": {"Ana"}, "email": {"ana@example.com"}, "password": {ownerPassword}, "workspace": {"Acme"}, "code": {"WRONG"}}
	for range store.SignInFailureLimit {
		b.post("/setup", form)
	}
	form.Set("code", "ABCDE23456")
	res, body := b.post("/setup", form)
	wantStatus(t, res, body, http.StatusTooManyRequests)
}

func TestLogin(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	a.setUp()
	b := a.browser()

	res, body := b.get("/account")
	wantRedirect(t, res, body, "/login?next=%2Faccount")
	res, body = b.get("/login?next=/members")
	wantStatus(t, res, body, http.StatusOK)
	if got := attr(findOne(t, parseHTML(t, body), "input", "name", "next"), "value"); got != "/members" {
		t.Fatalf("next=%q, want /members", got)
	}

	resWrong, bodyWrong := b.post("/login", url.Values{"email": {"ana@example.com"}, "password": {"wrong password!"}})
	resUnknown, bodyUnknown := b.post("/login", url.Values{"email": {"nobody@example.com"}, "password": {ownerPassword}})
	wantStatus(t, resWrong, bodyWrong, http.StatusUnauthorized)
	wantStatus(t, resUnknown, bodyUnknown, http.StatusUnauthorized)
	if w, u := formError(t, bodyWrong), formError(t, bodyUnknown); w != u || w != "The email or password is wrong." {
		t.Fatalf("wrong password says %q, unknown email %q: want one message for both", w, u)
	}

	res, body = b.post("/login", url.Values{"email": {"ANA@example.com"}, "password": {ownerPassword}, "next": {"/members"}})
	wantRedirect(t, res, body, "/members")
	first := sessionCookie(res, "baton_session")

	// Signing in again starts a new session and ends the old one.
	res = b.login("ana@example.com", ownerPassword)
	second := sessionCookie(res, "baton_session")
	if first == nil || second == nil || first.Value == second.Value {
		t.Fatal("signing in again kept the session cookie: want a new session on sign-in")
	}
	replay := a.browser()
	req := a.newRequest(http.MethodGet, "/account", nil, nil)
	req.AddCookie(&http.Cookie{Name: "baton_session", Value: first.Value})
	res, body = replay.do(req)
	wantRedirect(t, res, body, "/login?next=%2Faccount")

	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"} {
		res, body := a.browser().post("/login", url.Values{"email": {"ana@example.com"}, "password": {ownerPassword}, "next": {next}})
		wantRedirect(t, res, body, "/")
	}
}

func TestLoginLimits(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	a.setUp()
	b := a.browser()
	for range store.SignInFailureLimit {
		res, body := b.post("/login", url.Values{"email": {"ana@example.com"}, "password": {"a wrong guess!"}})
		wantStatus(t, res, body, http.StatusUnauthorized)
	}
	res, body := b.post("/login", url.Values{"email": {"ana@example.com"}, "password": {ownerPassword}})
	wantStatus(t, res, body, http.StatusTooManyRequests)
	if got := formError(t, body); !strings.Contains(got, "Wait 15 minutes") {
		t.Fatalf("429 message=%q, want to say how long to wait", got)
	}
	if sessionCookie(res, "baton_session") != nil {
		t.Fatal("a limited sign-in set a session cookie")
	}
}

func TestLoginLimitPerClient(t *testing.T) {
	a, clk := newAuthApp(t, web.AuthConfig{})
	a.setUp()
	b := a.browser()
	for i := range store.SignInFailureLimit {
		b.post("/login", url.Values{"email": {"guess" + string(rune('a'+i)) + "@example.com"}, "password": {"a wrong guess!"}})
	}
	res, body := b.post("/login", url.Values{"email": {"ana@example.com"}, "password": {ownerPassword}})
	wantStatus(t, res, body, http.StatusTooManyRequests)

	clk.Add(store.SignInFailureWindow)
	b.login("ana@example.com", ownerPassword)
}

func TestLogout(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	a.setUp()
	b := a.browser()
	cookie := sessionCookie(b.login("ana@example.com", ownerPassword), "baton_session")
	other := a.browser()
	other.login("ana@example.com", ownerPassword)

	res, body := b.post("/logout", nil)
	wantRedirect(t, res, body, "/login")
	if c := sessionCookie(res, "baton_session"); c == nil || c.MaxAge >= 0 {
		t.Fatalf("logout cookie=%+v, want it deleted", c)
	}
	// A copy of the cookie is worth nothing after sign-out.
	req := a.newRequest(http.MethodGet, "/account", nil, nil)
	req.AddCookie(&http.Cookie{Name: "baton_session", Value: cookie.Value})
	res, body = a.browser().do(req)
	wantRedirect(t, res, body, "/login?next=%2Faccount")

	res, body = other.get("/account")
	wantStatus(t, res, body, http.StatusOK)
	b.login("ana@example.com", ownerPassword)
	res, body = b.post("/logout", url.Values{"everywhere": {"1"}})
	wantRedirect(t, res, body, "/login")
	res, body = other.get("/account")
	wantRedirect(t, res, body, "/login?next=%2Faccount")

	// Signing out without a session is harmless.
	res, body = a.browser().post("/logout", nil)
	wantRedirect(t, res, body, "/login")
}

func TestPasswordChange(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	a.setUp()
	b, other := a.browser(), a.browser()
	b.login("ana@example.com", ownerPassword)
	other.login("ana@example.com", ownerPassword)

	res, body := b.post("/account/password", url.Values{"current_password": {"not it at all"}, "new_password": {"a new long passphrase"}})
	wantStatus(t, res, body, http.StatusUnprocessableEntity)
	if got := formError(t, body); !strings.Contains(got, "current password is wrong") {
		t.Fatalf("form error=%q", got)
	}
	res, body = b.post("/account/password", url.Values{"current_password": {ownerPassword}, "new_password": {"short"}})
	wantStatus(t, res, body, http.StatusUnprocessableEntity)
	res, body = other.get("/account")
	wantStatus(t, res, body, http.StatusOK) // nothing changed so far

	res, body = b.post("/account/password", url.Values{"current_password": {ownerPassword}, "new_password": {"a new long passphrase"}})
	wantRedirect(t, res, body, "/account")
	res, body = b.get("/account")
	wantStatus(t, res, body, http.StatusOK)
	if !strings.Contains(body, "other browsers were signed out") {
		t.Fatal("no confirmation after changing the password")
	}
	res, body = other.get("/account")
	wantRedirect(t, res, body, "/login?next=%2Faccount")
	a.browser().login("ana@example.com", "a new long passphrase")
}

func TestSessionTimeouts(t *testing.T) {
	a, clk := newAuthApp(t, web.AuthConfig{SessionIdle: time.Hour, SessionLifetime: 3 * time.Hour})
	a.setUp()
	b := a.browser()
	res := b.login("ana@example.com", ownerPassword)
	if c := sessionCookie(res, "baton_session"); c.MaxAge != 3*3600 {
		t.Fatalf("cookie MaxAge=%d, want the lifetime, %d", c.MaxAge, 3*3600)
	}
	// Activity keeps the session alive past the idle timeout…
	for range 3 {
		clk.Add(55 * time.Minute)
		res, body := b.get("/account")
		wantStatus(t, res, body, http.StatusOK)
	}
	// …but not past its lifetime.
	clk.Add(20 * time.Minute)
	res, body := b.get("/account")
	wantRedirect(t, res, body, "/login?next=%2Faccount")

	b.login("ana@example.com", ownerPassword)
	clk.Add(time.Hour)
	res, body = b.get("/account")
	wantRedirect(t, res, body, "/login?next=%2Faccount")
}

func TestSecureCookie(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{SecureCookies: true})
	a.setUp()
	res, body := a.browser().post("/login", url.Values{"email": {"ana@example.com"}, "password": {ownerPassword}})
	wantRedirect(t, res, body, "/")
	c := sessionCookie(res, "__Host-baton_session")
	if c == nil || !c.Secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("cookie=%+v, want __Host-baton_session: Secure, HttpOnly, Path=/, no Domain, SameSite=Lax", c)
	}
}

// inviteLink creates an invite as b (an owner) and returns its path.
func inviteLink(t *testing.T, b *browser, role string) string {
	t.Helper()
	res, body := b.post("/invites", url.Values{"role": {role}, "days": {"7"}})
	wantStatus(t, res, body, http.StatusCreated)
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control=%q on a page with an invite link, want no-store", cc)
	}
	link := attr(findOne(t, findOne(t, parseHTML(t, body), "", "data-testid", "invite-link"), "input"), "value")
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(u.Path, "/invite/") {
		t.Fatalf("invite link %q", link)
	}
	return u.Path
}

func memberRoles(t *testing.T, db *store.DB) map[string]store.MemberRole {
	t.Helper()
	ms, err := db.FindMemberships(context.Background(), store.MembershipFilter{WorkspaceID: db.DefaultWorkspaceID()})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.MemberRole{}
	for _, m := range ms {
		out[m.UserEmail] = m.Role
	}
	return out
}

func TestInvitesAndMembers(t *testing.T) {
	a, clk := newAuthApp(t, web.AuthConfig{})
	ana := a.setUp()
	owner := a.browser()
	owner.login("ana@example.com", ownerPassword)

	res, body := owner.post("/invites", url.Values{"role": {"viewer"}, "days": {"8"}})
	wantStatus(t, res, body, http.StatusUnprocessableEntity)
	res, body = owner.post("/invites", url.Values{"role": {"boss"}, "days": {"7"}})
	wantStatus(t, res, body, http.StatusUnprocessableEntity)

	link := inviteLink(t, owner, "viewer")
	bo := a.browser()
	res, body = bo.get(link)
	wantStatus(t, res, body, http.StatusOK)
	if got := textOf(findOne(t, parseHTML(t, body), "", "data-testid", "invite-summary")); !strings.Contains(got, "viewer") {
		t.Fatalf("invite page says %q, want the role", got)
	}
	res, body = bo.post(link, url.Values{"name": {"Bo"}, "email": {"bo@example.com"}, "password": {"short"}})
	wantStatus(t, res, body, http.StatusUnprocessableEntity)
	res, body = bo.post(link, url.Values{"name": {"Bo"}, "email": {"ANA@example.com"}, "password": {"bo's long password"}})
	wantStatus(t, res, body, http.StatusConflict)
	if got := formError(t, body); !strings.Contains(got, "Sign in first") {
		t.Fatalf("duplicate email says %q", got)
	}
	res, body = bo.post(link, url.Values{"name": {"Bo"}, "email": {"bo@example.com"}, "password": {"bo's long password"}})
	wantRedirect(t, res, body, "/")
	if got := memberRoles(t, a.DB)["bo@example.com"]; got != store.RoleViewer {
		t.Fatalf("Bo's role=%q, want viewer", got)
	}

	// The link works once.
	res, body = a.browser().get(link)
	wantStatus(t, res, body, http.StatusUnprocessableEntity)
	if !strings.Contains(body, "used already") {
		t.Fatal("a used invite does not say so")
	}

	// A viewer sees members but cannot manage them.
	res, body = bo.get("/members")
	wantStatus(t, res, body, http.StatusOK)
	doc := parseHTML(t, body)
	if len(findAll(doc, "tr", "data-testid", "member")) != 2 || len(findAll(doc, "select")) != 0 || len(findAll(doc, "", "data-testid", "invite-form")) != 0 {
		t.Fatalf("viewer's members page shows controls or misses members:\n%s", body)
	}
	bob, _ := a.DB.FindUserByEmail(context.Background(), "bo@example.com")
	for _, tt := range []struct {
		path string
		form url.Values
	}{
		{"/members/" + ana.ID + "/role", url.Values{"role": {"viewer"}}},
		{"/members/" + bob.ID + "/role", url.Values{"role": {"owner"}}},
		{"/members/" + ana.ID + "/remove", nil},
		{"/invites", url.Values{"role": {"owner"}, "days": {"7"}}},
	} {
		res, body := bo.post(tt.path, tt.form)
		wantStatus(t, res, body, http.StatusForbidden)
	}
	if got := memberRoles(t, a.DB); got["ana@example.com"] != store.RoleOwner || got["bo@example.com"] != store.RoleViewer {
		t.Fatalf("roles=%v after refused changes", got)
	}

	// The last owner can be neither demoted nor removed.
	res, body = owner.post("/members/"+ana.ID+"/role", url.Values{"role": {"editor"}})
	wantStatus(t, res, body, http.StatusConflict)
	if got := formError(t, body); !strings.Contains(got, "Ana is the last owner") {
		t.Fatalf("form error=%q, want the last-owner rule", got)
	}
	res, body = owner.post("/members/"+ana.ID+"/remove", nil)
	wantStatus(t, res, body, http.StatusConflict)

	res, body = owner.post("/members/"+bob.ID+"/role", url.Values{"role": {"editor"}})
	wantRedirect(t, res, body, "/members")
	if got := memberRoles(t, a.DB)["bo@example.com"]; got != store.RoleEditor {
		t.Fatalf("Bo's role=%q, want editor", got)
	}
	res, body = owner.post("/members/"+bob.ID+"/remove", nil)
	wantRedirect(t, res, body, "/members")
	res, body = bo.get("/members")
	wantStatus(t, res, body, http.StatusForbidden)

	// An existing account joins by signing in and accepting.
	link = inviteLink(t, owner, "editor")
	res, body = bo.get(link)
	wantStatus(t, res, body, http.StatusOK)
	findOne(t, parseHTML(t, body), "form", "data-testid", "invite-join")
	res, body = bo.post(link, nil)
	wantRedirect(t, res, body, "/")
	if got := memberRoles(t, a.DB)["bo@example.com"]; got != store.RoleEditor {
		t.Fatalf("Bo's role after joining again=%q, want editor", got)
	}

	// Invites expire.
	link = inviteLink(t, owner, "viewer")
	clk.Add(7 * 24 * time.Hour)
	res, body = a.browser().get(link)
	wantStatus(t, res, body, http.StatusUnprocessableEntity)
	if !strings.Contains(body, "expired") {
		t.Fatal("an expired invite does not say so")
	}
	res, body = a.browser().get("/invite/not-a-token")
	wantStatus(t, res, body, http.StatusNotFound)
}

func TestTokensPage(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	a.setUp()
	b := a.browser()
	b.login("ana@example.com", ownerPassword)

	res, body := b.post("/settings/tokens", url.Values{"name": {""}, "scope": {"read"}, "expires_days": {"90"}})
	wantStatus(t, res, body, http.StatusUnprocessableEntity)
	res, body = b.post("/settings/tokens", url.Values{"name": {"ci"}, "scope": {"admin"}, "expires_days": {"90"}})
	wantStatus(t, res, body, http.StatusUnprocessableEntity)

	res, body = b.post("/settings/tokens", url.Values{"name": {"ci"}, "scope": {"read"}, "expires_days": {"90"}})
	wantStatus(t, res, body, http.StatusCreated)
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control=%q, want no-store", cc)
	}
	secret := attr(findOne(t, parseHTML(t, body), "input", "data-testid", "new-token-value"), "value")
	tok, err := a.DB.FindTokenBySecret(context.Background(), secret)
	if err != nil || tok.Name != "ci" || tok.Scope != store.ScopeRead || tok.ExpiresAt.IsZero() {
		t.Fatalf("token=%+v, %v", tok, err)
	}

	res, body = b.get("/settings/tokens")
	wantStatus(t, res, body, http.StatusOK)
	if strings.Contains(body, secret) {
		t.Fatal("the token is shown again after its creation")
	}
	row := findOne(t, parseHTML(t, body), "tr", "data-testid", "token")
	if !strings.Contains(textOf(row), "…"+secret[len(secret)-4:]) || !strings.Contains(textOf(row), "never") {
		t.Fatalf("token row %q, want its last 4 characters and 'never' used", textOf(row))
	}

	// Another person cannot revoke it.
	other, _ := a.DB.CreateUser(context.Background(), store.UserCreate{Email: "bo@example.com", Name: "Bo", Password: ownerPassword})
	a.DB.AddMember(context.Background(), a.DB.DefaultWorkspaceID(), other.ID, store.RoleOwner)
	bo := a.browser()
	bo.login("bo@example.com", ownerPassword)
	res, body = bo.post("/settings/tokens/"+tok.ID+"/revoke", nil)
	wantStatus(t, res, body, http.StatusNotFound)

	res, body = b.post("/settings/tokens/"+tok.ID+"/revoke", nil)
	wantRedirect(t, res, body, "/settings/tokens")
	_, body = b.get("/settings/tokens")
	if got := textOf(findOne(t, parseHTML(t, body), "", "data-testid", "token-state")); !strings.HasPrefix(got, "revoked") {
		t.Fatalf("state=%q, want revoked", got)
	}
	if _, err := a.DB.FindTokenBySecret(context.Background(), secret); err == nil {
		t.Fatal("a revoked token still authenticates")
	}
}

func TestAccountPagesNeedCSRF(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	a.setUp()
	// A cross-site form posting a sign-in (login CSRF) is refused.
	req := a.newRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"email": {"ana@example.com"}, "password": {ownerPassword}}.Encode()),
		http.Header{"Sec-Fetch-Site": {"cross-site"}})
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, body := a.browser().do(req)
	wantStatus(t, res, body, http.StatusForbidden)
}

func TestWorkspaceSwitch(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	ana := a.setUp()
	ctx := context.Background()
	other, err := a.DB.CreateWorkspace(ctx, "Side project")
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := a.DB.CreateWorkspace(ctx, "Not hers")
	if err := a.DB.AddMember(ctx, other.ID, ana.ID, store.RoleViewer); err != nil {
		t.Fatal(err)
	}
	b := a.browser()
	b.login("ana@example.com", ownerPassword)
	_, body := b.get("/members")
	if !strings.Contains(body, "Members of Acme") {
		t.Fatal("the first workspace is not shown after sign-in")
	}
	res, body := b.post("/workspace", url.Values{"workspace": {foreign.ID}})
	wantStatus(t, res, body, http.StatusNotFound)
	res, body = b.post("/workspace", url.Values{"workspace": {other.ID}})
	wantRedirect(t, res, body, "/")
	_, body = b.get("/members")
	if !strings.Contains(body, "Members of Side project") {
		t.Fatal("the switch did not change the workspace shown")
	}
	// A viewer there: no member management.
	res, body = b.post("/invites", url.Values{"role": {"viewer"}, "days": {"1"}})
	wantStatus(t, res, body, http.StatusForbidden)
}

func TestSessionRedirectsHTMX(t *testing.T) {
	a, _ := newAuthApp(t, web.AuthConfig{})
	a.setUp()
	res, body := a.browser().do(a.newRequest(http.MethodGet, "/account", nil, htmxSameOrigin))
	wantStatus(t, res, body, http.StatusUnauthorized)
	if got := res.Header.Get("HX-Redirect"); got != "/login?next=%2Faccount" {
		t.Fatalf("HX-Redirect=%q, want the sign-in page", got)
	}
}
