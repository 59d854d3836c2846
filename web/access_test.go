package web_test

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
)

// access is who may use a route.
type access int

const (
	// public: anyone; the handler answers.
	public access = iota
	// account: anyone signed in, whatever their role.
	account
	// read: members of the workspace; objects of another one answer 404.
	read
	// edit: editors and owners of the workspace.
	edit
	// owner: owners of the workspace.
	owner
	// apiRead: any API token of the workspace; never a cookie.
	apiRead
	// apiWrite: a write token of an editor or owner. (Comments and reviews
	// also take a viewer's write token; the principals here cannot tell.)
	apiWrite
	// shared: anyone holding a share link; the token in the path decides,
	// and writes are checked by their origin, not a CSRF token.
	shared
	// mcpToken: any API token, read or write (every MCP call is a POST; a read
	// token is offered read tools only); never a cookie.
	mcpToken
)

// route is a route's access, and whether its path names an object of a
// workspace (which another workspace's member must not see).
type route struct {
	access access
	scoped bool
}

// accessTable lists every route. A route the server has and this table
// lacks fails TestAccessTable: a new route has to say who may use it.
var accessTable = map[string]route{
	"GET /healthz":        {public, false},
	"GET /static/*":       {public, false},
	"GET /setup":          {public, false},
	"POST /setup":         {public, false},
	"GET /login":          {public, false},
	"POST /login":         {public, false},
	"POST /logout":        {public, false},
	"GET /invite/:token":  {public, false},
	"POST /invite/:token": {public, false},

	"GET /schemas/handoff-envelope-1.0.json": {public, false},

	"GET /s/:token":                        {shared, false},
	"GET /s/:token/live":                   {shared, false},
	"GET /s/:token/comments":               {shared, false},
	"POST /s/:token/comments":              {shared, false},
	"POST /s/:token/comments/:cid/replies": {shared, false},

	"GET /mcp":    {mcpToken, false},
	"POST /mcp":   {mcpToken, false},
	"DELETE /mcp": {mcpToken, false},

	"GET /account":                     {account, false},
	"POST /account/password":           {account, false},
	"POST /workspace":                  {account, false},
	"POST /settings/tokens/:id/revoke": {account, false},
	"GET /settings/tokens":             {read, false},
	"POST /settings/tokens":            {read, false},
	"GET /members":                     {read, false},
	"POST /members/:user/role":         {owner, false},
	"POST /members/:user/remove":       {owner, false},
	"POST /invites":                    {owner, false},
	"POST /invites/:id/delete":         {owner, false},

	"GET /":                           {read, false},
	"POST /threads":                   {edit, false},
	"GET /t/:id":                      {read, true},
	"POST /t/:id/messages":            {edit, true},
	"GET /t/:id/messages/:mid/reply":  {read, true},
	"POST /t/:id/messages/:mid/stop":  {edit, true},
	"POST /t/:id/messages/:mid/retry": {edit, true},
	"POST /t/:id/messages/:mid/pin":   {edit, true},
	"POST /t/:id/messages/:mid/unpin": {edit, true},
	"POST /t/:id/extract":             {edit, true},
	"GET /t/:id/extract/events":       {read, true},
	"POST /t/:id/extract/cancel":      {edit, true},
	"GET /h/:id":                      {read, true},
	"POST /h/:id/freeze":              {edit, true},
	"GET /p/:id":                      {read, true},
	"GET /p/:id/events":               {read, true},
	"GET /p/:id/plan.md":              {read, true},
	"POST /p/:id/cancel":              {edit, true},
	"POST /p/:id/rerun":               {edit, true},
	"GET /memory":                     {read, false},
	"GET /decisions/adr.zip":          {read, false},
	"GET /decisions/:id":              {read, true},
	"GET /decisions/:id/adr.md":       {read, true},
	"POST /decisions/:id/supersede":   {edit, true},
	"POST /decisions/:id/reactivate":  {edit, true},
	"GET /files/*":                    {read, false},
	"POST /h/:id/:kind":               {edit, true},
	"GET /h/:id/:kind/:item":          {read, true},
	"GET /h/:id/:kind/:item/edit":     {edit, true},
	"POST /h/:id/:kind/:item":         {edit, true},
	"POST /h/:id/:kind/:item/delete":  {edit, true},

	"GET /archived":                         {read, false},
	"POST /t/:id/rename":                    {edit, true},
	"POST /t/:id/archive":                   {edit, true},
	"GET /t/:id/delete":                     {edit, true},
	"POST /t/:id/delete":                    {edit, true},
	"POST /t/:id/handoff":                   {edit, true},
	"GET /t/:id/handoffs/:hid":              {read, false}, // :hid is nobody's
	"GET /t/:id/handoffs/:hid/events":       {read, false},
	"POST /t/:id/handoffs/:hid/cancel":      {edit, true},
	"POST /t/:id/handoffs/:hid/accept":      {edit, true},
	"POST /t/:id/handoffs/:hid/decline":     {edit, true},
	"POST /h/:id/draft":                     {edit, true},
	"GET /h/:id/export.zip":                 {read, true},
	"GET /p/:id/export.zip":                 {read, true},
	"POST /p/:id/replan":                    {edit, true},
	"GET /h/:id/live":                       {read, true},
	"GET /h/:id/comments":                   {read, true},
	"POST /h/:id/comments":                  {read, true}, // viewers comment and review
	"POST /h/:id/comments/:cid/replies":     {read, true},
	"POST /h/:id/comments/:cid/resolve":     {read, true},
	"POST /h/:id/comments/:cid/reopen":      {read, true},
	"GET /h/:id/comments/:cid/edit":         {read, false}, // :cid is nobody's
	"POST /h/:id/comments/:cid/edit":        {read, true},
	"POST /h/:id/comments/:cid/delete":      {read, true},
	"POST /h/:id/reviews":                   {read, true},
	"POST /h/:id/review-requests":           {edit, true},
	"POST /h/:id/shares":                    {edit, true},
	"POST /h/:id/shares/:sid/revoke":        {edit, true},
	"POST /p/:id/shares":                    {edit, true},
	"GET /agents":                           {read, false},
	"GET /agents/feed":                      {read, false},
	"POST /agents/connect":                  {read, false},
	"GET /agents/entries/:id":               {read, false},
	"GET /agents/handoffs/:id":              {read, false},
	"POST /agents/handoffs/:id/acknowledge": {edit, false},

	"GET /api/v1/threads":                          {apiRead, false},
	"POST /api/v1/threads":                         {apiWrite, false},
	"GET /api/v1/threads/:id":                      {apiRead, true},
	"POST /api/v1/threads/:id/messages":            {apiWrite, true},
	"POST /api/v1/threads/:id/messages/:mid/pin":   {apiWrite, true},
	"DELETE /api/v1/threads/:id/messages/:mid/pin": {apiWrite, true},
	"POST /api/v1/threads/:id/handoff":             {apiWrite, true},
	"GET /api/v1/handoffs/:id":                     {apiRead, true},
	"POST /api/v1/handoffs/:id/freeze":             {apiWrite, true},
	"POST /api/v1/handoffs/:id/plan":               {apiWrite, true},
	"GET /api/v1/plans/:id":                        {apiRead, true},
	"GET /api/v1/decisions":                        {apiRead, false},
	"GET /api/v1/decisions/:id":                    {apiRead, true},
	"POST /api/v1/decisions/:id/supersede":         {apiWrite, true},
	"POST /api/v1/decisions/:id/reactivate":        {apiWrite, true},
	"GET /api/v1/files/*":                          {apiRead, false},
	"POST /api/v1/handoffs/:id/:kind":              {apiWrite, true},
	"PATCH /api/v1/handoffs/:id/:kind/:item":       {apiWrite, true},
	"DELETE /api/v1/handoffs/:id/:kind/:item":      {apiWrite, true},
	"GET /api/v1/snapshots/:id":                    {apiRead, true},

	"PATCH /api/v1/threads/:id":                   {apiWrite, true},
	"DELETE /api/v1/threads/:id":                  {apiWrite, true},
	"POST /api/v1/threads/:id/thread-handoffs":    {apiWrite, true},
	"POST /api/v1/thread-handoffs/:id/accept":     {apiWrite, false},
	"POST /api/v1/thread-handoffs/:id/decline":    {apiWrite, false},
	"GET /api/v1/handoffs/:id/comments":           {apiRead, true},
	"POST /api/v1/handoffs/:id/comments":          {apiWrite, true},
	"POST /api/v1/comments/:id/replies":           {apiWrite, false},
	"POST /api/v1/comments/:id/resolve":           {apiWrite, false},
	"POST /api/v1/comments/:id/reopen":            {apiWrite, false},
	"PATCH /api/v1/comments/:id":                  {apiWrite, false},
	"DELETE /api/v1/comments/:id":                 {apiWrite, false},
	"POST /api/v1/handoffs/:id/reviews":           {apiWrite, true},
	"POST /api/v1/handoffs/:id/shares":            {apiWrite, true},
	"POST /api/v1/plans/:id/shares":               {apiWrite, true},
	"GET /api/v1/shares":                          {apiRead, false},
	"DELETE /api/v1/shares/:id":                   {apiWrite, false},
	"POST /api/v1/blackboard":                     {apiWrite, false},
	"GET /api/v1/blackboard":                      {apiRead, false},
	"POST /api/v1/agent-handoffs":                 {apiWrite, false},
	"GET /api/v1/agent-handoffs":                  {apiRead, false},
	"GET /api/v1/agent-handoffs/inbox":            {apiRead, false},
	"GET /api/v1/agent-handoffs/:id":              {apiRead, false},
	"GET /api/v1/agent-handoffs/:id/envelope":     {apiRead, false},
	"POST /api/v1/agent-handoffs/:id/acknowledge": {apiWrite, false},
	"POST /api/v1/agent-handoffs/:id/claim":       {apiWrite, false},
	"GET /api/v1/handoffs/:id/envelope":           {apiRead, true},
	"GET /api/v1/plans/:id/envelope":              {apiRead, true},
	"POST /api/v1/envelopes":                      {apiWrite, false},
	"POST /api/v1/envelopes/validate":             {apiWrite, false}, // a read token may not POST
}

