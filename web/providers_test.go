package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/anthropic"
	"github.com/baton-dev/baton/agent/openai"
	"github.com/baton-dev/baton/store"
)

// The tests in this file drive the whole chat flow (send → stream →
// persist) through the real server and the real provider adapters, each
// pointed at an httptest fake that speaks its API's streaming wire format.

// chatDeltas is the reply every fake streams, one text delta each.
var chatDeltas = []string{"Let's ", "use ", "SQLite ", "& WAL."}

// chatFake is a model API on httptest. Each request is answered by the
// current respond func (attempt counts requests from 1); method, path,
// headers and body of every request are kept.
type chatFake struct {
	srv *httptest.Server

	mu       sync.Mutex
	respond  func(w http.ResponseWriter, attempt int)
	requests []chatRequest
}

// chatRequest is what a fake received.
type chatRequest struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

func newChatFake(t *testing.T, respond func(w http.ResponseWriter, attempt int)) *chatFake {
	t.Helper()
	f := &chatFake{respond: respond}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		f.mu.Lock()
		f.requests = append(f.requests, chatRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		attempt, respond := len(f.requests), f.respond
		f.mu.Unlock()
		respond(w, attempt)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// set replaces how the fake answers from the next request on.
func (f *chatFake) set(respond func(w http.ResponseWriter, attempt int)) {
	f.mu.Lock()
	f.respond = respond
	f.mu.Unlock()
}

func (f *chatFake) received() []chatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]chatRequest(nil), f.requests...)
}

// sendFlushed writes s and flushes it, so that each event travels alone.
func sendFlushed(w http.ResponseWriter, s string) {
	io.WriteString(w, s)
	w.(http.Flusher).Flush()
}

// startEventStream writes the 200 head of an event stream.
func startEventStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// chatProvider is one provider adapter with its fake's wire format.
type chatProvider struct {
	name string
	// newProvider builds the real adapter pointed at the fake.
	newProvider func(t *testing.T, f *chatFake, maxRetries int) agent.Provider
	// path is where the adapter sends a chat request.
	path string
	// stream answers with chatDeltas in the API's streaming format.
	stream func(w http.ResponseWriter)
	// fail answers with an API error in the API's format.
	fail func(w http.ResponseWriter, status int, header http.Header)
	// What the stored reply must say about the call, as the fake reported it.
	model      string
	inTokens   int64
	outTokens  int64
	responseID string
	// authMessage is the start of what a 401 is shown as; it names the
	// variable to set.
	authMessage string
	// wantRequest is the request body the adapter sends for one user
	// message under the brainstorm system prompt.
	wantRequest func(system, user string) map[string]any
	// checkAuth checks that the key went out the way the API expects it.
	checkAuth func(t *testing.T, h http.Header)
}

