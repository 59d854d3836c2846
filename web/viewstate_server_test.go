package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

// TestPagesCarryIssuedCSRFToken checks that full pages and htmx fragments
// carry the CSRF token Echo issued to this client (its baton_csrf cookie)
// in every form and in the htmx headers.
func TestPagesCarryIssuedCSRFToken(t *testing.T) {
	app := newApp(t, offline.New())
	th := app.createThread("Checkout flow")
	ctx := context.Background()
	user, err := app.DB.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "Use Stripe?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, Content: "Yes.", ReplyTo: user.ID}); err != nil {
		t.Fatal(err)
	}

	res, _ := app.get("/")
	var issued string
	for _, c := range app.Client.Jar.Cookies(res.Request.URL) {
		if c.Name == "baton_csrf" {
			issued = c.Value
		}
	}
	if issued == "" {
		t.Fatal("GET / set no baton_csrf cookie")
	}

	tests := []struct {
		name string
		page bool // a full page, with the htmx headers on <body>
		do   func() (*http.Response, string)
	}{
		{name: "home", page: true, do: func() (*http.Response, string) { return app.get("/") }},
		{name: "thread", page: true, do: func() (*http.Response, string) { return app.get("/t/" + th.ID) }},
		{name: "htmx send", do: func() (*http.Response, string) {
			return app.postForm("/t/"+th.ID+"/messages", url.Values{"content": {"And refunds?"}},
				http.Header{"Hx-Request": {"true"}, "X-Csrf-Token": {issued}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := tt.do()
			if res.StatusCode >= 300 {
				t.Fatalf("Status=%d; body: %s", res.StatusCode, body)
			}
			doc := parseHTML(t, body)
			fields := findAll(doc, "input", "name", "_csrf")
			if len(fields) == 0 {
				t.Fatal("no _csrf field")
			}
			for _, f := range fields {
				if got := attr(f, "value"); got != issued {
					t.Fatalf("_csrf=%q, want the issued token %q", got, issued)
				}
			}
			if tt.page {
				if got, want := attr(findOne(t, doc, "body"), "hx-headers"), `{"X-CSRF-Token":"`+issued+`"}`; got != want {
					t.Fatalf("hx-headers=%s, want %s", got, want)
				}
			}
		})
	}
}
