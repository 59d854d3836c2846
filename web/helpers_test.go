package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/net/html"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// TestMain fails the package if a test leaves goroutines behind: every
// stream, model call and connection must end with its request. The one
// exception is regexp2's clock (chroma's highlighting), which stops by
// itself about a second after the last match.
// The PostgreSQL server that benchmarks and BATON_TEST_DB=postgres share
// is stopped first, so that its connections are not counted.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(stopPostgresAfter{m}, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// stopPostgresAfter runs the tests, then stops storetest's shared server.
type stopPostgresAfter struct{ m *testing.M }

func (s stopPostgresAfter) Run() int { return storetest.Main(s.m) }

// testApp is a real server on real SQLite, served over a loopback listener.
type testApp struct {
	t   *testing.T
	DB  *store.DB
	Srv *web.Server
	TS  *httptest.Server
	// Client keeps cookies and does not follow redirects, so tests see
	// the 303s themselves. newApp signs it in as Owner.
	Client *http.Client
	// Owner is Ana, owner of the default workspace, when the app was made
	// with newApp or newAppWith; Token is a write token of hers, which
	// newRequest sends with every /api/ request that names no other.
	Owner *store.User
	Token string
}

// newApp starts the real router with p as the model. The server's own
// http.Server settings (timeouts) are used, as in production.
func newApp(t *testing.T, p agent.Provider) *testApp {
	t.Helper()
	// Tests are fast clients; the rate limit has its own test.
	return newAppWith(t, web.Config{Provider: p, ModelRate: 100})
}

// newAppWith is newApp with more of the config; DB, Logger, SessionKey
// and Version are filled in. Its Client is signed in as Owner, and API
// requests carry her write Token.
func newAppWith(t *testing.T, cfg web.Config) *testApp {
	t.Helper()
	a := newBareApp(t, cfg)
	a.signIn()
	return a
}

// signIn sets Baton up with Ana as owner of the default workspace, signs
// the app's Client in as her and makes her a write token for the API.
func (a *testApp) signIn() {
	a.t.Helper()
	a.Owner = a.setUp()
	req := a.newRequest(http.MethodPost, "/login", strings.NewReader(url.Values{
		"email": {a.Owner.Email}, "password": {ownerPassword}}.Encode()), sameOrigin)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, body := a.do(req); res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("sign in: status %d, want 303\n%s", res.StatusCode, body)
	}
	a.Token = a.newToken(a.Owner, a.DB.DefaultWorkspaceID(), store.ScopeWrite)
}

// newToken makes an API token of user in workspace and returns its secret.
func (a *testApp) newToken(user *store.User, workspaceID string, scope store.TokenScope) string {
	a.t.Helper()
	_, secret, err := a.DB.CreateToken(context.Background(), store.TokenCreate{
		UserID: user.ID, WorkspaceID: workspaceID, Name: "tests " + string(scope), Scope: scope})
	if err != nil {
		a.t.Fatal(err)
	}
	return secret
}

// newBareApp is newAppWith without an account: Baton is not set up yet.
func newBareApp(t *testing.T, cfg web.Config) *testApp {
	t.Helper()
	db := storetest.MustOpen(t)
	cfg.DB = db
	return serveApp(t, db, cfg)
}

// serveApp starts the real router on cfg.DB (db is the *store.DB under
// it), filling in Logger, SessionKey (the one every instance shares) and
// Version.
func serveApp(t *testing.T, db *store.DB, cfg web.Config) *testApp {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.SessionKey = []byte("0123456789abcdef0123456789abcdef")
	cfg.Version = "test"
	wire(&cfg)
	srv := web.New(cfg)
	ts := httptest.NewUnstartedServer(srv)
	ts.Config = srv.HTTPServer("")
	ts.Start()
	// Cleanups run last-in first-out: stop running replies, then close the
	// server (which waits for handlers), then the database (opened before).
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &testApp{t: t, DB: db, Srv: srv, TS: ts, Client: newClient(t, ts)}
}

// wire picks the extractor and the reversal judge as cmd/baton does: a
// provider that extracts by rules (offline) extracts and judges by them; a
// model does both.
func wire(cfg *web.Config) {
	if x, ok := cfg.Provider.(agent.Extractor); ok {
		if cfg.Extractor == nil {
			cfg.Extractor = x
		}
		if cfg.Summariser == nil {
			cfg.Summariser = agent.RuleSummariser
		}
	} else if cfg.Judge == nil {
		cfg.Judge = agent.ReversalJudge(cfg.Provider)
	}
}

// newClient returns a client of ts with its own cookie jar that does not
// follow redirects.
func newClient(t *testing.T, ts *httptest.Server) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *ts.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// do sends a request and returns the response with its body read.
func (a *testApp) do(req *http.Request) (*http.Response, string) {
	a.t.Helper()
	res, err := a.Client.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return res, string(b)
}

