package web_test

// Benchmarks for the performance targets of DESIGN.md ("Performance"). They
// measure and report; they never assert timings. Run them with `make bench`.

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/html"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// benchMessages is the size of the brainstorm the page benchmarks render
// (DESIGN: 40 messages, 12 decisions).
const (
	benchMessages = 40
	benchPins     = 12
)

// benchUserTurns are user messages in the markdown people write: paragraphs,
// lists, code spans and a fenced code block.
var benchUserTurns = []string{
	"We're moving the API off `express-session` to JWTs. Session setup lives in `server/src/middleware/session.ts` " +
		"and login in `server/src/routes/auth.ts`.\n\nWhat I care about:\n\n- no downtime during the switch\n" +
		"- mobile clients keep working\n- logout actually revokes something\n\nCan you sketch a plan?",
	"Only this API verifies tokens, so **HS256** is fine. The secret comes from `JWT_SECRET`. Here's the current middleware:\n\n" +
		"```ts\nexport function requireAuth(req, res, next) {\n  if (!req.session?.userId) {\n    return res.status(401).json({ error: \"login\" });\n  }\n  next();\n}\n```\n\n" +
		"How would the JWT version look?",
	"Refresh tokens should live *30 days* with rotation. Two options I see:\n\n1. Both tokens in `localStorage`\n" +
		"2. Refresh token in an `HttpOnly` cookie, access token in memory\n\nSecurity will veto (1), I think. Thoughts?",
	"Change of plan: security vetoed `localStorage`, so option 2. I'm worried about the nginx config at " +
		"`/etc/nginx/sites-enabled/api.conf` rewriting the cookie path. See <https://nginx.org/en/docs/http/ngx_http_proxy_module.html>.",
	"OK, do the staging smoke test. It should:\n\n- log in with the seeded user\n- call `/auth/refresh` twice\n" +
		"- check that the first refresh token is rejected the second time\n\n> Rotation without reuse detection is just renaming.",
}

// benchClock moves a minute per reading so that seeded messages keep
// their order however fast they are written.
func benchClock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Minute) }
}

// seedBrainstorm writes a thread of n messages through the real store:
// user turns from benchUserTurns, each answered by the offline provider, and
// pins benchPins of the replies as decisions.
func seedBrainstorm(b *testing.B, db *store.DB, n int) *store.Thread {
	b.Helper()
	ctx := context.Background()
	db.SetClock(benchClock())
	t, err := db.CreateThread(ctx, store.ThreadCreate{Title: "JWT migration"})
	if err != nil {
		b.Fatal(err)
	}
	p := offline.New()
	var history []agent.Message
	var replies []*store.Message
	for i := 0; i < n/2; i++ {
		content := fmt.Sprintf("%s\n\n(turn %d)", benchUserTurns[i%len(benchUserTurns)], i+1)
		if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: t.ID, Role: store.RoleUser, Content: content}); err != nil {
			b.Fatal(err)
		}
		history = append(history, agent.Text(agent.RoleUser, content))
		reply, err := p.Stream(ctx, agent.BrainstormRequest(history, ""), func(agent.Delta) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		m, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: t.ID, Role: store.RoleAssistant,
			Content: reply.Text(), Model: p.Model(), InputTokens: reply.Usage.InputTokens, OutputTokens: reply.Usage.OutputTokens})
		if err != nil {
			b.Fatal(err)
		}
		history = append(history, agent.Text(agent.RoleAssistant, reply.Text()))
		replies = append(replies, m)
	}
	for _, m := range replies[:min(benchPins, len(replies))] {
		if _, _, err := db.PinMessage(ctx, t.ID, m.ID); err != nil {
			b.Fatal(err)
		}
	}
	return t
}

// newBenchServer is the real server on real SQLite. Request logs are
// formatted as in production, then dropped.
func newBenchServer(b *testing.B, db *store.DB, p agent.Provider) *web.Server {
	b.Helper()
	x, _ := p.(agent.Extractor) // the offline provider extracts by rules
	srv := web.New(web.Config{
		DB:         db,
		Provider:   p,
		Extractor:  x,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		SessionKey: []byte("0123456789abcdef0123456789abcdef"),
		Version:    "bench",
		// Benchmarks are fast clients; the limit is not what they measure.
		ModelRate: 1e6,
	})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			b.Errorf("Shutdown: %v", err)
		}
	})
	return srv
}

