package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/anthropic"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testKey = "sk-ant-test-key"

// The events below follow Anthropic's streaming documentation: every event
// is an "event:" line naming its type and a "data:" line with the JSON.

func messageStart(id string, inputTokens int) string {
	return event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":%q,"type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, id, inputTokens))
}

func textStart(index int) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index))
}

func textDelta(index int, text string) string {
	b, _ := json.Marshal(text)
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, index, b))
}

func toolStart(index int, id, name string) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, index, id, name))
}

func jsonDelta(index int, partial string) string {
	b, _ := json.Marshal(partial)
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, b))
}

func blockStop(index int) string {
	return event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

func messageDelta(stopReason string, outputTokens int) string {
	return event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stopReason, outputTokens))
}

func messageStop() string { return event("message_stop", `{"type":"message_stop"}`) }

func ping() string { return event("ping", `{"type": "ping"}`) }

func errorEvent(typ, message string) string {
	return event("error", fmt.Sprintf(`{"type": "error", "error": {"type": %q, "message": %q}}`, typ, message))
}

func event(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

// textStream is a whole reply streaming "Hello, world!" in four deltas.
func textStream() []string {
	return []string{
		messageStart("msg_01XFDUDYJgAACzvnptvVoYEL", 25),
		textStart(0),
		ping(),
		textDelta(0, "Hello"),
		textDelta(0, ","),
		textDelta(0, " world"),
		textDelta(0, "!"),
		blockStop(0),
		messageDelta("end_turn", 15),
		messageStop(),
	}
}

// fake is an Anthropic Messages endpoint on httptest.
type fake struct {
	srv     *httptest.Server
	release chan struct{} // closed at cleanup, so blocked handlers return

	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
}

// newFake serves handle; attempt counts requests from 1.
func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, attempt int)) *fake {
	t.Helper()
	f := &fake{release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, r)
		f.bodies = append(f.bodies, body)
		attempt := len(f.bodies)
		f.mu.Unlock()
		handle(w, r, attempt)
	}))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) })
	return f
}

func (f *fake) attempts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fake) request(i int) (*http.Request, map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var body map[string]any
	_ = json.Unmarshal(f.bodies[i], &body)
	return f.requests[i], body
}

