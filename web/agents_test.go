package web_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

// TestAgentConnect creates a token from the /agents page: the page shows it
// once, in every setup, out of every cache, and agents can use it; a bad
// expiry creates nothing.
func TestAgentConnect(t *testing.T) {
	app := newApp(t, offline.New())
	_, page := app.get("/agents")
	csrf := between(page, `name="_csrf" value="`, `"`)
	if !strings.Contains(page, `data-testid="connect-form"`) || csrf == "" {
		t.Fatalf("/agents lacks the connect form with its CSRF token")
	}
	tokens := func() int {
		t.Helper()
		ts, err := app.DB.FindTokens(t.Context(), store.TokenFilter{UserID: app.Owner.ID})
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}
	before := tokens()

	res, body := app.postForm("/agents/connect", url.Values{"_csrf": {csrf}, "name": {"Laptop agent"}, "scope": {"write"}, "expires_days": {"nope"}}, sameOrigin)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "Choose when the token expires") {
		t.Fatalf("bad expiry: Status=%d, want 422 with a message", res.StatusCode)
	}
	if got := tokens(); got != before {
		t.Fatalf("tokens after a bad expiry = %d, want %d", got, before)
	}

	res, body = app.postForm("/agents/connect", url.Values{"_csrf": {csrf}, "name": {"Laptop agent"}, "scope": {"write"}, "expires_days": {"90"}}, sameOrigin)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("connect: Status=%d, want 201\n%s", res.StatusCode, body)
	}
	if got := res.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control=%q, want no-store on the page with the secret", got)
	}
	if got := tokens(); got != before+1 {
		t.Fatalf("tokens after connecting = %d, want %d", got, before+1)
	}
	text := html.UnescapeString(body)
	secret := between(text, `Authorization: Bearer `, `"`)
	if !strings.HasPrefix(secret, store.TokenPrefix) {
		t.Fatalf("Claude Code setup carries %q, want the new token", secret)
	}
	for _, want := range []string{
		`claude mcp add --transport http baton ` + app.TS.URL + `/mcp --header "Authorization: Bearer ` + secret + `"`,
		`export BATON_TOKEN=` + secret,
		`"Authorization": "Bearer ` + secret + `"`,
		`Laptop agent`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page after connecting lacks %s", want)
		}
	}
	if strings.Contains(text, "<YOUR_TOKEN>") {
		t.Errorf("page after connecting still shows the placeholder")
	}

	req := app.newRequest(http.MethodGet, "/api/v1/blackboard", nil, http.Header{"Authorization": {"Bearer " + secret}})
	if res, body := app.do(req); res.StatusCode != http.StatusOK {
		t.Fatalf("API with the new token: Status=%d, want 200\n%s", res.StatusCode, body)
	}
}