// serveBench serves h over loopback with the server's production
// http.Server settings when h is a *web.Server.
func serveBench(b *testing.B, h http.Handler) *httptest.Server {
	b.Helper()
	ts := httptest.NewUnstartedServer(h)
	if srv, ok := h.(*web.Server); ok {
		ts.Config = srv.HTTPServer("")
	}
	ts.Start()
	b.Cleanup(ts.Close)
	return ts
}

// benchSignIn sets db up with an owner (unless it is) and signs in through
// h: it returns the cookies a signed-in browser holds (session and CSRF).
func benchSignIn(b *testing.B, db *store.DB, h http.Handler) []*http.Cookie {
	b.Helper()
	const email, password = "ana@example.com", "correct horse battery"
	// Sessions are checked against the server's real clock: the seeding
	// clock (benchClock) would make this one idle from the start.
	db.SetClock(func() time.Time { return time.Now().UTC() })
	if _, err := db.SetUp(context.Background(), store.Setup{
		Owner: store.UserCreate{Email: email, Name: "Ana", Password: password}, Workspace: "Acme"}); err != nil && !errors.Is(err, store.ErrConflict) {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "http://localhost/login", strings.NewReader(url.Values{"email": {email}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		b.Fatalf("sign in: status %d, want 303: %s", rec.Code, rec.Body)
	}
	cookies := rec.Result().Cookies()
	req = httptest.NewRequest(http.MethodGet, "http://localhost/", nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.Name == "baton_csrf" {
			return append(cookies, c)
		}
	}
	b.Fatal("GET / set no baton_csrf cookie")
	return nil
}

// BenchmarkThreadPageRender is the server-side cost of GET /t/{id} for a
// brainstorm of 40 messages, through the whole router and middleware:
// as HTML, gzipped as browsers ask for it, and with the markdown cache
// empty (the first view after a restart).
func BenchmarkThreadPageRender(b *testing.B) {
	db := storetest.MustOpen(b)
	thread := seedBrainstorm(b, db, benchMessages)
	srv := newBenchServer(b, db, offline.New())
	cookies := benchSignIn(b, db, srv)
	path := "/t/" + thread.ID

	get := func(b *testing.B, h http.Handler, compressed bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		if compressed {
			req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: status %d, want 200: %s", path, rec.Code, rec.Body)
		}
		return rec
	}
	// The page must be the one described: every message rendered.
	if got := strings.Count(get(b, srv, false).Body.String(), `<article id="msg-`); got != benchMessages {
		b.Fatalf("page shows %d messages, want %d", got, benchMessages)
	}

	for _, compressed := range []bool{false, true} {
		name := "html"
		if compressed {
			name = "gzip"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			var cpu cpuMeter
			cpu.begin()
			for b.Loop() {
				size = get(b, srv, compressed).Body.Len()
			}
			cpu.end()
			b.ReportMetric(float64(size), "resp-B")
			if cpu.ok {
				b.ReportMetric(float64(cpu.total.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
	b.Run("markdown-cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			cold := newBenchServer(b, db, offline.New())
			b.StartTimer()
			get(b, cold, false)
		}
	})
}

// BenchmarkServerThroughput compares whole-server requests per second for
// GET /t/{id} (40 messages, 12 decisions, gzipped) with a bare Echo
// hello-world, both over loopback HTTP with the same keep-alive clients in
// the same run (DESIGN: the page at ≥ 10% of hello-world). Then it offers
// the page a steady 500 req/s and reports the latency percentiles (DESIGN:
// p99 ≤ 10 ms). One op is one whole measurement round, so ns/op and the
// allocation figures are not per request; read the custom metrics.
func BenchmarkServerThroughput(b *testing.B) {
	db := storetest.MustOpen(b)
	thread := seedBrainstorm(b, db, benchMessages)
	srv := newBenchServer(b, db, offline.New())
	cookies := benchSignIn(b, db, srv)
	baton := serveBench(b, srv)

	hello := echo.New()
	hello.HideBanner, hello.HidePort = true, true
	hello.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "Hello, World!") })
	bare := serveBench(b, hello)

	clients := max(16, 8*runtime.GOMAXPROCS(0))
	// Compressed bodies are counted, not inflated: inflating is the
	// browser's work, and here it would take CPU from the server.
	tr := &http.Transport{MaxIdleConns: 4 * clients, MaxIdleConnsPerHost: 4 * clients, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}

	newReq := func(url string) func() *http.Request {
		return func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Accept-Encoding", "gzip, deflate, br")
			if strings.HasPrefix(url, baton.URL) {
				for _, c := range cookies {
					req.AddCookie(c)
				}
			}
			return req
		}
	}
	page, helloReq := newReq(baton.URL+"/t/"+thread.ID), newReq(bare.URL+"/")

	// Warm up connections, caches and the markdown renderer.
	closedLoop(b, client, page, clients, 300*time.Millisecond)
	closedLoop(b, client, helloReq, clients, 300*time.Millisecond)

	// Short alternating rounds, so that whatever else the machine is
	// doing weighs on both sides of the ratio alike.
	const round = 500 * time.Millisecond
	var helloN, pageN int
	var helloT, pageT time.Duration
	var helloCPU, pageCPU cpuMeter
	var lat []time.Duration
	for b.Loop() {
		for range 3 {
			helloCPU.begin()
			n, d := closedLoop(b, client, helloReq, clients, round)
			helloCPU.end()
			helloN, helloT = helloN+n, helloT+d
			pageCPU.begin()
			n, d = closedLoop(b, client, page, clients, round)
			pageCPU.end()
			pageN, pageT = pageN+n, pageT+d
		}
		steadyRate(b, client, page, 500, 300*time.Millisecond) // warm-up, discarded
		lat = append(lat, steadyRate(b, client, page, 500, 3*time.Second)...)
	}
	helloRate := float64(helloN) / helloT.Seconds()
	pageRate := float64(pageN) / pageT.Seconds()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(helloRate, "hello-req/s")
	b.ReportMetric(pageRate, "page-req/s")
	b.ReportMetric(pageRate/helloRate, "page/hello")
	if helloCPU.ok && pageCPU.ok {
		// Server and client share the process: this is the whole cost of a
		// request on the machine, which bounds req/s when nothing else runs.
		helloCost := float64(helloCPU.total.Microseconds()) / float64(helloN)
		pageCost := float64(pageCPU.total.Microseconds()) / float64(pageN)
		b.ReportMetric(helloCost, "hello-cpu-µs/req")
		b.ReportMetric(pageCost, "page-cpu-µs/req")
		b.ReportMetric(helloCost/pageCost, "page/hello-by-cpu")
	}
	slices.Sort(lat)
	b.ReportMetric(ms(percentile(lat, 0.50)), "p50-ms@500rps")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms@500rps")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms@500rps")
}