// Who asks: the six principals of the access table.
const (
	asOwner      = "owner of A"
	asViewer     = "viewer of A"
	asOther      = "member of B only"
	asAnonymous  = "anonymous"
	asReadToken  = "read token of A"
	asWriteToken = "write token of A"
)

var principals = []string{asOwner, asViewer, asOther, asAnonymous, asReadToken, asWriteToken}

// Special expectations besides a status code.
const (
	wantRan   = 0  // the handler ran: no 401 or 403, no sign-in, no 5xx
	wantLogin = -1 // a 303 to the sign-in page
)

// expected returns what principal gets from a route called with method.
func (r route) expected(method, principal string) int {
	token := principal == asReadToken || principal == asWriteToken
	switch r.access {
	case shared:
		return wantRan
	case mcpToken:
		if token {
			return wantRan
		}
		return http.StatusUnauthorized
	case public:
		if token && method != http.MethodGet {
			return http.StatusForbidden // a browser form without its CSRF token
		}
		return wantRan
	case apiRead, apiWrite:
		switch {
		case principal == asWriteToken:
			return wantRan
		case principal == asReadToken && r.access == apiRead:
			return wantRan
		case principal == asReadToken:
			return http.StatusForbidden
		}
		return http.StatusUnauthorized // no token: a cookie is never enough
	}
	switch {
	case token && method != http.MethodGet:
		return http.StatusForbidden // no CSRF token: refused before anything else
	case token, principal == asAnonymous:
		return wantLogin // tokens are not for pages
	case r.access == edit && principal == asViewer, r.access == owner && principal == asViewer:
		return http.StatusForbidden
	case r.scoped && principal == asOther:
		return http.StatusNotFound
	}
	return wantRan
}