// streamEvents writes a 200 event stream, flushing after each event.
func streamEvents(w http.ResponseWriter, events ...string) {
	startStream(w)
	for _, e := range events {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_011CTestStream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// apiError writes an error response as the Messages API does.
func apiError(w http.ResponseWriter, status int, typ, message string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_011CTestError")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CTestError"}`, typ, message)
}

func newProvider(t *testing.T, f *fake, cfg anthropic.Config) *anthropic.Provider {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	cfg.BaseURL = f.srv.URL
	cfg.HTTPClient = f.srv.Client()
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1
	}
	p, err := anthropic.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// collect returns an emit func that records deltas, and the record.
func collect() (func(agent.Delta) error, *[]string) {
	var mu sync.Mutex
	var got []string
	return func(d agent.Delta) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d.Text)
		return nil
	}, &got
}

func userText(s string) agent.Request {
	return agent.Request{Messages: []agent.Message{agent.Text(agent.RoleUser, s)}}
}

func TestStreamText(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamEvents(w, textStream()...) })
	p := newProvider(t, f, anthropic.Config{Model: "claude-sonnet-4-6"})
	emit, deltas := collect()

	reply, err := p.Stream(context.Background(), userText("Say hello"), emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if want := []string{"Hello", ",", " world", "!"}; !cmp.Equal(*deltas, want) {
		t.Fatalf("deltas=%q, want %q", *deltas, want)
	}
	if got, want := reply.Parts, []agent.Part{agent.TextPart{Text: "Hello, world!"}}; !cmp.Equal(got, want) {
		t.Fatalf("Parts=%#v, want %#v", got, want)
	}
	if got, want := reply.StopReason, agent.StopEnd; got != want {
		t.Fatalf("StopReason=%q, want %q", got, want)
	}
	if got, want := reply.Usage, (agent.Usage{InputTokens: 25, OutputTokens: 15, ResponseID: "msg_01XFDUDYJgAACzvnptvVoYEL"}); got != want {
		t.Fatalf("Usage=%+v, want %+v", got, want)
	}
	if got, want := reply.Model, "claude-sonnet-4-6"; got != want {
		t.Fatalf("Model=%q, want %q", got, want)
	}
	if reply.Duration <= 0 {
		t.Fatalf("Duration=%v, want > 0", reply.Duration)
	}

	r, body := f.request(0)
	if got, want := r.URL.Path, "/v1/messages"; got != want {
		t.Fatalf("path=%q, want %q", got, want)
	}
	if got, want := r.Header.Get("X-Api-Key"), testKey; got != want {
		t.Fatalf("x-api-key=%q, want %q", got, want)
	}
	if got := r.Header.Get("Anthropic-Version"); got == "" {
		t.Fatalf("anthropic-version header missing")
	}
	if got, want := body["stream"], true; got != want {
		t.Fatalf("stream=%v, want %v", got, want)
	}
	if got, want := body["model"], "claude-sonnet-4-6"; got != want {
		t.Fatalf("model=%v, want %v", got, want)
	}
	if got, want := body["max_tokens"], float64(anthropic.DefaultMaxTokens); got != want {
		t.Fatalf("max_tokens=%v, want %v", got, want)
	}
}

func TestStreamToolCall(t *testing.T) {
	// The tool input arrives in many small pieces, as it does from the API.
	pieces := []string{"", `{"loc`, `ation": "San`, ` Francisc`, `o, CA"`, `, "unit": "fah`, `renheit"}`}
	events := []string{
		messageStart("msg_014p7gG3wDgGV9EUtLvnow3U", 472),
		textStart(0),
		textDelta(0, "Let me check"),
		textDelta(0, " the weather."),
		blockStop(0),
		toolStart(1, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather"),
	}
	for _, p := range pieces {
		events = append(events, jsonDelta(1, p))
	}
	events = append(events, blockStop(1), messageDelta("tool_use", 89), messageStop())
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamEvents(w, events...) })
	p := newProvider(t, f, anthropic.Config{})
	emit, deltas := collect()

	reply, err := p.Stream(context.Background(), userText("Weather in SF?"), emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if want := []string{"Let me check", " the weather."}; !cmp.Equal(*deltas, want) {
		t.Fatalf("deltas=%q, want %q", *deltas, want)
	}
	want := []agent.Part{
		agent.TextPart{Text: "Let me check the weather."},
		agent.ToolCallPart{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Input: json.RawMessage(`{"location": "San Francisco, CA", "unit": "fahrenheit"}`)},
	}
	if diff := cmp.Diff(want, reply.Parts); diff != "" {
		t.Fatalf("Parts mismatch (-want +got):\n%s", diff)
	}
	if got, want := reply.StopReason, agent.StopToolUse; got != want {
		t.Fatalf("StopReason=%q, want %q", got, want)
	}
	if got, want := reply.Usage.OutputTokens, int64(89); got != want {
		t.Fatalf("OutputTokens=%d, want %d", got, want)
	}
}

func TestStreamToolCallWithoutInput(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamEvents(w, messageStart("msg_1", 10), toolStart(0, "toolu_1", "complete_planning"), blockStop(0), messageDelta("tool_use", 5), messageStop())
	})
	p := newProvider(t, f, anthropic.Config{})
	reply, err := p.Stream(context.Background(), userText("done"), func(agent.Delta) error { return nil })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	calls := reply.ToolCalls()
	if len(calls) != 1 {
		t.Fatalf("len(ToolCalls)=%d, want 1", len(calls))
	}
	if got, want := string(calls[0].Input), "{}"; got != want {
		t.Fatalf("Input=%q, want %q", got, want)
	}
}

func TestStreamCacheTokensCounted(t *testing.T) {
	start := event("message_start", `{"type":"message_start","message":{"id":"msg_c","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":1}}}`)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamEvents(w, start, textStart(0), textDelta(0, "ok"), blockStop(0), messageDelta("end_turn", 3), messageStop())
	})
	p := newProvider(t, f, anthropic.Config{})
	reply, err := p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, want := reply.Usage.InputTokens, int64(1110); got != want {
		t.Fatalf("InputTokens=%d, want %d", got, want)
	}
}

func TestRequestMapping(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamEvents(w, textStream()...) })
	p := newProvider(t, f, anthropic.Config{Model: "claude-test"})
	req := agent.Request{
		System:    "You are Baton.",
		MaxTokens: 1024,
		Messages: []agent.Message{
			agent.Text(agent.RoleUser, "Plan it."),
			{Role: agent.RoleAssistant, Parts: []agent.Part{
				agent.TextPart{Text: "Looking."},
				agent.ToolCallPart{ID: "toolu_a", Name: "get_handoff_context", Input: json.RawMessage(`{"section":"decisions"}`)},
				agent.ToolCallPart{ID: "toolu_b", Name: "add_decision", Input: nil},
			}},
			// Two results given as two messages answer one assistant turn.
			{Role: agent.RoleUser, Parts: []agent.Part{agent.ToolResultPart{CallID: "toolu_a", Content: `{"decisions":[]}`}}},
			{Role: agent.RoleUser, Parts: []agent.Part{
				agent.TextPart{Text: "Carry on."},
				agent.ToolResultPart{CallID: "toolu_b", Content: "content is required", IsError: true},
			}},
		},
		Tools: []agent.Tool{{
			Name:        "add_decision",
			Description: "Add a decision.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`),
		}},
	}
	if _, err := p.Stream(context.Background(), req, func(agent.Delta) error { return nil }); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	_, body := f.request(0)

	want := map[string]any{}
	mustJSON(t, `{
		"model": "claude-test",
		"max_tokens": 1024,
		"stream": true,
		"system": [{"type": "text", "text": "You are Baton."}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "Plan it."}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "Looking."},
				{"type": "tool_use", "id": "toolu_a", "name": "get_handoff_context", "input": {"section": "decisions"}},
				{"type": "tool_use", "id": "toolu_b", "name": "add_decision", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_a", "content": [{"type": "text", "text": "{\"decisions\":[]}"}]},
				{"type": "tool_result", "tool_use_id": "toolu_b", "is_error": true, "content": [{"type": "text", "text": "content is required"}]},
				{"type": "text", "text": "Carry on."}
			]}
		],
		"tools": [{
			"name": "add_decision",
			"description": "Add a decision.",
			"input_schema": {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}
		}]
	}`, &want)
	if diff := cmp.Diff(want, body); diff != "" {
		t.Fatalf("request body mismatch (-want +got):\n%s", diff)
	}
}