// closedLoop has n clients send requests back to back for d and returns
// how many completed and how long it took. Any failure stops the benchmark.
func closedLoop(b *testing.B, client *http.Client, newReq func() *http.Request, n int, d time.Duration) (int, time.Duration) {
	b.Helper()
	var done atomic.Int64
	var failed atomic.Value
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := fetch(client, newReq()); err != nil {
					failed.Store(err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return int(done.Load()), elapsed
}

// steadyRate sends requests at rate per second for d, whatever the server
// does (an open loop), and returns each request's latency measured from
// when it was due to be sent, so that a stalled server is not hidden by
// requests that were sent late.
func steadyRate(b *testing.B, client *http.Client, newReq func() *http.Request, rate int, d time.Duration) []time.Duration {
	b.Helper()
	total := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	lat := make([]time.Duration, total)
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(due))
		wg.Go(func() {
			if err := fetch(client, newReq()); err != nil {
				failed.Store(err)
			}
			lat[i] = time.Since(due)
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return lat
}

// fetch sends req and reads the whole response, which must be a 200.
func fetch(client *http.Client, req *http.Request) error {
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d, want 200", req.URL.Path, res.StatusCode)
	}
	return nil
}

// processCPU is the CPU time (user and system) this process has used, from
// /proc on Linux. Other processes on a busy machine inflate wall-clock
// figures but not this, so per-request CPU is the steadier measure. ok is
// false where /proc is missing.
func processCPU() (cpu time.Duration, ok bool) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces; fields count from
	// after it: utime and stime are fields 14 and 15 of the line.
	_, rest, found := strings.Cut(string(stat), ") ")
	f := strings.Fields(rest)
	if !found || len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const userHZ = 100 // clock ticks per second: 100 on every Linux Go supports
	return time.Duration(utime+stime) * time.Second / userHZ, true
}

// cpuMeter adds up the process CPU time of measured stretches.
type cpuMeter struct {
	total time.Duration
	start time.Duration
	ok    bool
}

func (m *cpuMeter) begin() { m.start, m.ok = processCPU() }

func (m *cpuMeter) end() {
	if now, ok := processCPU(); ok && m.ok {
		m.total += now - m.start
	} else {
		m.ok = false
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// deltaModel is a provider that streams a fixed number of deltas as fast
// as the server takes them.
type deltaModel struct{ deltas []string }

func (deltaModel) Name() string  { return "bench" }
func (deltaModel) Model() string { return "bench-1" }

func (m deltaModel) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	var sent strings.Builder
	for _, d := range m.deltas {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := emit(agent.Delta{Text: d}); err != nil {
			return nil, err
		}
		sent.WriteString(d)
	}
	return &agent.Reply{Parts: []agent.Part{agent.TextPart{Text: sent.String()}}, StopReason: agent.StopEnd,
		Usage: agent.Usage{InputTokens: 10, OutputTokens: int64(len(m.deltas))}, Model: "bench-1"}, nil
}

// BenchmarkSSEPerToken is the cost of streaming a reply over
// GET /t/{id}/messages/{mid}/reply, per delta: escaping, framing, one
// flush and one loopback write each, read by a real client (DESIGN: SSE
// adds ≤ 50 µs per token). With one delta, ns/op is the fixed cost of a
// reply stream (lookups, storing the reply, rendering it); with many,
// ns/delta includes that cost spread over the deltas and
// marginal-ns/delta leaves it out.
func BenchmarkSSEPerToken(b *testing.B) {
	words := []string{"Let's ", "keep ", "the ", "`refresh_token` ", "in ", "an ", "HttpOnly ", "cookie; ",
		"the ", "access ", "token ", "stays ", "in ", "memory ", "& ", "never ", "<touches> ", "storage.\n\n"}
	var fixed time.Duration // per stream, from the one-delta run
	for _, n := range []int{1, 256} {
		b.Run(fmt.Sprintf("deltas=%d", n), func(b *testing.B) {
			deltas := make([]string, n)
			for i := range deltas {
				// About four words a delta, as providers send them.
				deltas[i] = strings.Join([]string{words[i%len(words)], words[(i+1)%len(words)], words[(i+2)%len(words)], words[(i+3)%len(words)]}, "")
			}
			db := storetest.MustOpen(b)
			srv := newBenchServer(b, db, deltaModel{deltas: deltas})
			cookies := benchSignIn(b, db, srv)
			ts := serveBench(b, srv)
			tr := &http.Transport{DisableCompression: true}
			b.Cleanup(tr.CloseIdleConnections)
			client := &http.Client{Transport: tr}
			ctx := context.Background()

			b.ReportAllocs()
			for b.Loop() {
				// A fresh thread each time: the history read for the model
				// must not grow with b.N.
				b.StopTimer()
				t, err := db.CreateThread(ctx, store.ThreadCreate{Title: "SSE"})
				if err != nil {
					b.Fatal(err)
				}
				user, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: t.ID, Role: store.RoleUser, Content: "Where do the tokens live?"})
				if err != nil {
					b.Fatal(err)
				}
				req, _ := http.NewRequest(http.MethodGet, ts.URL+"/t/"+t.ID+"/messages/"+user.ID+"/reply", nil)
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Sec-Fetch-Site", "same-origin") // Baton's own page starts the reply
				for _, c := range cookies {
					req.AddCookie(c)
				}
				b.StartTimer()

				got, err := readReplyStream(client, req)
				if err != nil {
					b.Fatal(err)
				}
				if got != n {
					b.Fatalf("stream carried %d deltas, want %d", got, n)
				}
			}
			perStream := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(perStream)/float64(n), "ns/delta")
			if n == 1 {
				fixed = perStream
			} else if fixed > 0 {
				b.ReportMetric(float64(perStream-fixed)/float64(n-1), "marginal-ns/delta")
			}
		})
	}
}