// accessFixture is workspace A (Ana owns it, Vic views it) with one of
// everything, and workspace B of Bob.
type accessFixture struct {
	app                                                     *testApp
	thread, question, answer, handoff, item, snapshot, plan string
	record                                                  string
	browsers                                                map[string]*browser
	tokens                                                  map[string]string
}

func newAccessFixture(t *testing.T) *accessFixture {
	t.Helper()
	ctx := context.Background()
	app := newApp(t, newMemoryModel())
	rec := app.memCaptureJWT()
	f := &accessFixture{app: app, thread: rec.ThreadID, handoff: rec.HandoffID, snapshot: rec.SnapshotID, record: rec.ID}
	for _, m := range app.messages(f.thread) {
		if m.Role == store.RoleUser && f.question == "" {
			f.question = m.ID
		} else if m.Role == store.RoleAssistant && f.answer == "" {
			f.answer = m.ID
		}
	}
	h, err := app.DB.FindHandoffByID(ctx, f.handoff)
	if err != nil {
		t.Fatal(err)
	}
	f.item = h.Decisions[0].ID
	plan, err := app.DB.CreatePlan(ctx, f.snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.FinishPlan(ctx, plan.ID, store.PlanFinish{Status: store.PlanComplete, Markdown: "# Plan\n\n1. Sign.\n",
		Coverage: store.Coverage{Covered: []string{h.Decisions[0].Label}, Uncovered: []string{}}}); err != nil {
		t.Fatal(err)
	}
	f.plan = plan.ID

	addUser := func(email, name, workspace string, role store.MemberRole) {
		t.Helper()
		if _, _, err := app.DB.AddUser(ctx, store.UserAdd{User: store.UserCreate{Email: email, Name: name, Password: ownerPassword},
			Workspace: workspace, Role: role}); err != nil {
			t.Fatal(err)
		}
	}
	addUser("vic@example.com", "Vic", "", store.RoleViewer)
	addUser("bob@example.com", "Bob", "Side project", store.RoleOwner)
	f.browsers = map[string]*browser{asOwner: app.browser(), asViewer: app.browser(), asOther: app.browser(), asAnonymous: app.browser()}
	f.browsers[asOwner].login(app.Owner.Email, ownerPassword)
	f.browsers[asViewer].login("vic@example.com", ownerPassword)
	f.browsers[asOther].login("bob@example.com", ownerPassword)
	f.tokens = map[string]string{
		asReadToken:  app.newToken(app.Owner, app.DB.DefaultWorkspaceID(), store.ScopeRead),
		asWriteToken: app.Token,
	}
	// From here on, requests carry only the credentials each principal has.
	app.Token = ""
	return f
}

// path fills a route's parameters with the fixture's objects.
func (f *accessFixture) path(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		prev := ""
		if i > 0 {
			prev = segs[i-1]
		}
		switch s {
		case ":id":
			switch prev {
			case "t", "threads":
				segs[i] = f.thread
			case "h", "handoffs":
				segs[i] = f.handoff
			case "p", "plans":
				segs[i] = f.plan
			case "decisions":
				segs[i] = f.record
			case "snapshots":
				segs[i] = f.snapshot
			default: // tokens and invites of nobody
				segs[i] = "nope"
			}
		case ":mid":
			segs[i] = f.answer
			if strings.HasSuffix(pattern, "/reply") || strings.HasSuffix(pattern, "/stop") {
				segs[i] = f.question
			}
		case ":kind":
			segs[i] = "decisions"
		case ":item":
			segs[i] = f.item
		case ":token", ":user", ":hid", ":cid", ":sid":
			segs[i] = "nope"
		case "*":
			switch {
			case strings.HasPrefix(pattern, "/api/v1/files/"):
				segs[i] = "src/auth/jwt.ts/relationships"
			case strings.HasPrefix(pattern, "/files/"):
				segs[i] = "src/auth/jwt.ts"
			default:
				segs[i] = "nope.css"
			}
		}
	}
	return strings.Join(segs, "/")
}

