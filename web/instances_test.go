package web_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// Several Baton instances behind one load balancer share one PostgreSQL
// database: what one writes, the others serve; a session, a sign-out, a
// share link's views and a client's rate limit count on all of them.

// startInstance starts a Baton server on the database at dbURL, as another
// instance would, with the session key every instance shares.
func startInstance(t *testing.T, dbURL string, cfg web.Config) *testApp {
	t.Helper()
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg.DB = db
	if cfg.Provider == nil {
		cfg.Provider = offline.New()
	}
	return serveApp(t, db, cfg)
}

// onInstance sends a request of browser, signed in on one instance, to
// another: the load balancer's choice. Both listen on 127.0.0.1, so the
// browser's cookie jar sends the same cookies to either.
func onInstance(t *testing.T, browser *testApp, to *testApp, method, path string) (*http.Response, string) {
	t.Helper()
	req := browser.newRequest(method, path, nil, sameOrigin)
	req.URL.Host = strings.TrimPrefix(to.TS.URL, "http://")
	req.Host = req.URL.Host
	return browser.do(req)
}

func TestInstancesShareSessionsAndData(t *testing.T) {
	dbURL := storetest.StartPostgres(t)
	a := startInstance(t, dbURL, web.Config{ModelRate: 100})
	b := startInstance(t, dbURL, web.Config{ModelRate: 100})
	a.signIn()

	// Created on A, listed on B with A's session cookie.
	th := a.createThread("Shared between instances")
	res, body := onInstance(t, a, b, http.MethodGet, "/t/"+th.ID)
	wantStatus(t, res, body, http.StatusOK)
	if !strings.Contains(body, "Shared between instances") {
		t.Fatal("B's thread page does not show the thread A created")
	}
	// The API on B reads it too, with a token made on A.
	res, body = onInstance(t, a, b, http.MethodGet, "/api/v1/threads/"+th.ID)
	wantStatus(t, res, body, http.StatusOK)

	// Signing out on A ends the session on B.
	res, body = a.postForm("/logout", url.Values{}, sameOrigin)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out on A: status %d\n%s", res.StatusCode, body)
	}
	req := a.newRequest(http.MethodGet, "/t/"+th.ID, nil, nil)
	req.URL.Host = strings.TrimPrefix(b.TS.URL, "http://")
	req.Host = req.URL.Host
	for _, c := range res.Request.Cookies() { // the cookie the browser still held
		req.AddCookie(c)
	}
	res, body = b.do(req)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("B after sign-out on A: status %d Location %q, want a redirect to /login\n%s", res.StatusCode, res.Header.Get("Location"), body)
	}
}

func TestInstancesShareLinkViewsAndRateLimit(t *testing.T) {
	dbURL := storetest.StartPostgres(t)
	// Burst 5, one token a second; the test's clock barely moves.
	a := startInstance(t, dbURL, web.Config{ShareRate: 1})
	b := startInstance(t, dbURL, web.Config{ShareRate: 1})
	a.signIn()
	ctx := context.Background()
	th := a.createThread("Shared review")
	h, err := a.DB.EnsureHandoff(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	link, token, err := a.DB.CreateShareLink(ctx, store.ShareCreate{HandoffID: h.ID, Mode: store.ShareView, ExpiresIn: "never", By: store.Actor{Name: "Ana"}})
	if err != nil {
		t.Fatal(err)
	}
	guest := func(app *testApp) int {
		res, err := http.Get(app.TS.URL + "/s/" + token)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	// Five views through two instances: all served, all counted once.
	var got []int
	for i := range 5 {
		got = append(got, guest([]*testApp{a, b}[i%2]))
	}
	for i, code := range got {
		if code != http.StatusOK {
			t.Fatalf("view %d: status %d (all: %v)", i+1, code, got)
		}
	}
	links, err := b.DB.FindShareLinks(ctx, store.ShareFilter{HandoffID: h.ID, WorkspaceID: a.DB.DefaultWorkspaceID()})
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 1 || links[0].ID != link.ID || links[0].Views != 5 {
		t.Fatalf("share links seen from B: %+v, want one with 5 views", links)
	}
	// The client's bucket is shared: a sixth request within the second is
	// refused, whichever instance it reaches.
	if code := guest(b); code != http.StatusTooManyRequests {
		t.Fatalf("sixth request within a second: status %d, want 429: the instances count separately", code)
	}
}

// A change made through one instance reaches the review pages open on
// another: each announces on the database's channel and relays what it
// hears.
func TestInstancesLiveReview(t *testing.T) {
	onSharedDatabases(t, func(t *testing.T, open sharedDB) {
		a := newInstance(t, open, "a", web.Config{Provider: offline.New()})
		b := newInstance(t, open, "b", web.Config{Provider: offline.New()})
		h := storetest.NewHandoff(t, a.DB, storetest.Items{Decisions: storetest.Decisions("Use Postgres 16.")})
		// A change that never arrives ends the stream, and the test, here.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := b.newRequest(http.MethodGet, "/h/"+h.ID+"/live", nil, http.Header{"Accept": {"text/event-stream"}, "Sec-Fetch-Site": {"same-origin"}})
		res, err := b.Client.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("live on B: status %d", res.StatusCode)
		}
		stream := &sseStream{Res: res, r: bufio.NewReader(res.Body)}
		next := func(event string) {
			t.Helper()
			for {
				ev, err := stream.next()
				if err != nil {
					t.Fatalf("waiting for %s on B: %v", event, err)
				}
				if ev.Event == event {
					return
				}
			}
		}
		next("viewers")
		if res, body := a.postJSON("/api/v1/handoffs/"+h.ID+"/comments", `{"anchor":{"kind":"summary"},"body":"Through A."}`); res.StatusCode != http.StatusCreated {
			t.Fatalf("comment on A: status %d\n%s", res.StatusCode, body)
		}
		next("changed")
	})
}