func TestRequestInvalid(t *testing.T) {
	tests := []struct {
		name string
		req  agent.Request
	}{
		{"tool result from assistant", agent.Request{Messages: []agent.Message{{Role: agent.RoleAssistant, Parts: []agent.Part{agent.ToolResultPart{CallID: "x"}}}}}},
		{"tool call from user", agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{agent.ToolCallPart{ID: "x", Name: "t"}}}}}},
		{"tool input not JSON", agent.Request{Messages: []agent.Message{{Role: agent.RoleAssistant, Parts: []agent.Part{agent.ToolCallPart{ID: "x", Name: "t", Input: json.RawMessage("{")}}}}}},
		{"unknown role", agent.Request{Messages: []agent.Message{agent.Text("system", "hi")}}},
		{"schema not an object", agent.Request{Messages: []agent.Message{agent.Text(agent.RoleUser, "hi")}, Tools: []agent.Tool{{Name: "t", InputSchema: json.RawMessage(`[1]`)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamEvents(w, textStream()...) })
			p := newProvider(t, f, anthropic.Config{})
			_, err := p.Stream(context.Background(), tt.req, func(agent.Delta) error { return nil })
			e, ok := agent.AsError(err)
			if !ok {
				t.Fatalf("err=%v, want *agent.Error", err)
			}
			if got, want := e.Kind, agent.ErrBadRequest; got != want {
				t.Fatalf("Kind=%q, want %q", got, want)
			}
			if got := f.attempts(); got != 0 {
				t.Fatalf("attempts=%d, want 0 (nothing sent)", got)
			}
		})
	}
}