// send makes one request of a route as principal.
func (f *accessFixture) send(t *testing.T, method, pattern, principal string) (*http.Response, string) {
	t.Helper()
	a := f.app
	path := f.path(pattern)
	if pattern == "/h/:id/comments" && method == http.MethodGet {
		path += "?kind=general" // a comment thread is one anchor's
	}
	api := strings.HasPrefix(pattern, "/api/")
	var body string
	header := http.Header{}
	switch {
	case method == http.MethodGet:
	case api:
		body = "{}"
		header.Set("Content-Type", "application/json")
	default:
		header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	b, isBrowser := f.browsers[principal]
	if isBrowser {
		header.Set("Sec-Fetch-Site", "same-origin")
	} else {
		header.Set("Authorization", "Bearer "+f.tokens[principal])
		b = a.browser() // no cookies
	}
	req := a.newRequest(method, path, strings.NewReader(body), header)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if method == http.MethodGet && strings.HasSuffix(pattern, "/live") {
		// A live stream does not end: its status and headers are the answer.
		res, err := b.c.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		res.Body.Close()
		return res, ""
	}
	return b.do(req.WithContext(ctx))
}

// TestAccessTable sends every route (from the router itself) as each of
// the six principals and checks who gets in. Pages go through GETs first,
// then the changes, and sign-out last, so that no change hides another.
func TestAccessTable(t *testing.T) {
	f := newAccessFixture(t)
	var routes []*echo.Route
	seen := map[string]bool{}
	for _, r := range f.app.Srv.Routes() {
		if r.Method == echo.RouteNotFound {
			continue
		}
		key := r.Method + " " + r.Path
		if _, ok := accessTable[key]; !ok {
			t.Errorf("route %s is not in accessTable: say who may use it", key)
			continue
		}
		seen[key] = true
		routes = append(routes, r)
	}
	for key := range accessTable {
		if !seen[key] {
			t.Errorf("accessTable lists %s, which the server does not have", key)
		}
	}
	order := func(r *echo.Route) int {
		switch {
		case r.Path == "/logout":
			return 3
		case r.Path == "/t/:id/delete" && r.Method == http.MethodPost, r.Path == "/api/v1/threads/:id" && r.Method == http.MethodDelete:
			return 2 // deleting the thread last, so that it hides no other change
		case r.Method == http.MethodGet:
			return 0
		}
		return 1
	}
	sort.SliceStable(routes, func(i, j int) bool { return order(routes[i]) < order(routes[j]) })

	for _, r := range routes {
		key := r.Method + " " + r.Path
		rt := accessTable[key]
		for _, who := range principals {
			res, body := f.send(t, r.Method, r.Path, who)
			got, want := res.StatusCode, rt.expected(r.Method, who)
			loc := res.Header.Get("Location")
			toLogin := got == http.StatusSeeOther && strings.HasPrefix(loc, "/login")
			var ok bool
			switch want {
			case wantRan:
				ok = got != http.StatusUnauthorized && got != http.StatusForbidden && got < 500 && !toLogin
				if r.Path == "/login" || r.Path == "/logout" || r.Path == "/setup" {
					ok = got < 500 // their own answer may well be the sign-in page
				}
				if ok && rt.scoped && r.Method == http.MethodGet {
					ok = got == http.StatusOK // the object is there for those who may see it
				}
			case wantLogin:
				ok = toLogin
			default:
				ok = got == want
			}
			if !ok {
				t.Errorf("%s as %s: status %d (Location %q), want %s\n%.300s", key, who, got, loc, describe(want), body)
			}
		}
	}
}

func describe(want int) string {
	switch want {
	case wantRan:
		return "the handler's answer (no 401, 403, sign-in or 5xx)"
	case wantLogin:
		return "303 to /login"
	}
	return http.StatusText(want)
}

// TestUnknownPaths pins the rule for paths no route has: a signed-in
// person gets 404; an anonymous one is sent to sign in (the page might
// exist); the API answers 401 without a token and 404 with one.
func TestUnknownPaths(t *testing.T) {
	a := newApp(t, newFakeModel("ok"))
	res, body := a.get("/no/such/page")
	wantStatus(t, res, body, http.StatusNotFound)
	res, body = a.get("/t/nope")
	wantStatus(t, res, body, http.StatusNotFound)
	anon := a.browser()
	res, body = anon.get("/no/such/page")
	wantRedirect(t, res, body, "/login?next=%2Fno%2Fsuch%2Fpage")
	res, body = a.get("/api/v1/nothing")
	wantStatus(t, res, body, http.StatusNotFound)
	res, body = anon.do(a.newRequest(http.MethodGet, "/api/v1/nothing", nil, http.Header{"Authorization": {"Bearer nope"}}))
	wantStatus(t, res, body, http.StatusUnauthorized)
}

// TestOtherWorkspaceIsNotFound checks scoping with Bob's own token and
// session in workspace B: every object of A answers 404 exactly as a
// missing one, and A's lists show nothing of A.
func TestOtherWorkspaceIsNotFound(t *testing.T) {
	f := newAccessFixture(t)
	a := f.app
	bob, err := a.DB.FindUserByEmail(context.Background(), "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := a.DB.FindMemberships(context.Background(), store.MembershipFilter{UserID: bob.ID})
	if err != nil || len(ms) != 1 {
		t.Fatalf("Bob's memberships: %v, %v", ms, err)
	}
	bobToken := a.newToken(bob, ms[0].WorkspaceID, store.ScopeWrite)
	apiAs := func(method, path, token string) (*http.Response, string) {
		req := a.newRequest(method, path, strings.NewReader("{}"), http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}})
		return a.browser().do(req)
	}
	for _, p := range []string{"/api/v1/threads/" + f.thread, "/api/v1/handoffs/" + f.handoff, "/api/v1/plans/" + f.plan,
		"/api/v1/decisions/" + f.record, "/api/v1/snapshots/" + f.snapshot} {
		res, body := apiAs(http.MethodGet, p, bobToken)
		wantStatus(t, res, body, http.StatusNotFound)
		// Exactly as a missing one.
		missing := p[:strings.LastIndex(p, "/")+1] + "0000000000000000"
		resM, bodyM := apiAs(http.MethodGet, missing, bobToken)
		if resM.StatusCode != http.StatusNotFound || decodeJSON[apiError](t, bodyM).Error.Message != decodeJSON[apiError](t, body).Error.Message {
			t.Errorf("GET %s: %s; a missing one: %s — want the same answer", p, body, bodyM)
		}
	}
	res, body := apiAs(http.MethodPost, "/api/v1/threads/"+f.thread+"/messages", bobToken)
	wantStatus(t, res, body, http.StatusNotFound)
	for _, p := range []string{"/api/v1/threads", "/api/v1/decisions", "/api/v1/files/src/auth/jwt.ts/relationships"} {
		res, body := apiAs(http.MethodGet, p, bobToken)
		if res.StatusCode >= 500 || strings.Contains(body, f.thread) || strings.Contains(body, f.record) {
			t.Errorf("GET %s as Bob: %d %s; want nothing of workspace A", p, res.StatusCode, body)
		}
	}
	bobPages := f.browsers[asOther]
	for _, p := range []string{"/", "/memory?q=jwt", "/files/src/auth/jwt.ts"} {
		res, body := bobPages.get(p)
		if res.StatusCode != http.StatusOK || strings.Contains(body, f.thread) || strings.Contains(body, f.record) {
			t.Errorf("GET %s as Bob: %d; want the page without workspace A's objects", p, res.StatusCode)
		}
	}
	// A thread Bob creates is in his workspace, and Ana does not see it.
	res, body = apiAs(http.MethodPost, "/api/v1/threads", bobToken)
	wantStatus(t, res, body, http.StatusCreated)
	id := decodeJSON[struct {
		ID          string `json:"id"`
		WorkspaceID string `json:"workspaceId"`
	}](t, body)
	if id.WorkspaceID != ms[0].WorkspaceID {
		t.Fatalf("Bob's new thread is in %s, want his workspace %s", id.WorkspaceID, ms[0].WorkspaceID)
	}
	res, body = f.browsers[asOwner].get("/t/" + id.ID)
	wantStatus(t, res, body, http.StatusNotFound)
	// A viewer's write token may not write.
	vic, err := a.DB.FindUserByEmail(context.Background(), "vic@example.com")
	if err != nil {
		t.Fatal(err)
	}
	res, body = apiAs(http.MethodPost, "/api/v1/threads", a.newToken(vic, a.DB.DefaultWorkspaceID(), store.ScopeWrite))
	wantStatus(t, res, body, http.StatusForbidden)
}