// readReplyStream reads a reply's event stream to its "done" event and
// returns how many "delta" events came before it.
func readReplyStream(client *http.Client, req *http.Request) (int, error) {
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: status %d, want 200", req.URL.Path, res.StatusCode)
	}
	deltas := 0
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		switch sc.Text() {
		case "event: delta":
			deltas++
		case "event: done":
			_, err := io.Copy(io.Discard, res.Body)
			return deltas, err
		}
	}
	if err := sc.Err(); err != nil {
		return deltas, err
	}
	return deltas, fmt.Errorf("stream ended without a done event after %d deltas", deltas)
}

// BenchmarkChatPageFirstLoad is what a browser with an empty cache
// downloads for a brainstorm page: the HTML and every stylesheet, script
// and icon it links, gzipped as the server sends them (DESIGN: ≤ 60 KB
// transferred). wire-B/load counts response bytes on the connection,
// headers included; body-B/load the (compressed) bodies alone.
func BenchmarkChatPageFirstLoad(b *testing.B) {
	db := storetest.MustOpen(b)
	empty, err := db.CreateThread(context.Background(), store.ThreadCreate{Title: "New idea"})
	if err != nil {
		b.Fatal(err)
	}
	full := seedBrainstorm(b, db, benchMessages)
	srv := newBenchServer(b, db, offline.New())
	cookies := benchSignIn(b, db, srv)
	ts := serveBench(b, srv)

	for _, tt := range []struct {
		name   string
		thread *store.Thread
	}{
		{"empty-thread", empty},
		{"40-messages", full},
	} {
		b.Run(tt.name, func(b *testing.B) {
			var wire, body int64
			var plain []string
			for b.Loop() {
				wire, body, plain = firstLoad(b, ts.URL, "/t/"+tt.thread.ID, cookies)
			}
			if len(plain) > 0 {
				b.Logf("sent without compression: %s", strings.Join(plain, ", "))
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(wire), "wire-B/load")
			b.ReportMetric(float64(body), "body-B/load")
		})
	}
}

