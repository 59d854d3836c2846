package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

type threadJSON struct {
	ID           string        `json:"id"`
	WorkspaceID  string        `json:"workspaceId"`
	Title        string        `json:"title"`
	CreatedAt    time.Time     `json:"createdAt"`
	UpdatedAt    time.Time     `json:"updatedAt"`
	MessageCount *int          `json:"messageCount"`
	Messages     []messageJSON `json:"messages"`
}

type messageJSON struct {
	ID           string `json:"id"`
	ThreadID     string `json:"threadId"`
	Role         string `json:"role"`
	Content      string `json:"content"`
	Status       string `json:"status"`
	Error        string `json:"error"`
	Model        string `json:"model"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
	ReplyTo      string `json:"replyTo"`
}

type sentJSON struct {
	User      messageJSON `json:"user_message"`
	Assistant messageJSON `json:"assistant_message"`
}

// TestAPIFlow drives a brainstorm the way a script does: create a thread,
// list it, send a message, read the thread back.
func TestAPIFlow(t *testing.T) {
	app := newApp(t, offline.New())

	res, body := app.postJSON("/api/v1/threads", `{"title":"  Payments   rewrite "}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("create: Status=%d, want %d; body: %s", got, want, body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type=%q, want application/json", ct)
	}
	th := decodeJSON[threadJSON](t, body)
	if th.ID == "" || th.Title != "Payments rewrite" || th.WorkspaceID != app.DB.DefaultWorkspaceID() || th.CreatedAt.IsZero() {
		t.Fatalf("created %+v, want an id, the normalised title and the default workspace", th)
	}

	res, body = app.postJSON("/api/v1/threads", `{}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("create untitled: Status=%d, want %d", got, want)
	}
	if got, want := decodeJSON[threadJSON](t, body).Title, store.DefaultThreadTitle; got != want {
		t.Fatalf("untitled Title=%q, want %q", got, want)
	}

	res, body = app.postJSON("/api/v1/threads/"+th.ID+"/messages", `{"content":"We will use Postgres for the ledger."}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("send: Status=%d, want %d; body: %s", got, want, body)
	}
	sent := decodeJSON[sentJSON](t, body)
	if sent.User.ID == "" || sent.User.Role != "user" || sent.User.Content != "We will use Postgres for the ledger." || sent.User.ThreadID != th.ID {
		t.Fatalf("user_message=%+v", sent.User)
	}
	a := sent.Assistant
	if a.Role != "assistant" || a.Status != "complete" || a.Model != "offline-digest" || a.Content == "" || a.ReplyTo != sent.User.ID || a.OutputTokens == 0 {
		t.Fatalf("assistant_message=%+v, want a complete offline-digest reply to %s with usage", a, sent.User.ID)
	}

	res, body = app.do(app.newRequest(http.MethodGet, "/api/v1/threads", nil, nil))
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("list: Status=%d, want %d", got, want)
	}
	list := decodeJSON[struct{ Threads []threadJSON }](t, body)
	if len(list.Threads) != 2 {
		t.Fatalf("listed %d threads, want 2", len(list.Threads))
	}
	// The thread with the message is the most recently active.
	if got := list.Threads[0]; got.ID != th.ID || got.MessageCount == nil || *got.MessageCount != 2 {
		t.Fatalf("first listed=%+v, want %s with messageCount 2", got, th.ID)
	}
	if got := list.Threads[1].MessageCount; got == nil || *got != 0 {
		t.Fatalf("untitled thread messageCount=%v, want 0", got)
	}

	res, body = app.do(app.newRequest(http.MethodGet, "/api/v1/threads/"+th.ID, nil, nil))
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("show: Status=%d, want %d", got, want)
	}
	shown := decodeJSON[threadJSON](t, body)
	if len(shown.Messages) != 2 {
		t.Fatalf("thread has %d messages, want 2", len(shown.Messages))
	}
	if got, want := shown.Messages[0], sent.User; got != want {
		t.Fatalf("messages[0]=%+v, want %+v", got, want)
	}
	if got, want := shown.Messages[1], sent.Assistant; got != want {
		t.Fatalf("messages[1]=%+v, want %+v", got, want)
	}
}