// TestReplyStreamNotStartedCrossSite checks that only Baton's own page
// starts a reply by GET: another site's request (or one without Fetch
// Metadata) starts nothing.
func TestReplyStreamNotStartedCrossSite(t *testing.T) {
	model := newFakeModel("Hi")
	a := newApp(t, model)
	th := a.createThread("Cross-site")
	user := a.sendHTMX(th.ID, "Hello")
	for _, h := range []http.Header{{"Sec-Fetch-Site": {"cross-site"}}, {"Sec-Fetch-Site": {"same-site"}}, {}} {
		res, body := a.do(a.newRequest(http.MethodGet, "/t/"+th.ID+"/messages/"+user.ID+"/reply", nil, h))
		wantStatus(t, res, body, http.StatusForbidden)
	}
	if model.Calls() != 0 {
		t.Fatalf("model calls=%d, want 0: a cross-site GET started the reply", model.Calls())
	}
	if _, err := a.DB.FindReply(context.Background(), th.ID, user.ID); err == nil {
		t.Fatal("a reply was stored")
	}
}

// TestViewerSeesNoEditControls checks the pages a viewer reads: the same
// content, none of the forms that change it; and the header names who is
// signed in, where, with a way to sign out.
func TestViewerSeesNoEditControls(t *testing.T) {
	f := newAccessFixture(t)
	controls := map[string][]string{ // page → ids or test ids of edit controls
		"/":                      {"new-thread"},
		"/t/" + f.thread:         {"composer", "ready-to-plan", "pin", "unpin"},
		"/h/" + f.handoff:        {"add-decision", "add-file", "add-risk", "edit", "freeze", "edit-new-draft", "start-planning"},
		"/p/" + f.plan:           {"rerun"},
		"/decisions/" + f.record: {"supersede", "reactivate"},
	}
	has := func(body, id string) bool {
		doc := parseHTML(t, body)
		return byID(doc, id) != nil || len(findAll(doc, "", "data-testid", id)) > 0
	}
	for page, ids := range controls {
		res, body := f.browsers[asViewer].get(page)
		wantStatus(t, res, body, http.StatusOK)
		for _, id := range ids {
			if has(body, id) {
				t.Errorf("%s shows %q to a viewer", page, id)
			}
		}
		if strings.HasPrefix(page, "/decisions/") {
			continue // with one decision there is nothing to supersede it by
		}
		_, body = f.browsers[asOwner].get(page)
		var shown bool
		for _, id := range ids {
			shown = shown || has(body, id)
		}
		if !shown {
			t.Errorf("%s shows none of %v to the owner", page, ids)
		}
	}
	_, body := f.browsers[asViewer].get("/")
	doc := parseHTML(t, body)
	if got := textOf(findOne(t, doc, "", "data-testid", "user-name")); got != "Vic" {
		t.Errorf("user menu names %q, want Vic", got)
	}
	if got := textOf(findOne(t, doc, "", "data-testid", "workspace-name")); got != "Acme" {
		t.Errorf("header workspace %q, want Acme", got)
	}
	findOne(t, doc, "", "data-testid", "sign-out")
}