func TestSchema(t *testing.T) {
	const schema = `{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamEvents(w,
			messageStart("msg_schema", 300),
			toolStart(0, "toolu_s", "extraction"),
			jsonDelta(0, `{"summ`),
			jsonDelta(0, `ary": "Ship `),
			jsonDelta(0, `it."}`),
			blockStop(0),
			messageDelta("tool_use", 20),
			messageStop(),
		)
	})
	p := newProvider(t, f, anthropic.Config{})
	emit, deltas := collect()
	req := userText("Extract.")
	req.Schema = &agent.Schema{Name: "extraction", Description: "The extraction.", JSON: json.RawMessage(schema)}

	reply, err := p.Stream(context.Background(), req, emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, want := reply.Parts, []agent.Part{agent.TextPart{Text: `{"summary": "Ship it."}`}}; !cmp.Equal(got, want) {
		t.Fatalf("Parts=%#v, want %#v", got, want)
	}
	if got, want := strings.Join(*deltas, ""), reply.Text(); got != want {
		t.Fatalf("emitted=%q, want %q", got, want)
	}
	if got, want := reply.StopReason, agent.StopEnd; got != want {
		t.Fatalf("StopReason=%q, want %q", got, want)
	}

	_, body := f.request(0)
	var want struct {
		Tools      any `json:"tools"`
		ToolChoice any `json:"tool_choice"`
	}
	mustJSON(t, `{
		"tools": [{"name": "extraction", "description": "The extraction.", "input_schema": `+schema+`}],
		"tool_choice": {"type": "tool", "name": "extraction"}
	}`, &want)
	if diff := cmp.Diff(want.Tools, body["tools"]); diff != "" {
		t.Fatalf("tools mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.ToolChoice, body["tool_choice"]); diff != "" {
		t.Fatalf("tool_choice mismatch (-want +got):\n%s", diff)
	}
}

func TestSchemaMissingOutput(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamEvents(w, textStream()...) })
	p := newProvider(t, f, anthropic.Config{})
	req := userText("Extract.")
	req.Schema = &agent.Schema{Name: "extraction", JSON: json.RawMessage(`{"type":"object"}`)}
	_, err := p.Stream(context.Background(), req, func(agent.Delta) error { return nil })
	assertKind(t, err, agent.ErrMalformed)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		typ         string
		header      map[string]string
		maxRetries  int
		kind        agent.ErrorKind
		message     string // exact, when set
		contains    []string
		retryAfter  time.Duration
		wantTries   int
		wantStatus  int
		wantRetries bool
	}{
		{
			name: "401", status: 401, typ: "authentication_error", kind: agent.ErrAuth, wantTries: 1,
			message: "Anthropic rejected the API key (401). Set ANTHROPIC_API_KEY or switch BATON_PROVIDER=offline.",
		},
		{
			name: "403", status: 403, typ: "permission_error", kind: agent.ErrAuth, wantTries: 1,
			contains: []string{"403", "ANTHROPIC_API_KEY", "BATON_PROVIDER=offline"},
		},
		{
			name: "404", status: 404, typ: "not_found_error", kind: agent.ErrModel, wantTries: 1,
			contains: []string{`"claude-nope"`, "BATON_MODEL", "404"},
		},
		{
			name: "400", status: 400, typ: "invalid_request_error", kind: agent.ErrBadRequest, wantTries: 1,
			contains: []string{"400", "the test says no"},
		},
		{
			name: "429 no retries", status: 429, typ: "rate_limit_error", header: map[string]string{"retry-after": "30"},
			kind: agent.ErrRateLimited, retryAfter: 30 * time.Second, wantTries: 1,
			contains: []string{"429", "30s", "BATON_PROVIDER=offline"},
		},
		{
			name: "429 exhausts retries", status: 429, typ: "rate_limit_error", header: map[string]string{"retry-after": "0.02"},
			maxRetries: 2, kind: agent.ErrRateLimited, retryAfter: 20 * time.Millisecond, wantTries: 3,
		},
		{
			name: "500", status: 500, typ: "api_error", kind: agent.ErrUnavailable, wantTries: 1,
			contains: []string{"500", "BATON_PROVIDER=offline"},
		},
		{
			name: "500 exhausts retries", status: 500, typ: "api_error", header: map[string]string{"retry-after-ms": "1"},
			maxRetries: 1, kind: agent.ErrUnavailable, wantTries: 2,
		},
		{
			name: "529 overloaded", status: 529, typ: "overloaded_error", kind: agent.ErrUnavailable, wantTries: 1,
			contains: []string{"overloaded", "529"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				apiError(w, tt.status, tt.typ, "the test says no", tt.header)
			})
			p := newProvider(t, f, anthropic.Config{Model: "claude-nope", MaxRetries: tt.maxRetries})
			emit, deltas := collect()
			_, err := p.Stream(context.Background(), userText("hi"), emit)
			e := assertKind(t, err, tt.kind)
			if got, want := e.Status, tt.status; got != want {
				t.Fatalf("Status=%d, want %d", got, want)
			}
			if tt.message != "" && e.Message != tt.message {
				t.Fatalf("Message=%q, want %q", e.Message, tt.message)
			}
			for _, s := range tt.contains {
				if !strings.Contains(e.Message, s) {
					t.Fatalf("Message=%q, want it to contain %q", e.Message, s)
				}
			}
			if got, want := e.RetryAfter, tt.retryAfter; got != want {
				t.Fatalf("RetryAfter=%v, want %v", got, want)
			}
			if got, want := f.attempts(), tt.wantTries; got != want {
				t.Fatalf("attempts=%d, want %d", got, want)
			}
			if len(*deltas) != 0 {
				t.Fatalf("deltas=%q, want none", *deltas)
			}
		})
	}
}