func (a *testApp) newRequest(method, path string, body io.Reader, header http.Header) *http.Request {
	a.t.Helper()
	req, err := http.NewRequest(method, a.TS.URL+path, body)
	if err != nil {
		a.t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if a.Token != "" && strings.HasPrefix(path, "/api/") && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	return req
}

// get fetches path as a browser navigating to it would.
func (a *testApp) get(path string) (*http.Response, string) {
	a.t.Helper()
	return a.do(a.newRequest(http.MethodGet, path, nil, nil))
}

// sameOrigin marks a request as a modern browser sends it from Baton's own pages.
var sameOrigin = http.Header{"Sec-Fetch-Site": {"same-origin"}}

// htmxSameOrigin is what htmx sends from Baton's own pages.
var htmxSameOrigin = http.Header{"Sec-Fetch-Site": {"same-origin"}, "Hx-Request": {"true"}}

// postForm posts an urlencoded form with the given extra headers.
func (a *testApp) postForm(path string, form url.Values, header http.Header) (*http.Response, string) {
	a.t.Helper()
	req := a.newRequest(http.MethodPost, path, strings.NewReader(form.Encode()), header)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return a.do(req)
}

// postJSON posts body (a string, sent as is) to the API.
func (a *testApp) postJSON(path, body string) (*http.Response, string) {
	a.t.Helper()
	req := a.newRequest(http.MethodPost, path, strings.NewReader(body), nil)
	req.Header.Set("Content-Type", "application/json")
	return a.do(req)
}

// createThread makes a thread through the store; tests of other routes
// need one to exist, not to be created over HTTP.
func (a *testApp) createThread(title string) *store.Thread {
	a.t.Helper()
	th, err := a.DB.CreateThread(context.Background(), store.ThreadCreate{Title: title})
	if err != nil {
		a.t.Fatal(err)
	}
	return th
}

// messages returns a thread's stored messages, oldest first.
func (a *testApp) messages(threadID string) []*store.Message {
	a.t.Helper()
	msgs, err := a.DB.FindMessages(context.Background(), store.MessageFilter{ThreadID: threadID})
	if err != nil {
		a.t.Fatal(err)
	}
	return msgs
}

// sendHTMX posts a message the way the composer does with htmx and returns
// the stored user message.
func (a *testApp) sendHTMX(threadID, content string) *store.Message {
	a.t.Helper()
	res, body := a.postForm("/t/"+threadID+"/messages", url.Values{"content": {content}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		a.t.Fatalf("POST messages: Status=%d, want %d; body: %s", got, want, body)
	}
	msgs := a.messages(threadID)
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != store.RoleUser {
		a.t.Fatalf("after POST messages, last stored message is not the user's: %v", msgs)
	}
	return msgs[len(msgs)-1]
}

// waitForReply polls the store until the reply to userID exists and
// returns it; it fails the test after timeout.
func (a *testApp) waitForReply(threadID, userID string, timeout time.Duration) *store.Message {
	a.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m, err := a.DB.FindReply(context.Background(), threadID, userID)
		if err == nil {
			return m
		}
		if !errors.Is(err, store.ErrNotFound) {
			a.t.Fatal(err)
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("no reply to %s stored within %v", userID, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// apiError is the API's error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeJSON[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	return v
}

// --- server-sent events ---

// sseEvent is one event of a stream; multi-line data is joined with "\n".
type sseEvent struct {
	Event string
	Data  string
}

// sseStream reads events from an open event-stream response.
type sseStream struct {
	Res *http.Response
	r   *bufio.Reader
}

// openStream opens the reply stream of a user message. Cancelling ctx
// drops the connection, as a closed browser tab does.
func (a *testApp) openStream(ctx context.Context, threadID, userID string) *sseStream {
	a.t.Helper()
	req := a.newRequest(http.MethodGet, "/t/"+threadID+"/messages/"+userID+"/reply", nil,
		// An explicit Accept-Encoding keeps the transport from hiding a
		// compressed (so buffered) stream by decompressing it.
		http.Header{"Accept": {"text/event-stream"}, "Accept-Encoding": {"gzip"}, "Sec-Fetch-Site": {"same-origin"}})
	req = req.WithContext(ctx)
	res, err := a.Client.Do(req)
	if err != nil {
		a.t.Fatalf("open stream: %v", err)
	}
	a.t.Cleanup(func() { res.Body.Close() })
	return &sseStream{Res: res, r: bufio.NewReader(res.Body)}
}

// next returns the next event, or io.EOF when the stream ends. Lines end
// with CRLF, LF or a lone CR, as the EventSource spec (and so the browser)
// reads them.
func (s *sseStream) next() (sseEvent, error) {
	var ev sseEvent
	var data []string
	for {
		line, err := s.line()
		if err != nil {
			if err == io.EOF && (ev.Event != "" || data != nil) {
				return ev, io.ErrUnexpectedEOF
			}
			return ev, err
		}
		switch {
		case line == "":
			if ev.Event == "" && data == nil {
				continue
			}
			ev.Data = strings.Join(data, "\n")
			return ev, nil
		case strings.HasPrefix(line, ":"): // a comment
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.Event = value
			case "data":
				data = append(data, value)
			}
		}
	}
}

func (s *sseStream) line() (string, error) {
	var b strings.Builder
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return b.String(), err
		}
		switch c {
		case '\n':
			return b.String(), nil
		case '\r':
			if next, err := s.r.Peek(1); err == nil && next[0] == '\n' {
				s.r.ReadByte()
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
}

// all reads events until the stream ends.
func (s *sseStream) all(t *testing.T) []sseEvent {
	t.Helper()
	var evs []sseEvent
	for {
		ev, err := s.next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("read stream after %d events: %v", len(evs), err)
		}
		evs = append(evs, ev)
	}
}

// --- fake models ---

// fakeModel is a scripted agent.Provider. It emits Deltas in order, then:
// blocks until its context ends (Block), fails with Fail (for the first
// FailCalls calls, or every call when FailCalls is 0), or returns the
// deltas as the reply. Calls are counted.
type fakeModel struct {
	Deltas    []string
	Block     bool
	Fail      *agent.Error
	FailCalls int
	// OnStream, when set, runs at the start of every call.
	OnStream func(ctx context.Context, req agent.Request)

	calls atomic.Int32
}

func newFakeModel(deltas ...string) *fakeModel {
	return &fakeModel{Deltas: deltas}
}

func (f *fakeModel) Name() string  { return "fake" }
func (f *fakeModel) Model() string { return "fake-1" }

// Calls is how many times Stream was called.
func (f *fakeModel) Calls() int { return int(f.calls.Load()) }

func (f *fakeModel) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	n := int(f.calls.Add(1))
	if f.OnStream != nil {
		f.OnStream(ctx, req)
	}
	var sent strings.Builder
	reply := func() *agent.Reply {
		return &agent.Reply{
			Parts:      []agent.Part{agent.TextPart{Text: sent.String()}},
			StopReason: agent.StopEnd,
			Usage:      agent.Usage{InputTokens: 7, OutputTokens: int64(len(f.Deltas)), ResponseID: "fake-response"},
			Model:      f.Model(),
		}
	}
	for _, d := range f.Deltas {
		if err := ctx.Err(); err != nil {
			return reply(), err
		}
		if err := emit(agent.Delta{Text: d}); err != nil {
			return reply(), err
		}
		sent.WriteString(d)
	}
	if f.Block {
		<-ctx.Done()
		return reply(), ctx.Err()
	}
	if f.Fail != nil && (f.FailCalls == 0 || n <= f.FailCalls) {
		return nil, f.Fail
	}
	return reply(), nil
}

var _ agent.Provider = (*fakeModel)(nil)

// --- HTML ---

// parseHTML parses a page or an htmx fragment.
func parseHTML(t *testing.T, s string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	return doc
}

// findAll returns the elements under n, in document order, with tag (any
// tag when "") and every attribute in attrs (pairs of name, value).
func findAll(n *html.Node, tag string, attrs ...string) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type != html.ElementNode || (tag != "" && d.Data != tag) {
			continue
		}
		ok := true
		for i := 0; i+1 < len(attrs); i += 2 {
			if v, has := attrOf(d, attrs[i]); !has || v != attrs[i+1] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}

// findOne is findAll that requires exactly one match.
func findOne(t *testing.T, n *html.Node, tag string, attrs ...string) *html.Node {
	t.Helper()
	got := findAll(n, tag, attrs...)
	if len(got) != 1 {
		t.Fatalf("found %d <%s %v>, want 1 in:\n%s", len(got), tag, attrs, render(n))
	}
	return got[0]
}

// byID returns the element with id, or nil.
func byID(n *html.Node, id string) *html.Node {
	if got := findAll(n, "", "id", id); len(got) > 0 {
		return got[0]
	}
	return nil
}

func attrOf(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func attr(n *html.Node, key string) string {
	v, _ := attrOf(n, key)
	return v
}

// textOf is the text content of n, as a browser shows it (unescaped).
func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

func render(n *html.Node) string {
	var b strings.Builder
	html.Render(&b, n)
	return b.String()
}
