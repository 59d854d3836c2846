package web_test

import (
	"context"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/web"
)

func TestHealth(t *testing.T) {
	app := newApp(t, offline.New())
	res, body := app.get("/healthz")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("Status=%d, want %d", got, want)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type=%q, want application/json", ct)
	}
	h := decodeJSON[struct {
		Status, Provider, Model, Version string
	}](t, body)
	if h.Status != "ok" || h.Provider != "offline" || h.Model != "offline-digest" || h.Version != "test" {
		t.Fatalf("healthz=%+v, want status ok, provider offline, model offline-digest, version test", h)
	}
}

func TestSecurityHeaders(t *testing.T) {
	app := newApp(t, offline.New())
	th := app.createThread("Headers")
	for _, path := range []string{"/", "/t/" + th.ID, "/t/no-such-thread", "/no/such/page", "/healthz", "/api/v1/threads"} {
		t.Run(path, func(t *testing.T) {
			res, _ := app.get(path)
			csp := res.Header.Get("Content-Security-Policy")
			directives := map[string]string{}
			for d := range strings.SplitSeq(csp, ";") {
				name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
				directives[name] = value
			}
			if got, want := directives["script-src"], "'self'"; got != want {
				t.Errorf("CSP script-src=%q, want %q (CSP %q)", got, want, csp)
			}
			if got, want := directives["frame-ancestors"], "'none'"; got != want {
				t.Errorf("CSP frame-ancestors=%q, want %q", got, want)
			}
			if _, ok := directives["default-src"]; !ok {
				t.Errorf("CSP has no default-src: %q", csp)
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("CSP allows inline or eval: %q", csp)
			}
			if got, want := res.Header.Get("X-Content-Type-Options"), "nosniff"; got != want {
				t.Errorf("X-Content-Type-Options=%q, want %q", got, want)
			}
		})
	}
}

func TestStaticAssets(t *testing.T) {
	app := newApp(t, offline.New())
	_, page := app.get("/")
	doc := parseHTML(t, page)

	var urls []string
	for _, l := range findAll(doc, "link") {
		if href := attr(l, "href"); strings.HasPrefix(href, "/static/") || attr(l, "rel") == "stylesheet" {
			urls = append(urls, href)
		}
	}
	for _, s := range findAll(doc, "script") {
		urls = append(urls, attr(s, "src"))
	}
	if len(urls) < 4 { // app.css, htmx, the sse extension, app.js
		t.Fatalf("page links %d assets, want at least 4: %v", len(urls), urls)
	}
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			if !strings.HasPrefix(u, "/static/") {
				t.Fatalf("asset URL %q is not under /static/", u)
			}
			res, body := app.get(u)
			if got, want := res.StatusCode, http.StatusOK; got != want {
				t.Fatalf("Status=%d, want %d", got, want)
			}
			if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
				t.Fatalf("Cache-Control=%q, want immutable", cc)
			}
			if len(body) == 0 {
				t.Fatalf("empty body")
			}
			wantType := map[string]string{".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}[path.Ext(u)]
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, wantType) {
				t.Fatalf("Content-Type=%q, want %s", ct, wantType)
			}
		})
	}

	// An old hash still serves the file but must not be cached forever.
	_, name, _ := strings.Cut(strings.TrimPrefix(urls[0], "/static/"), "/")
	tests := []struct {
		name       string
		path       string
		wantStatus int
		wantCache  string
	}{
		{"unknown asset", "/static/0123456789ab/nope.js", http.StatusNotFound, ""},
		{"no hash", "/static/app.css", http.StatusNotFound, ""},
		{"path escape", "/static/0123456789ab/../static.go", http.StatusNotFound, ""},
		{"stale hash", "/static/000000000000/" + name, http.StatusOK, "no-cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := app.get(tt.path)
			if got, want := res.StatusCode, tt.wantStatus; got != want {
				t.Fatalf("Status=%d, want %d", got, want)
			}
			if got := res.Header.Get("Cache-Control"); tt.wantCache != "" && got != tt.wantCache {
				t.Fatalf("Cache-Control=%q, want %q", got, tt.wantCache)
			}
			if got := res.Header.Get("Cache-Control"); strings.Contains(got, "immutable") && tt.wantStatus != http.StatusOK {
				t.Fatalf("Cache-Control=%q on a %d", got, tt.wantStatus)
			}
		})
	}
}

// csrfToken loads the home page and returns the token its forms carry;
// the client's jar now holds the matching cookie.
func csrfToken(t *testing.T, app *testApp) string {
	t.Helper()
	res, page := app.get("/")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET /: Status=%d, want %d", got, want)
	}
	// The new-thread form and the header's sign-out form carry the same token.
	inputs := findAll(parseHTML(t, page), "input", "name", "_csrf")
	if len(inputs) == 0 {
		t.Fatal("the page has no _csrf field")
	}
	token := attr(inputs[0], "value")
	if token == "" {
		t.Fatal("the page's _csrf field is empty")
	}
	for _, in := range inputs[1:] {
		if attr(in, "value") != token {
			t.Fatal("the page's forms carry different CSRF tokens")
		}
	}
	var cookie string
	for _, c := range app.Client.Jar.Cookies(res.Request.URL) {
		if c.Name == "baton_csrf" {
			cookie = c.Value
		}
	}
	if cookie == "" {
		t.Fatal("GET / set no baton_csrf cookie")
	}
	return token
}