func TestRateLimitRetriedThenSucceeds(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, attempt int) {
		if attempt == 1 {
			apiError(w, 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", map[string]string{"retry-after": "0.01"})
			return
		}
		streamEvents(w, textStream()...)
	})
	p := newProvider(t, f, anthropic.Config{MaxRetries: 2})
	emit, deltas := collect()
	reply, err := p.Stream(context.Background(), userText("hi"), emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, want := reply.Text(), "Hello, world!"; got != want {
		t.Fatalf("Text=%q, want %q", got, want)
	}
	if got, want := strings.Join(*deltas, ""), "Hello, world!"; got != want {
		t.Fatalf("emitted=%q, want %q (once, not repeated)", got, want)
	}
	if got, want := f.attempts(), 2; got != want {
		t.Fatalf("attempts=%d, want %d", got, want)
	}
}

func TestStreamErrorEvent(t *testing.T) {
	tests := []struct {
		name string
		typ  string
		kind agent.ErrorKind
	}{
		{"overloaded", "overloaded_error", agent.ErrUnavailable},
		{"api error", "api_error", agent.ErrUnavailable},
		{"unknown type", "something_new_error", agent.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				streamEvents(w, messageStart("msg_e", 5), textStart(0), textDelta(0, "Hel"), errorEvent(tt.typ, "Overloaded"))
			})
			// Retries are allowed, yet none may happen: text already went out.
			p := newProvider(t, f, anthropic.Config{MaxRetries: 3})
			emit, deltas := collect()
			_, err := p.Stream(context.Background(), userText("hi"), emit)
			assertKind(t, err, tt.kind)
			if got, want := f.attempts(), 1; got != want {
				t.Fatalf("attempts=%d, want %d", got, want)
			}
			if want := []string{"Hel"}; !cmp.Equal(*deltas, want) {
				t.Fatalf("deltas=%q, want %q", *deltas, want)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name  string
		write func(w http.ResponseWriter)
	}{
		{"garbage data", func(w http.ResponseWriter) {
			streamEvents(w, messageStart("msg_g", 1), "event: content_block_start\ndata: {not json at all\n\n")
		}},
		{"html page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Welcome to nginx!</body></html>")
		}},
		{"ends before message_stop", func(w http.ResponseWriter) {
			streamEvents(w, messageStart("msg_t", 1), textStart(0), textDelta(0, "Hel"))
		}},
		{"delta for a block never started", func(w http.ResponseWriter) {
			streamEvents(w, messageStart("msg_i", 1), textDelta(3, "x"), messageStop())
		}},
		{"tool input not JSON", func(w http.ResponseWriter) {
			streamEvents(w, messageStart("msg_j", 1), toolStart(0, "toolu_1", "t"), jsonDelta(0, `{"a": `), blockStop(0), messageDelta("tool_use", 2), messageStop())
		}},
		{"tool input not JSON, block never stopped", func(w http.ResponseWriter) {
			streamEvents(w, messageStart("msg_k", 1), toolStart(0, "toolu_1", "t"), jsonDelta(0, `{"a": `), messageDelta("tool_use", 2), messageStop())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { tt.write(w) })
			p := newProvider(t, f, anthropic.Config{})
			_, err := p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
			assertKind(t, err, agent.ErrMalformed)
		})
	}
}

func TestToolCallCutByMaxTokens(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamEvents(w, messageStart("msg_m", 1), toolStart(0, "toolu_1", "add_decision"), jsonDelta(0, `{"content": "Use Postg`), blockStop(0), messageDelta("max_tokens", 64), messageStop())
	})
	p := newProvider(t, f, anthropic.Config{})
	_, err := p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
	e := assertKind(t, err, agent.ErrMalformed)
	if !strings.Contains(e.Message, "max_tokens") {
		t.Fatalf("Message=%q, want it to name max_tokens", e.Message)
	}
}