func TestAPIMessageFailedModel(t *testing.T) {
	const why = "The model rejected the API key (401). Set OPENAI_API_KEY or switch BATON_PROVIDER=offline."
	model := newFakeModel("partial")
	model.Fail = &agent.Error{Kind: agent.ErrAuth, Status: 401, Message: why}
	app := newApp(t, model)
	th := app.createThread("Broken key")

	res, body := app.postJSON("/api/v1/threads/"+th.ID+"/messages", `{"content":"hello?"}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("Status=%d, want %d; body: %s", got, want, body)
	}
	sent := decodeJSON[sentJSON](t, body)
	if sent.User.Content != "hello?" || sent.Assistant.Status != "failed" || sent.Assistant.Error != why {
		t.Fatalf("sent=%+v, want the user's message kept and a failed reply saying why", sent)
	}
	if got, want := len(app.messages(th.ID)), 2; got != want {
		t.Fatalf("stored %d messages, want %d", got, want)
	}
}

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		path        string // THREAD is replaced by an existing thread's ID
		contentType string
		body        string
		header      map[string]string
		chunked     bool // no Content-Length: the body limit applies while reading
		wantStatus  int
		wantCode    string
		wantMsg     string
	}{
		{name: "unknown thread", method: "GET", path: "/api/v1/threads/nope", wantStatus: 404, wantCode: "not_found"},
		{name: "message to unknown thread", method: "POST", path: "/api/v1/threads/nope/messages", contentType: "application/json", body: `{"content":"x"}`, wantStatus: 404, wantCode: "not_found"},
		{name: "unknown route", method: "GET", path: "/api/v1/nothing", wantStatus: 404, wantCode: "not_found"},
		{name: "empty message", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{"content":""}`, wantStatus: 422, wantCode: "invalid", wantMsg: "empty"},
		{name: "whitespace message", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{"content":"  \n\t "}`, wantStatus: 422, wantCode: "invalid", wantMsg: "empty"},
		{name: "missing content", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{}`, wantStatus: 422, wantCode: "invalid"},
		{name: "message over 32 KiB", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{"content":"` + strings.Repeat("a", 32<<10+1) + `"}`, wantStatus: 422, wantCode: "invalid", wantMsg: "32 KiB"},
		{name: "body over 1 MiB", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{"content":"` + strings.Repeat("a", 2<<20) + `"}`, wantStatus: 413, wantMsg: "too large"},
		{name: "chunked body over 1 MiB", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{"content":"` + strings.Repeat("a", 2<<20) + `"}`, chunked: true, wantStatus: 413, wantMsg: "too large"},
		{name: "malformed JSON", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{"content":`, wantStatus: 400, wantCode: "bad_json"},
		{name: "unknown field", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{"content":"x","role":"assistant"}`, wantStatus: 400, wantCode: "bad_json", wantMsg: "role"},
		{name: "trailing data", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/json", body: `{"content":"x"} {"content":"y"}`, wantStatus: 400, wantCode: "bad_json"},
		{name: "empty body", method: "POST", path: "/api/v1/threads", contentType: "application/json", body: "", wantStatus: 400, wantCode: "bad_json"},
		{name: "form body", method: "POST", path: "/api/v1/threads/THREAD/messages", contentType: "application/x-www-form-urlencoded", body: `content=x`, wantStatus: 415, wantCode: "unsupported_media_type"},
		{name: "text/plain JSON", method: "POST", path: "/api/v1/threads", contentType: "text/plain", body: `{"title":"x"}`, wantStatus: 415, wantCode: "unsupported_media_type"},
		{name: "cross-site", method: "POST", path: "/api/v1/threads", contentType: "application/json", body: `{"title":"x"}`, header: map[string]string{"Sec-Fetch-Site": "cross-site"}, wantStatus: 403, wantCode: "cross_site"},
		{name: "title too long", method: "POST", path: "/api/v1/threads", contentType: "application/json", body: `{"title":"` + strings.Repeat("t", 201) + `"}`, wantStatus: 422, wantCode: "invalid", wantMsg: "200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := newFakeModel("never")
			app := newApp(t, model)
			th := app.createThread("Errors")
			var reqBody io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				reqBody = io.MultiReader(reqBody) // a reader of unknown length
			}
			req := app.newRequest(tt.method, strings.ReplaceAll(tt.path, "THREAD", th.ID), reqBody, nil)
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			res, body := app.do(req)
			if got, want := res.StatusCode, tt.wantStatus; got != want {
				t.Fatalf("Status=%d, want %d; body: %.300s", got, want, body)
			}
			e := decodeJSON[apiError](t, body)
			if e.Error.Message == "" || (tt.wantCode != "" && e.Error.Code != tt.wantCode) {
				t.Fatalf("error=%+v, want code %q and a message", e.Error, tt.wantCode)
			}
			if !strings.Contains(e.Error.Message, tt.wantMsg) {
				t.Fatalf("message=%q, want it to mention %q", e.Error.Message, tt.wantMsg)
			}
			// Nothing was stored and no model was called.
			if n := len(app.messages(th.ID)); n != 0 {
				t.Fatalf("stored %d messages, want none", n)
			}
			threads, err := app.DB.FindThreads(context.Background(), store.ThreadFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(threads) != 1 {
				t.Fatalf("%d threads, want only the test's own", len(threads))
			}
			if model.Calls() != 0 {
				t.Fatalf("the model was called")
			}
		})
	}
}