func TestCSRF(t *testing.T) {
	tests := []struct {
		name string
		// token: none, the page's token in the form or header, or a wrong one.
		formToken   string
		headerToken string
		fetchSite   string
		wantStatus  int
	}{
		{name: "no token, no fetch metadata", wantStatus: http.StatusForbidden},
		{name: "wrong token", formToken: "forged", wantStatus: http.StatusForbidden},
		{name: "form token", formToken: "page", wantStatus: http.StatusSeeOther},
		{name: "header token", headerToken: "page", wantStatus: http.StatusSeeOther},
		{name: "same-origin", fetchSite: "same-origin", wantStatus: http.StatusSeeOther},
		{name: "cross-site", fetchSite: "cross-site", wantStatus: http.StatusForbidden},
		{name: "cross-site with a valid token", formToken: "page", fetchSite: "cross-site", wantStatus: http.StatusForbidden},
		{name: "same-site without token", fetchSite: "same-site", wantStatus: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := newApp(t, offline.New())
			token := csrfToken(t, app)
			pick := func(s string) string {
				if s == "page" {
					return token
				}
				return s
			}
			form := url.Values{"title": {"Checkout flow"}}
			if tt.formToken != "" {
				form.Set("_csrf", pick(tt.formToken))
			}
			h := http.Header{}
			if tt.headerToken != "" {
				h.Set("X-CSRF-Token", pick(tt.headerToken))
			}
			if tt.fetchSite != "" {
				h.Set("Sec-Fetch-Site", tt.fetchSite)
			}
			res, body := app.postForm("/threads", form, h)
			if got, want := res.StatusCode, tt.wantStatus; got != want {
				t.Fatalf("Status=%d, want %d; body: %s", got, want, body)
			}
			threads, err := app.DB.FindThreads(context.Background(), store.ThreadFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantStatus != http.StatusSeeOther {
				if len(threads) != 0 {
					t.Fatalf("a refused POST created %d threads", len(threads))
				}
				if n := len(findAll(parseHTML(t, body), "", "data-testid", "error-message")); n != 1 {
					t.Fatalf("refused POST shows %d error messages, want 1: %s", n, body)
				}
				return
			}
			if len(threads) != 1 {
				t.Fatalf("created %d threads, want 1", len(threads))
			}
			if got, want := res.Header.Get("Location"), "/t/"+threads[0].ID; got != want {
				t.Fatalf("Location=%q, want %q", got, want)
			}
			if got, want := threads[0].Title, "Checkout flow"; got != want {
				t.Fatalf("Title=%q, want %q", got, want)
			}
		})
	}
}

func TestModelRateLimit(t *testing.T) {
	lim := newAppWith(t, web.Config{Provider: offline.New(), ModelRate: 1}) // a burst of 10
	th := lim.createThread("Limits")
	var denied *http.Response
	var deniedBody string
	for i := range 30 {
		res, body := lim.postForm("/t/"+th.ID+"/messages", url.Values{"content": {"idea"}}, htmxSameOrigin)
		if res.StatusCode == http.StatusTooManyRequests {
			denied, deniedBody = res, body
			break
		}
		if got, want := res.StatusCode, http.StatusCreated; got != want {
			t.Fatalf("request %d: Status=%d, want %d", i, got, want)
		}
	}
	if denied == nil {
		t.Fatal("30 quick model requests were all accepted; want 429 after the burst")
	}
	if got, want := denied.Header.Get("HX-Retarget"), "#flash"; got != want {
		t.Fatalf("HX-Retarget=%q, want %q", got, want)
	}
	if !strings.Contains(deniedBody, "Too many requests") {
		t.Fatalf("429 body does not say what happened: %s", deniedBody)
	}
	// Pages are not model requests: they stay available.
	if res, _ := lim.get("/t/" + th.ID); res.StatusCode != http.StatusOK {
		t.Fatalf("GET thread after the limit: Status=%d, want %d", res.StatusCode, http.StatusOK)
	}
}

func TestShutdownStopsStreams(t *testing.T) {
	model := newFakeModel("first ", "words")
	model.Block = true
	app := newApp(t, model)
	th := app.createThread("Shutdown")
	user := app.sendHTMX(th.ID, "Plan the migration")

	stream := app.openStream(context.Background(), th.ID, user.ID)
	for range 2 {
		ev, err := stream.next()
		if err != nil || ev.Event != "delta" {
			t.Fatalf("event=%+v, err=%v; want a delta", ev, err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	// Shutdown returns once the reply is saved.
	reply, err := app.DB.FindReply(context.Background(), th.ID, user.ID)
	if err != nil {
		t.Fatalf("after Shutdown: %v", err)
	}
	if got, want := reply.Status, store.StatusStopped; got != want {
		t.Fatalf("Status=%q, want %q", got, want)
	}
	if got, want := reply.Content, "first words"; got != want {
		t.Fatalf("Content=%q, want %q", got, want)
	}
	// The open stream ends with the stopped reply.
	rest := stream.all(t)
	if len(rest) == 0 || rest[len(rest)-1].Event != "done" {
		t.Fatalf("stream ended with %+v, want a done event", rest)
	}
	if done := rest[len(rest)-1].Data; !strings.Contains(done, `data-status="stopped"`) {
		t.Fatalf("done=%s, want the stopped reply", done)
	}
}