func TestCallerDeadline(t *testing.T) {
	var f *fake
	f = newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamEvents(w, messageStart("msg_d", 5), textStart(0), textDelta(0, "Hel"))
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
	})
	p := newProvider(t, f, anthropic.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Stream(ctx, userText("hi"), func(agent.Delta) error { return nil })
	assertKind(t, err, agent.ErrTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err=%v, want it to wrap context.DeadlineExceeded", err)
	}
}

func TestTimeoutBeforeReplyRetried(t *testing.T) {
	var f *fake
	f = newFake(t, func(w http.ResponseWriter, r *http.Request, attempt int) {
		if attempt == 1 {
			select {
			case <-r.Context().Done():
			case <-f.release:
			}
			return
		}
		streamEvents(w, textStream()...)
	})
	p := newProvider(t, f, anthropic.Config{Timeout: 100 * time.Millisecond, MaxRetries: 1})
	reply, err := p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, want := reply.Text(), "Hello, world!"; got != want {
		t.Fatalf("Text=%q, want %q", got, want)
	}
	if got, want := f.attempts(), 2; got != want {
		t.Fatalf("attempts=%d, want %d", got, want)
	}
}

func TestCancelMidStream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamEvents(w, messageStart("msg_c", 5), textStart(0), textDelta(0, "Hel"))
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	p := newProvider(t, f, anthropic.Config{MaxRetries: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	emit := func(d agent.Delta) error {
		cancel() // the person closed the tab after the first words
		return nil
	}
	start := time.Now()
	_, err := p.Stream(ctx, userText("hi"), emit)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Stream took %v after cancel, want prompt return", d)
	}
	if got, want := f.attempts(), 1; got != want {
		t.Fatalf("attempts=%d, want %d", got, want)
	}
}

func TestCancelBeforeReply(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	p := newProvider(t, f, anthropic.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := p.Stream(ctx, userText("hi"), func(agent.Delta) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
}

func TestTimeout(t *testing.T) {
	tests := []struct {
		name   string
		handle func(w http.ResponseWriter, r *http.Request, release <-chan struct{})
	}{
		{"before headers", func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}},
		{"mid-stream", func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
			streamEvents(w, messageStart("msg_t", 5), textStart(0), textDelta(0, "Hel"))
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f *fake
			f = newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { tt.handle(w, r, f.release) })
			p := newProvider(t, f, anthropic.Config{Timeout: 100 * time.Millisecond})
			_, err := p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
			e := assertKind(t, err, agent.ErrTimeout)
			if !strings.Contains(e.Message, "in time") {
				t.Fatalf("Message=%q, want it to say the call ran out of time", e.Message)
			}
		})
	}
}

func TestHTTPClientTimeout(t *testing.T) {
	var f *fake
	f = newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
	})
	client := f.srv.Client()
	client.Timeout = 100 * time.Millisecond
	p, err := anthropic.New(anthropic.Config{APIKey: testKey, BaseURL: f.srv.URL, HTTPClient: client, MaxRetries: -1})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
	assertKind(t, err, agent.ErrTimeout)
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, err := anthropic.New(anthropic.Config{APIKey: testKey, BaseURL: url, HTTPClient: &http.Client{Transport: &http.Transport{}}, MaxRetries: -1})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
	e := assertKind(t, err, agent.ErrUnavailable)
	if !strings.Contains(e.Message, url) {
		t.Fatalf("Message=%q, want it to name %q", e.Message, url)
	}
}