func chatProviders() []chatProvider {
	return []chatProvider{
		{
			name: "anthropic",
			newProvider: func(t *testing.T, f *chatFake, maxRetries int) agent.Provider {
				t.Helper()
				p, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: f.srv.URL, MaxRetries: maxRetries, HTTPClient: f.srv.Client()})
				if err != nil {
					t.Fatal(err)
				}
				return p
			},
			path: "/v1/messages",
			stream: func(w http.ResponseWriter) {
				// Anthropic's Messages API: an "event:" line naming each
				// event's type and a "data:" line with its JSON.
				ev := func(name, data string) { sendFlushed(w, "event: "+name+"\ndata: "+data+"\n\n") }
				startEventStream(w)
				ev("message_start", `{"type":"message_start","message":{"id":"msg_01ChatFlowWeb","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`)
				ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
				ev("ping", `{"type": "ping"}`)
				for _, d := range chatDeltas {
					b, _ := json.Marshal(d)
					ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, b))
				}
				ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
				ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`)
				ev("message_stop", `{"type":"message_stop"}`)
			},
			fail: func(w http.ResponseWriter, status int, header http.Header) {
				typ := map[int]string{401: "authentication_error", 429: "rate_limit_error"}[status]
				for k, v := range header {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"no"},"request_id":"req_011ChatFlow"}`, typ)
			},
			model:       "claude-sonnet-4-6",
			inTokens:    25,
			outTokens:   15,
			responseID:  "msg_01ChatFlowWeb",
			authMessage: "Anthropic rejected the API key (401). Set ANTHROPIC_API_KEY or switch BATON_PROVIDER=offline.",
			wantRequest: func(system, user string) map[string]any {
				return map[string]any{
					"model":      "claude-sonnet-4-6",
					"max_tokens": float64(2048),
					"stream":     true,
					"system":     []any{map[string]any{"type": "text", "text": system}},
					"messages": []any{map[string]any{"role": "user", "content": []any{
						map[string]any{"type": "text", "text": user},
					}}},
				}
			},
			checkAuth: func(t *testing.T, h http.Header) {
				t.Helper()
				if got, want := h.Get("X-Api-Key"), "test"; got != want {
					t.Fatalf("x-api-key=%q, want %q", got, want)
				}
			},
		},
		{
			name: "openai",
			newProvider: func(t *testing.T, f *chatFake, maxRetries int) agent.Provider {
				t.Helper()
				// Through a base URL, as for Ollama and other compatible servers.
				p, err := openai.New(openai.Config{APIKey: "test", BaseURL: f.srv.URL + "/v1", MaxRetries: maxRetries, HTTPClient: f.srv.Client()})
				if err != nil {
					t.Fatal(err)
				}
				return p
			},
			path: "/v1/chat/completions",
			stream: func(w http.ResponseWriter) {
				// Chat Completions: chat.completion.chunk data lines, the
				// finish_reason on the last choice chunk, then a usage chunk
				// without choices, then [DONE].
				chunk := func(choices, usage string) {
					sendFlushed(w, `data: {"id":"chatcmpl-ChatFlowWeb","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-mini-2025-04-14","system_fingerprint":"fp_6ec83003ad","choices":[`+choices+`],"usage":`+usage+`}`+"\n\n")
				}
				startEventStream(w)
				chunk(`{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`, "null")
				for _, d := range chatDeltas {
					b, _ := json.Marshal(d)
					chunk(fmt.Sprintf(`{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":null}`, b), "null")
				}
				chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}`, "null")
				chunk("", `{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`)
				sendFlushed(w, "data: [DONE]\n\n")
			},
			fail: func(w http.ResponseWriter, status int, header http.Header) {
				typ := map[int]string{401: "invalid_request_error", 429: "requests"}[status]
				code := map[int]string{401: "invalid_api_key", 429: "rate_limit_exceeded"}[status]
				for k, v := range header {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				fmt.Fprintf(w, `{"error":{"message":"no","type":%q,"param":null,"code":%q}}`, typ, code)
			},
			model:      "gpt-4.1-mini-2025-04-14",
			inTokens:   19,
			outTokens:  10,
			responseID: "chatcmpl-ChatFlowWeb",
			// A compatible server is named by its URL, which differs per
			// run; what matters is the variable to set.
			authMessage: "rejected the API key (401). Set OPENAI_API_KEY to a key it accepts, or switch BATON_PROVIDER=offline.",
			wantRequest: func(system, user string) map[string]any {
				return map[string]any{
					"model":          "gpt-4.1-mini",
					"max_tokens":     float64(2048),
					"stream":         true,
					"stream_options": map[string]any{"include_usage": true},
					"messages": []any{
						map[string]any{"role": "system", "content": system},
						map[string]any{"role": "user", "content": user},
					},
				}
			},
			checkAuth: func(t *testing.T, h http.Header) {
				t.Helper()
				if got, want := h.Get("Authorization"), "Bearer test"; got != want {
					t.Fatalf("Authorization=%q, want %q", got, want)
				}
			},
		},
	}
}

// chatMessage is a message as GET /api/v1/threads/{id} shows it.
type chatMessage struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	Content      string `json:"content"`
	Status       string `json:"status"`
	Error        string `json:"error"`
	Model        string `json:"model"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
	ResponseID   string `json:"responseId"`
	ReplyTo      string `json:"replyTo"`
}

// createThreadAPI makes a thread through the JSON API and returns its id.
func createThreadAPI(t *testing.T, app *testApp, title string) string {
	t.Helper()
	res, body := app.postJSON("/api/v1/threads", fmt.Sprintf(`{"title":%q}`, title))
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("POST /api/v1/threads: Status=%d, want %d; body: %s", got, want, body)
	}
	th := decodeJSON[struct {
		ID string `json:"id"`
	}](t, body)
	if th.ID == "" {
		t.Fatalf("POST /api/v1/threads: no id in %s", body)
	}
	return th.ID
}