// TestReviewShowsWhoEdited checks authorship on the review screen: items a
// person added through the API say who and when; extracted ones do not.
func TestReviewShowsWhoEdited(t *testing.T) {
	a := newApp(t, newMemoryModel())
	id := a.memHandoff("Authorship", []string{"Use Postgres 16"}, "db/schema.sql")
	res, body := a.get("/h/" + id)
	wantStatus(t, res, body, http.StatusOK)
	got := findAll(parseHTML(t, body), "", "data-testid", "edited-by")
	if len(got) != 2 {
		t.Fatalf("%d edited-by notes, want 2 (the decision and the file)", len(got))
	}
	for _, n := range got {
		if text := textOf(n); text != "added by Ana, just now" {
			t.Errorf("note %q, want %q", text, "added by Ana, just now")
		}
	}
	// Editing the decision makes it "edited by".
	h, err := a.DB.FindHandoffByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	res, body = a.do(a.newRequest(http.MethodPatch, "/api/v1/handoffs/"+id+"/decisions/"+h.Decisions[0].ID,
		strings.NewReader(`{"content":"Use Postgres 17","version":`+strconv.Itoa(h.Version)+`}`), http.Header{"Content-Type": {"application/json"}}))
	wantStatus(t, res, body, http.StatusOK)
	_, body = a.get("/h/" + id)
	if text := textOf(findAll(parseHTML(t, body), "", "data-testid", "edited-by")[0]); text != "edited by Ana, just now" {
		t.Errorf("after the edit: %q, want %q", text, "edited by Ana, just now")
	}
}