func TestEmitErrorAborts(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamEvents(w, textStream()...) })
	p := newProvider(t, f, anthropic.Config{})
	stop := errors.New("client went away")
	calls := 0
	_, err := p.Stream(context.Background(), userText("hi"), func(agent.Delta) error {
		calls++
		return stop
	})
	if err != stop {
		t.Fatalf("err=%v, want the emit error as it is", err)
	}
	if calls != 1 {
		t.Fatalf("emit calls=%d, want 1", calls)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     anthropic.Config
		kind    agent.ErrorKind
		message string
	}{
		{"no key", anthropic.Config{}, agent.ErrAuth, "ANTHROPIC_API_KEY is not set. Set it, or run with BATON_PROVIDER=offline."},
		{"blank key", anthropic.Config{APIKey: "  "}, agent.ErrAuth, "ANTHROPIC_API_KEY is not set. Set it, or run with BATON_PROVIDER=offline."},
		{"base URL without scheme", anthropic.Config{APIKey: testKey, BaseURL: "localhost:8080"}, agent.ErrBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := anthropic.New(tt.cfg)
			e := assertKind(t, err, tt.kind)
			if tt.message != "" && e.Message != tt.message {
				t.Fatalf("Message=%q, want %q", e.Message, tt.message)
			}
			if !strings.Contains(e.Message, "BATON_PROVIDER=offline") && !strings.Contains(e.Message, "ANTHROPIC_BASE_URL") {
				t.Fatalf("Message=%q, want it to say what to set", e.Message)
			}
		})
	}

	p, err := anthropic.New(anthropic.Config{APIKey: testKey})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got, want := p.Model(), anthropic.DefaultModel; got != want {
		t.Fatalf("Model=%q, want %q", got, want)
	}
	if got, want := p.Name(), "anthropic"; got != want {
		t.Fatalf("Name=%q, want %q", got, want)
	}
}

func TestEnvironmentIgnored(t *testing.T) {
	// What Baton was configured with wins; the SDK must not add what it finds
	// in the environment.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: yes")
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamEvents(w, textStream()...) })
	p := newProvider(t, f, anthropic.Config{})
	if _, err := p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil }); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r, _ := f.request(0)
	if got, want := r.Header.Get("X-Api-Key"), testKey; got != want {
		t.Fatalf("x-api-key=%q, want %q", got, want)
	}
	for _, h := range []string{"Authorization", "X-From-Env"} {
		if got := r.Header.Get(h); got != "" {
			t.Fatalf("%s=%q, want none", h, got)
		}
	}
}

func TestLogging(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamEvents(w, textStream()...) })
		var buf bytes.Buffer
		p := newProvider(t, f, anthropic.Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
		if _, err := p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil }); err != nil {
			t.Fatalf("Stream: %v", err)
		}
		line := onlyLine(t, &buf)
		want := map[string]any{"level": "INFO", "provider": "anthropic", "model": "claude-sonnet-4-6", "input_tokens": 25.0, "output_tokens": 15.0, "response_id": "msg_01XFDUDYJgAACzvnptvVoYEL"}
		for k, v := range want {
			if line[k] != v {
				t.Fatalf("%s=%v, want %v (line %v)", k, line[k], v, line)
			}
		}
		if _, ok := line["duration"]; !ok {
			t.Fatalf("duration missing from %v", line)
		}
	})
	t.Run("failure", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			apiError(w, 401, "authentication_error", "invalid x-api-key", nil)
		})
		var buf bytes.Buffer
		p := newProvider(t, f, anthropic.Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
		_, _ = p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
		line := onlyLine(t, &buf)
		want := map[string]any{"level": "WARN", "provider": "anthropic", "kind": "auth", "status": 401.0}
		for k, v := range want {
			if line[k] != v {
				t.Fatalf("%s=%v, want %v (line %v)", k, line[k], v, line)
			}
		}
		if strings.Contains(buf.String(), testKey) {
			t.Fatalf("log line contains the API key: %s", buf.String())
		}
	})
	t.Run("5xx is an error", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			apiError(w, 529, "overloaded_error", "Overloaded", nil)
		})
		var buf bytes.Buffer
		p := newProvider(t, f, anthropic.Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
		_, _ = p.Stream(context.Background(), userText("hi"), func(agent.Delta) error { return nil })
		if got, want := onlyLine(t, &buf)["level"], "ERROR"; got != want {
			t.Fatalf("level=%v, want %v", got, want)
		}
	})
}

func onlyLine(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("got %d log lines, want 1:\n%s", len(lines), buf.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatalf("log line is not JSON: %v", err)
	}
	return m
}

func assertKind(t *testing.T, err error, kind agent.ErrorKind) *agent.Error {
	t.Helper()
	e, ok := agent.AsError(err)
	if !ok {
		t.Fatalf("err=%v (%T), want *agent.Error of kind %q", err, err, kind)
	}
	if e.Kind != kind {
		t.Fatalf("Kind=%q, want %q (message %q, err %v)", e.Kind, kind, e.Message, e.Err)
	}
	if e.Provider != "anthropic" {
		t.Fatalf("Provider=%q, want %q", e.Provider, "anthropic")
	}
	if e.Message == "" {
		t.Fatalf("Message is empty, want one a person can act on")
	}
	return e
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("bad test JSON: %v", err)
	}
}