// streamReply opens the reply stream of a user message and reads it to
// the end: the text deltas, then the one done event.
func streamReply(t *testing.T, app *testApp, threadID, userID string) (deltas []string, done sseEvent) {
	t.Helper()
	stream := app.openStream(context.Background(), threadID, userID)
	if got, want := stream.Res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("reply stream: Status=%d, want %d", got, want)
	}
	events := stream.all(t)
	if len(events) == 0 {
		t.Fatalf("reply stream ended without events")
	}
	for _, ev := range events[:len(events)-1] {
		if ev.Event != "delta" {
			t.Fatalf("event %q before done, want only deltas (events %+v)", ev.Event, events)
		}
		deltas = append(deltas, ev.Data)
	}
	done = events[len(events)-1]
	if done.Event != "done" {
		t.Fatalf("last event=%q, want done", done.Event)
	}
	return deltas, done
}

// escapedDeltas is chatDeltas as the reply stream sends them: HTML-escaped
// text to append.
func escapedDeltas() []string {
	out := make([]string, len(chatDeltas))
	for i, d := range chatDeltas {
		out[i] = html.EscapeString(d)
	}
	return out
}

func TestChatFlowWithProviders(t *testing.T) {
	const question = "Which database should Baton use?"
	system := agent.BrainstormRequest([]agent.Message{agent.Text(agent.RoleUser, question)}, "").System
	wantText := strings.Join(chatDeltas, "")

	for _, pc := range chatProviders() {
		t.Run(pc.name, func(t *testing.T) {
			fake := newChatFake(t, func(w http.ResponseWriter, _ int) { pc.stream(w) })
			app := newApp(t, pc.newProvider(t, fake, -1))
			threadID := createThreadAPI(t, app, "Storage")

			// Send as the composer does with htmx: the message comes back
			// at once with a pending reply that streams.
			res, body := app.postForm("/t/"+threadID+"/messages", url.Values{"content": {question}}, htmxSameOrigin)
			if got, want := res.StatusCode, http.StatusCreated; got != want {
				t.Fatalf("POST messages: Status=%d, want %d; body: %s", got, want, body)
			}
			msgs := app.messages(threadID)
			if len(msgs) != 1 || msgs[0].Role != store.RoleUser || msgs[0].Content != question {
				t.Fatalf("after POST stored %+v, want the user's message alone", msgs)
			}
			user := msgs[0]
			pending := findOne(t, parseHTML(t, body), "article", "data-testid", "pending-reply")
			if got, want := attr(pending, "sse-connect"), "/t/"+threadID+"/messages/"+user.ID+"/reply"; got != want {
				t.Fatalf("sse-connect=%q, want %q", got, want)
			}

			deltas, done := streamReply(t, app, threadID, user.ID)
			if diff := cmp.Diff(escapedDeltas(), deltas); diff != "" {
				t.Fatalf("deltas mismatch (-want +got):\n%s", diff)
			}

			reply, err := app.DB.FindReply(context.Background(), threadID, user.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := store.Message{ID: reply.ID, ThreadID: threadID, Role: store.RoleAssistant, Content: wantText,
				Status: store.StatusComplete, Model: pc.model, InputTokens: pc.inTokens, OutputTokens: pc.outTokens,
				ResponseID: pc.responseID, ReplyTo: user.ID, CreatedAt: reply.CreatedAt}
			if diff := cmp.Diff(want, *reply); diff != "" {
				t.Fatalf("stored reply mismatch (-want +got):\n%s", diff)
			}

			// The done event is the stored reply, its usage shown under it.
			art := findOne(t, parseHTML(t, done.Data), "article", "id", "msg-"+reply.ID)
			if got, want := attr(art, "data-status"), "complete"; got != want {
				t.Fatalf("done data-status=%q, want %q", got, want)
			}
			if got := textOf(art); !strings.Contains(got, wantText) {
				t.Fatalf("done text=%q, want it to hold %q", got, wantText)
			}
			usage := textOf(findOne(t, art, "", "data-testid", "usage"))
			for _, s := range []string{pc.model, fmt.Sprintf("%d in · %d out tokens", pc.inTokens, pc.outTokens)} {
				if !strings.Contains(usage, s) {
					t.Fatalf("usage=%q, want it to show %q", usage, s)
				}
			}

			// Both messages are kept, with the reply's usage.
			res, body = app.get("/api/v1/threads/" + threadID)
			if got, want := res.StatusCode, http.StatusOK; got != want {
				t.Fatalf("GET thread: Status=%d, want %d", got, want)
			}
			got := decodeJSON[struct {
				Messages []chatMessage `json:"messages"`
			}](t, body).Messages
			wantMsgs := []chatMessage{
				{ID: user.ID, Role: "user", Content: question, Status: "complete"},
				{ID: reply.ID, Role: "assistant", Content: wantText, Status: "complete", Model: pc.model,
					InputTokens: pc.inTokens, OutputTokens: pc.outTokens, ResponseID: pc.responseID, ReplyTo: user.ID},
			}
			if diff := cmp.Diff(wantMsgs, got); diff != "" {
				t.Fatalf("GET thread messages mismatch (-want +got):\n%s", diff)
			}

			// The fake got one request in its API's format: the brainstorm
			// system prompt and the user's message.
			reqs := fake.received()
			if len(reqs) != 1 {
				t.Fatalf("fake received %d requests, want 1", len(reqs))
			}
			if got, want := reqs[0].Method+" "+reqs[0].Path, "POST "+pc.path; got != want {
				t.Fatalf("request=%q, want %q", got, want)
			}
			pc.checkAuth(t, reqs[0].Header)
			if diff := cmp.Diff(pc.wantRequest(system, question), reqs[0].Body); diff != "" {
				t.Fatalf("request body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatFlowProviderAuthFailureAndRetry(t *testing.T) {
	const question = "Is the key right?"
	system := agent.BrainstormRequest([]agent.Message{agent.Text(agent.RoleUser, question)}, "").System

	for _, pc := range chatProviders() {
		t.Run(pc.name, func(t *testing.T) {
			fake := newChatFake(t, func(w http.ResponseWriter, _ int) { pc.fail(w, http.StatusUnauthorized, nil) })
			// Retries are allowed, yet a 401 is not worth one.
			app := newApp(t, pc.newProvider(t, fake, 2))
			threadID := createThreadAPI(t, app, "Keys")
			user := app.sendHTMX(threadID, question)

			deltas, done := streamReply(t, app, threadID, user.ID)
			if len(deltas) != 0 {
				t.Fatalf("deltas=%q, want none", deltas)
			}
			failed, err := app.DB.FindReply(context.Background(), threadID, user.ID)
			if err != nil {
				t.Fatal(err)
			}
			if failed.Status != store.StatusFailed || !strings.HasSuffix(failed.Error, pc.authMessage) {
				t.Fatalf("stored Status=%q Error=%q, want failed with a message ending %q", failed.Status, failed.Error, pc.authMessage)
			}
			if got, want := len(fake.received()), 1; got != want {
				t.Fatalf("fake received %d requests, want %d (a 401 is not retried)", got, want)
			}

			// The stream's done event and the page show why, with Retry.
			retryURL := "/t/" + threadID + "/messages/" + failed.ID + "/retry"
			checkFailed := func(t *testing.T, where, doc string) {
				t.Helper()
				art := findOne(t, parseHTML(t, doc), "article", "id", "msg-"+failed.ID)
				if got, want := attr(art, "data-status"), "failed"; got != want {
					t.Fatalf("%s: data-status=%q, want %q", where, got, want)
				}
				if got := textOf(findOne(t, art, "", "data-testid", "reply-error")); got != failed.Error {
					t.Fatalf("%s: reply-error=%q, want %q", where, got, failed.Error)
				}
				findOne(t, findOne(t, art, "form", "action", retryURL), "button", "data-testid", "retry")
			}
			checkFailed(t, "done event", done.Data)
			_, page := app.get("/t/" + threadID)
			checkFailed(t, "page", page)

			// The key is fixed; Retry makes one complete reply.
			fake.set(func(w http.ResponseWriter, _ int) { pc.stream(w) })
			res, body := app.postForm(retryURL, nil, htmxSameOrigin)
			if got, want := res.StatusCode, http.StatusOK; got != want {
				t.Fatalf("retry: Status=%d, want %d; body: %s", got, want, body)
			}
			deltas, done = streamReply(t, app, threadID, user.ID)
			if diff := cmp.Diff(escapedDeltas(), deltas); diff != "" {
				t.Fatalf("retried deltas mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(done.Data, `data-status="complete"`) {
				t.Fatalf("retried done=%s, want a complete reply", done.Data)
			}

			msgs := app.messages(threadID)
			if len(msgs) != 2 {
				t.Fatalf("stored %d messages, want 2: %+v", len(msgs), msgs)
			}
			if msgs[0].ID != user.ID || msgs[0].Content != question {
				t.Fatalf("first message=%+v, want the same user message", msgs[0])
			}
			if r := msgs[1]; r.ReplyTo != user.ID || r.Status != store.StatusComplete || r.Error != "" ||
				r.Content != strings.Join(chatDeltas, "") || r.ResponseID != pc.responseID {
				t.Fatalf("reply=%+v, want one complete reply to the user message", r)
			}
			// The model saw the question once, not the failure.
			reqs := fake.received()
			if len(reqs) != 2 {
				t.Fatalf("fake received %d requests, want 2", len(reqs))
			}
			if diff := cmp.Diff(pc.wantRequest(system, question), reqs[1].Body); diff != "" {
				t.Fatalf("retried request body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatFlowProviderRateLimitRetried(t *testing.T) {
	for _, pc := range chatProviders() {
		t.Run(pc.name, func(t *testing.T) {
			fake := newChatFake(t, func(w http.ResponseWriter, attempt int) {
				if attempt == 1 {
					pc.fail(w, http.StatusTooManyRequests, http.Header{"Retry-After": {"0"}})
					return
				}
				pc.stream(w)
			})
			app := newApp(t, pc.newProvider(t, fake, 1))
			threadID := createThreadAPI(t, app, "Busy")
			user := app.sendHTMX(threadID, "Still there?")

			// The person sees one reply, streamed once; the 429 stays unseen.
			deltas, done := streamReply(t, app, threadID, user.ID)
			if diff := cmp.Diff(escapedDeltas(), deltas); diff != "" {
				t.Fatalf("deltas mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(done.Data, `data-status="complete"`) {
				t.Fatalf("done=%s, want a complete reply", done.Data)
			}
			reply, err := app.DB.FindReply(context.Background(), threadID, user.ID)
			if err != nil {
				t.Fatal(err)
			}
			if reply.Status != store.StatusComplete || reply.Content != strings.Join(chatDeltas, "") || reply.Error != "" {
				t.Fatalf("stored reply=%+v, want complete", reply)
			}
			if got, want := len(fake.received()), 2; got != want {
				t.Fatalf("fake received %d requests, want %d (the 429, then the retry)", got, want)
			}
			if got, want := len(app.messages(threadID)), 2; got != want {
				t.Fatalf("stored %d messages, want %d", got, want)
			}
		})
	}
}