// firstLoad fetches page and what it links with a fresh client, as a
// first visit does, and returns the response bytes read from the
// connections, the body bytes alone, and which responses came uncompressed.
// The visitor is signed in already (cookies).
func firstLoad(b *testing.B, base, page string, cookies []*http.Cookie) (wire, body int64, plain []string) {
	b.Helper()
	var read atomic.Int64
	dialer := &net.Dialer{}
	tr := &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: c, read: &read}, nil
		},
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	get := func(path string) []byte {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		for _, c := range cookies {
			req.AddCookie(c)
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		if err != nil {
			b.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: status %d, want 200", path, res.StatusCode)
		}
		body += int64(len(data))
		if res.Header.Get("Content-Encoding") == "" {
			plain = append(plain, path)
		}
		if res.Header.Get("Content-Encoding") == "gzip" && strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			return gunzip(b, data)
		}
		return data
	}
	doc, err := html.Parse(strings.NewReader(string(get(page))))
	if err != nil {
		b.Fatal(err)
	}
	var assets []string
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		for _, a := range n.Attr {
			if (n.Data == "link" && a.Key == "href") || (n.Data == "script" && a.Key == "src") {
				assets = append(assets, a.Val)
			}
		}
	}
	if len(assets) == 0 {
		b.Fatal("the page links no assets")
	}
	for _, a := range assets {
		get(a)
	}
	return read.Load(), body, plain
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func gunzip(b *testing.B, data []byte) []byte {
	b.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		b.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	return out
}
