package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

// TestAPIPinContent pins a long markdown reply through the API: without a
// body the decision is its first meaningful sentence in plain text; with
// {"content"} it is that text.
func TestAPIPinContent(t *testing.T) {
	app := newApp(t, offline.New())
	reply := "**Offline digest** (no model configured)\n\nI pick out what the conversation says.\n\n" +
		"**Sounds decided**\n- Keep the `refresh_token` in an **HttpOnly** cookie\n"
	ex := app.seedExchange("Auth", "Where do tokens live?", reply)
	pin := "/api/v1/threads/" + ex.Thread.ID + "/messages/" + ex.Reply.ID + "/pin"

	res, body := app.postJSON(pin, "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("pin: Status=%d, want %d; body: %s", got, want, body)
	}
	if d := decodeJSON[apiDecision](t, body); d.Content != "Keep the refresh_token in an HttpOnly cookie" {
		t.Fatalf("pinned %q, want the first decided sentence as plain text", d.Content)
	}
	app.sendJSON(http.MethodDelete, pin, "", nil)

	res, body = app.postJSON(pin, `{"content":"  Tokens live in an HttpOnly cookie.  "}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("pin with content: Status=%d, want %d; body: %s", got, want, body)
	}
	if d := decodeJSON[apiDecision](t, body); d.Content != "Tokens live in an HttpOnly cookie." {
		t.Fatalf("pinned %q, want the given content, trimmed", d.Content)
	}
	app.sendJSON(http.MethodDelete, pin, "", nil)

	res, body = app.postJSON(pin, `{"content":"x","extra":1}`)
	wantAPIError(t, res, body, http.StatusBadRequest, "bad_json")
}

// TestPinFormContent pins from the page: the form's content is the
// decision, and without JavaScript the form carries the first sentence.
func TestPinFormContent(t *testing.T) {
	app := newApp(t, offline.New())
	ex := app.seedExchange("Auth", "Where?", "## Tokens\n\nHere is my take. Access tokens stay in memory. Refresh tokens go in a cookie.")
	_, page := app.get("/t/" + ex.Thread.ID)
	doc := parseHTML(t, page)
	hidden := findOne(t, byID(doc, "msg-"+ex.Reply.ID), "input", "name", "content")
	if got, want := attr(hidden, "value"), "Access tokens stay in memory."; got != want {
		t.Fatalf("pin form content=%q, want %q", got, want)
	}

	res, body := app.postForm("/t/"+ex.Thread.ID+"/messages/"+ex.Reply.ID+"/pin",
		url.Values{"content": {"Refresh tokens go in an HttpOnly cookie."}}, htmxSameOrigin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pin: Status=%d; body: %s", res.StatusCode, body)
	}
	h, err := app.DB.FindHandoffByThread(context.Background(), ex.Thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Decisions) != 1 || h.Decisions[0].Content != "Refresh tokens go in an HttpOnly cookie." {
		t.Fatalf("decisions=%+v, want the worded one", h.Decisions)
	}
}

// TestReadyToPlanEmptyThread refuses "Ready to plan" on a brainstorm with
// no messages (422 in the API, a message on the page) and creates no
// handoff that would then sit on the home page.
func TestReadyToPlanEmptyThread(t *testing.T) {
	app := newApp(t, offline.New())
	th := app.createThread("Nothing yet")

	res, body := app.postJSON("/api/v1/threads/"+th.ID+"/handoff", "")
	wantAPIError(t, res, body, http.StatusUnprocessableEntity, "invalid")

	res, body = app.postForm("/t/"+th.ID+"/extract", nil, htmxSameOrigin)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "no messages yet") {
		t.Fatalf("page: Status=%d, body %q; want 422 saying the thread is empty", res.StatusCode, body)
	}
	if _, err := app.DB.FindHandoffByThread(context.Background(), th.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindHandoffByThread err=%v, want ErrNotFound: no handoff for an empty thread", err)
	}
}
