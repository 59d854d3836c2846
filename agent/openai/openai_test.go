package openai_test

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
	"github.com/baton-dev/baton/agent/openai"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testKey = "sk-proj-test-key"

// The chunks below follow OpenAI's streaming documentation: each is a
// "data:" line holding a chat.completion.chunk, the last choice chunk carries
// finish_reason, a usage chunk with no choices follows when
// stream_options.include_usage is set, and "data: [DONE]" ends the stream.

const completionID = "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG"

func chunk(choices string) string {
	return fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6ec83003ad","choices":[%s],"usage":null}`+"\n\n", completionID, choices)
}

func roleChunk() string {
	return chunk(`{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`)
}

func contentChunk(text string) string {
	b, _ := json.Marshal(text)
	return chunk(fmt.Sprintf(`{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":null}`, b))
}

func toolStartChunk(index int, id, name string) string {
	return chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]},"logprobs":null,"finish_reason":null}`, index, id, name))
}

func argsChunk(index int, args string) string {
	b, _ := json.Marshal(args)
	return chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]},"logprobs":null,"finish_reason":null}`, index, b))
}

func finishChunk(reason string) string {
	return chunk(fmt.Sprintf(`{"index":0,"delta":{},"logprobs":null,"finish_reason":%q}`, reason))
}

func usageChunk(prompt, completion int) string {
	return fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6ec83003ad","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`+"\n\n", completionID, prompt, completion, prompt+completion)
}

func done() string { return "data: [DONE]\n\n" }

// textStream is a whole reply streaming "Hello, world!" in four deltas.
func textStream() []string {
	return []string{
		roleChunk(),
		contentChunk("Hello"),
		contentChunk(","),
		contentChunk(" world"),
		contentChunk("!"),
		finishChunk("stop"),
		usageChunk(19, 10),
		done(),
	}
}

// fake is a Chat Completions endpoint on httptest, under /v1 like OpenAI's.
type fake struct {
	srv     *httptest.Server
	release chan struct{} // closed at cleanup, so blocked handlers return

	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
}

func (f *fake) url() string { return f.srv.URL + "/v1" }

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

// streamChunks writes a 200 event stream, flushing after each chunk.
func streamChunks(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("x-request-id", "req_test_stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for _, c := range chunks {
		io.WriteString(w, c)
		w.(http.Flusher).Flush()
	}
}

// apiError writes an error response as the API does.
func apiError(w http.ResponseWriter, status int, typ, code, message string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-request-id", "req_test_error")
	w.WriteHeader(status)
	codeJSON := "null"
	if code != "" {
		codeJSON = fmt.Sprintf("%q", code)
	}
	fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"param":null,"code":%s}}`, message, typ, codeJSON)
}

// newProvider returns a provider for the fake. Unless the test says
// otherwise it talks to the fake as to a compatible server, with a key.
func newProvider(t *testing.T, f *fake, cfg openai.Config) *openai.Provider {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = f.url()
	}
	cfg.HTTPClient = f.srv.Client()
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// officialProvider returns a provider that believes it talks to
// api.openai.com, while its transport sends everything to the fake.
func officialProvider(t *testing.T, f *fake, cfg openai.Config) *openai.Provider {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	client := f.srv.Client()
	inner := client.Transport
	client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme = "http"
		r.URL.Host = strings.TrimPrefix(f.srv.URL, "http://")
		r.Host = r.URL.Host
		return inner.RoundTrip(r)
	})
	cfg.HTTPClient = client
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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

func discard(agent.Delta) error { return nil }

func TestStreamText(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, textStream()...) })
	p := newProvider(t, f, openai.Config{Model: "gpt-4.1-mini"})
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
	if got, want := reply.Usage, (agent.Usage{InputTokens: 19, OutputTokens: 10, ResponseID: completionID}); got != want {
		t.Fatalf("Usage=%+v, want %+v", got, want)
	}
	if got, want := reply.Model, "gpt-4.1-mini-2025-04-14"; got != want {
		t.Fatalf("Model=%q, want %q", got, want)
	}
	if reply.Duration <= 0 {
		t.Fatalf("Duration=%v, want > 0", reply.Duration)
	}

	r, body := f.request(0)
	if got, want := r.URL.Path, "/v1/chat/completions"; got != want {
		t.Fatalf("path=%q, want %q", got, want)
	}
	if got, want := r.Header.Get("Authorization"), "Bearer "+testKey; got != want {
		t.Fatalf("Authorization=%q, want %q", got, want)
	}
	if got, want := body["stream"], true; got != want {
		t.Fatalf("stream=%v, want %v", got, want)
	}
	if diff := cmp.Diff(map[string]any{"include_usage": true}, body["stream_options"]); diff != "" {
		t.Fatalf("stream_options mismatch (-want +got):\n%s", diff)
	}
	if got, want := body["model"], "gpt-4.1-mini"; got != want {
		t.Fatalf("model=%v, want %v", got, want)
	}
}

func TestStreamToolCalls(t *testing.T) {
	// Two parallel calls, their arguments split over many chunks and
	// interleaved by index, as the API sends them.
	chunks := []string{
		chunk(`{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null}`),
		toolStartChunk(0, "call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather"),
		argsChunk(0, `{"lo`),
		argsChunk(0, `cation": "Par`),
		toolStartChunk(1, "call_ABCDEF", "get_time"),
		argsChunk(1, `{"tz":`),
		argsChunk(0, `is, France"}`),
		argsChunk(1, ` "Europe/Paris"}`),
		finishChunk("tool_calls"),
		usageChunk(82, 17),
		done(),
	}
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, chunks...) })
	p := newProvider(t, f, openai.Config{})
	emit, deltas := collect()

	reply, err := p.Stream(context.Background(), userText("Weather and time in Paris?"), emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(*deltas) != 0 {
		t.Fatalf("deltas=%q, want none", *deltas)
	}
	want := []agent.Part{
		agent.ToolCallPart{ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "get_weather", Input: json.RawMessage(`{"location": "Paris, France"}`)},
		agent.ToolCallPart{ID: "call_ABCDEF", Name: "get_time", Input: json.RawMessage(`{"tz": "Europe/Paris"}`)},
	}
	if diff := cmp.Diff(want, reply.Parts); diff != "" {
		t.Fatalf("Parts mismatch (-want +got):\n%s", diff)
	}
	if got, want := reply.StopReason, agent.StopToolUse; got != want {
		t.Fatalf("StopReason=%q, want %q", got, want)
	}
	if got, want := reply.Usage.OutputTokens, int64(17); got != want {
		t.Fatalf("OutputTokens=%d, want %d", got, want)
	}
}

func TestStreamTextThenToolCallFinishedAsStop(t *testing.T) {
	// Older Ollama says finish_reason "stop" even when the reply calls a tool.
	chunks := []string{
		roleChunk(),
		contentChunk("Checking."),
		toolStartChunk(0, "call_1", "complete_planning"),
		argsChunk(0, `{}`),
		finishChunk("stop"),
		done(),
	}
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, chunks...) })
	p := newProvider(t, f, openai.Config{})
	reply, err := p.Stream(context.Background(), userText("Finish."), discard)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []agent.Part{
		agent.TextPart{Text: "Checking."},
		agent.ToolCallPart{ID: "call_1", Name: "complete_planning", Input: json.RawMessage(`{}`)},
	}
	if diff := cmp.Diff(want, reply.Parts); diff != "" {
		t.Fatalf("Parts mismatch (-want +got):\n%s", diff)
	}
	if got, want := reply.StopReason, agent.StopToolUse; got != want {
		t.Fatalf("StopReason=%q, want %q", got, want)
	}
	// No usage chunk: a server that ignores include_usage leaves usage at zero.
	if got, want := reply.Usage, (agent.Usage{ResponseID: completionID}); got != want {
		t.Fatalf("Usage=%+v, want %+v", got, want)
	}
}

func TestStreamMaxTokens(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamChunks(w, roleChunk(), contentChunk("Once upon"), finishChunk("length"), usageChunk(5, 2), done())
	})
	p := newProvider(t, f, openai.Config{})
	reply, err := p.Stream(context.Background(), userText("Tell a story."), discard)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, want := reply.StopReason, agent.StopMaxTokens; got != want {
		t.Fatalf("StopReason=%q, want %q", got, want)
	}
}

func TestRequestMapping(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, textStream()...) })
	p := newProvider(t, f, openai.Config{Model: "llama3.2"})
	req := agent.Request{
		System:    "You are Baton.",
		MaxTokens: 1024,
		Messages: []agent.Message{
			agent.Text(agent.RoleUser, "Plan it."),
			{Role: agent.RoleAssistant, Parts: []agent.Part{
				agent.TextPart{Text: "Looking."},
				agent.ToolCallPart{ID: "call_a", Name: "get_handoff_context", Input: json.RawMessage(`{"section":"decisions"}`)},
				agent.ToolCallPart{ID: "call_b", Name: "add_decision", Input: nil},
			}},
			{Role: agent.RoleUser, Parts: []agent.Part{
				agent.TextPart{Text: "Carry on."},
				agent.ToolResultPart{CallID: "call_a", Content: `{"decisions":[]}`},
				agent.ToolResultPart{CallID: "call_b", Content: "content is required", IsError: true},
			}},
			{Role: agent.RoleAssistant, Parts: []agent.Part{
				agent.ToolCallPart{ID: "call_c", Name: "complete_planning", Input: json.RawMessage(`{}`)},
			}},
			{Role: agent.RoleUser, Parts: []agent.Part{agent.ToolResultPart{CallID: "call_c", Content: "ok"}}},
		},
		Tools: []agent.Tool{{
			Name:        "add_decision",
			Description: "Add a decision.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`),
		}, {
			Name: "complete_planning",
		}},
	}
	if _, err := p.Stream(context.Background(), req, discard); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	_, body := f.request(0)

	want := map[string]any{}
	mustJSON(t, `{
		"model": "llama3.2",
		"max_tokens": 1024,
		"stream": true,
		"stream_options": {"include_usage": true},
		"messages": [
			{"role": "system", "content": "You are Baton."},
			{"role": "user", "content": "Plan it."},
			{"role": "assistant", "content": "Looking.", "tool_calls": [
				{"id": "call_a", "type": "function", "function": {"name": "get_handoff_context", "arguments": "{\"section\":\"decisions\"}"}},
				{"id": "call_b", "type": "function", "function": {"name": "add_decision", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "call_a", "content": "{\"decisions\":[]}"},
			{"role": "tool", "tool_call_id": "call_b", "content": "Error: content is required"},
			{"role": "user", "content": "Carry on."},
			{"role": "assistant", "tool_calls": [
				{"id": "call_c", "type": "function", "function": {"name": "complete_planning", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "call_c", "content": "ok"}
		],
		"tools": [
			{"type": "function", "function": {
				"name": "add_decision",
				"description": "Add a decision.",
				"parameters": {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}
			}},
			{"type": "function", "function": {
				"name": "complete_planning",
				"parameters": {"type": "object", "properties": {}}
			}}
		]
	}`, &want)
	if diff := cmp.Diff(want, body); diff != "" {
		t.Fatalf("request body mismatch (-want +got):\n%s", diff)
	}
}

func TestRequestMaxTokensOfficial(t *testing.T) {
	// OpenAI's own API wants max_completion_tokens; its newer models refuse
	// max_tokens.
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, textStream()...) })
	p := officialProvider(t, f, openai.Config{})
	req := userText("hi")
	req.MaxTokens = 300
	if _, err := p.Stream(context.Background(), req, discard); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r, body := f.request(0)
	if got, want := body["max_completion_tokens"], 300.0; got != want {
		t.Fatalf("max_completion_tokens=%v, want %v", got, want)
	}
	if got, ok := body["max_tokens"]; ok {
		t.Fatalf("max_tokens=%v, want none", got)
	}
	if got, want := r.URL.Path, "/v1/chat/completions"; got != want {
		t.Fatalf("path=%q, want %q", got, want)
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
		{"tool schema not an object", agent.Request{Messages: []agent.Message{agent.Text(agent.RoleUser, "hi")}, Tools: []agent.Tool{{Name: "t", InputSchema: json.RawMessage(`[1]`)}}}},
		{"output schema not an object", agent.Request{Messages: []agent.Message{agent.Text(agent.RoleUser, "hi")}, Schema: &agent.Schema{Name: "x", JSON: json.RawMessage(`"no"`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, textStream()...) })
			p := newProvider(t, f, openai.Config{})
			_, err := p.Stream(context.Background(), tt.req, discard)
			assertKind(t, err, agent.ErrBadRequest)
			if got := f.attempts(); got != 0 {
				t.Fatalf("attempts=%d, want 0 (nothing sent)", got)
			}
		})
	}
}

func TestSchema(t *testing.T) {
	const schema = `{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"],"additionalProperties":false}`
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamChunks(w, roleChunk(), contentChunk(`{"summ`), contentChunk(`ary":"Ship `), contentChunk(`it."}`), finishChunk("stop"), usageChunk(300, 12), done())
	})
	p := newProvider(t, f, openai.Config{})
	emit, deltas := collect()
	req := userText("Extract.")
	req.Schema = &agent.Schema{Name: "extraction", Description: "The extraction.", JSON: json.RawMessage(schema)}

	reply, err := p.Stream(context.Background(), req, emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, want := reply.Text(), `{"summary":"Ship it."}`; got != want {
		t.Fatalf("Text=%q, want %q", got, want)
	}
	if got, want := strings.Join(*deltas, ""), reply.Text(); got != want {
		t.Fatalf("emitted=%q, want %q", got, want)
	}

	_, body := f.request(0)
	var want any
	mustJSON(t, `{"type": "json_schema", "json_schema": {"name": "extraction", "description": "The extraction.", "strict": true, "schema": `+schema+`}}`, &want)
	if diff := cmp.Diff(want, body["response_format"]); diff != "" {
		t.Fatalf("response_format mismatch (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		official   bool
		status     int
		typ, code  string
		message    string // the server's
		header     map[string]string
		maxRetries int
		kind       agent.ErrorKind
		want       string // exact, when set
		contains   []string
		retryAfter time.Duration
		wantTries  int
	}{
		{
			name: "401", official: true, status: 401, typ: "invalid_request_error", code: "invalid_api_key",
			message: "Incorrect API key provided: sk-proj-****-key.", kind: agent.ErrAuth, wantTries: 1,
			want: "OpenAI rejected the API key (401). Set OPENAI_API_KEY or switch BATON_PROVIDER=offline.",
		},
		{
			name: "403", official: true, status: 403, typ: "invalid_request_error", code: "unsupported_country_region_territory",
			message: "Country, region, or territory not supported", kind: agent.ErrAuth, wantTries: 1,
			contains: []string{"403", "OPENAI_API_KEY", "not supported"},
		},
		{
			name: "404 OpenAI", official: true, status: 404, typ: "invalid_request_error", code: "model_not_found",
			message: "The model `gpt-nope` does not exist or you do not have access to it.", kind: agent.ErrModel, wantTries: 1,
			contains: []string{`"gpt-nope"`, "BATON_MODEL", "404"},
		},
		{
			name: "404 Ollama", status: 404, typ: "not_found_error",
			message: `model "gpt-nope" not found, try pulling it first`, kind: agent.ErrModel, wantTries: 1,
			contains: []string{`"gpt-nope"`, "BATON_MODEL", "/v1", "The server at http://127.0.0.1"},
		},
		{
			name: "400", official: true, status: 400, typ: "invalid_request_error", code: "context_length_exceeded",
			message: "This model's maximum context length is 128000 tokens.", kind: agent.ErrBadRequest, wantTries: 1,
			contains: []string{"400", "maximum context length"},
		},
		{
			name: "429 no retries", official: true, status: 429, typ: "requests", code: "rate_limit_exceeded",
			message: "Rate limit reached for gpt-4.1-mini.", header: map[string]string{"retry-after": "20"},
			kind: agent.ErrRateLimited, retryAfter: 20 * time.Second, wantTries: 1,
			contains: []string{"429", "20s", "BATON_PROVIDER=offline"},
		},
		{
			name: "429 exhausts retries", official: true, status: 429, typ: "requests", code: "rate_limit_exceeded",
			message: "Rate limit reached.", header: map[string]string{"retry-after-ms": "20", "retry-after": "1"},
			maxRetries: 2, kind: agent.ErrRateLimited, retryAfter: 20 * time.Millisecond, wantTries: 3,
		},
		{
			name: "429 out of quota", official: true, status: 429, typ: "insufficient_quota", code: "insufficient_quota",
			message: "You exceeded your current quota.", header: map[string]string{"x-should-retry": "false"},
			maxRetries: 2, kind: agent.ErrAuth, wantTries: 1, contains: []string{"quota", "billing"},
		},
		{
			name: "500", official: true, status: 500, typ: "server_error",
			message: "The server had an error while processing your request.", kind: agent.ErrUnavailable, wantTries: 1,
			contains: []string{"500", "BATON_PROVIDER=offline"},
		},
		{
			name: "503 exhausts retries", official: true, status: 503, typ: "server_error",
			message: "Service unavailable.", header: map[string]string{"retry-after-ms": "1"},
			maxRetries: 1, kind: agent.ErrUnavailable, wantTries: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				apiError(w, tt.status, tt.typ, tt.code, tt.message, tt.header)
			})
			cfg := openai.Config{Model: "gpt-nope", MaxRetries: tt.maxRetries}
			var p *openai.Provider
			if tt.official {
				p = officialProvider(t, f, cfg)
			} else {
				p = newProvider(t, f, cfg)
			}
			emit, deltas := collect()
			_, err := p.Stream(context.Background(), userText("hi"), emit)
			e := assertKind(t, err, tt.kind)
			if got, want := e.Status, tt.status; got != want {
				t.Fatalf("Status=%d, want %d", got, want)
			}
			if tt.want != "" && e.Message != tt.want {
				t.Fatalf("Message=%q, want %q", e.Message, tt.want)
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
			apiError(w, 429, "requests", "rate_limit_exceeded", "Rate limit reached for requests.", map[string]string{"retry-after": "0.01"})
			return
		}
		streamChunks(w, textStream()...)
	})
	p := newProvider(t, f, openai.Config{MaxRetries: 2})
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

func TestStreamErrorChunk(t *testing.T) {
	tests := []struct {
		name string
		data string
		kind agent.ErrorKind
	}{
		{"server error", `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`, agent.ErrUnavailable},
		{"rate limit", `{"error":{"message":"Rate limit reached.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, agent.ErrRateLimited},
		{"unknown", `{"error":{"message":"Something odd.","type":"odd_error","param":null,"code":null}}`, agent.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				streamChunks(w, roleChunk(), contentChunk("Hel"), "data: "+tt.data+"\n\n")
			})
			// Retries are allowed, yet none may happen: text already went out.
			p := newProvider(t, f, openai.Config{MaxRetries: 3})
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
			streamChunks(w, roleChunk(), "data: {not json at all\n\n")
		}},
		{"html page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Welcome to nginx!</body></html>")
		}},
		{"ends without finish_reason", func(w http.ResponseWriter) {
			streamChunks(w, roleChunk(), contentChunk("Hel"))
		}},
		{"only done", func(w http.ResponseWriter) {
			streamChunks(w, done())
		}},
		{"tool arguments not JSON", func(w http.ResponseWriter) {
			streamChunks(w, roleChunk(), toolStartChunk(0, "call_1", "t"), argsChunk(0, `{"a": `), finishChunk("tool_calls"), done())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { tt.write(w) })
			p := newProvider(t, f, openai.Config{})
			_, err := p.Stream(context.Background(), userText("hi"), discard)
			assertKind(t, err, agent.ErrMalformed)
		})
	}
}

func TestToolCallCutByTokenLimit(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamChunks(w, roleChunk(), toolStartChunk(0, "call_1", "add_decision"), argsChunk(0, `{"content": "Use Postg`), finishChunk("length"), done())
	})
	p := newProvider(t, f, openai.Config{})
	_, err := p.Stream(context.Background(), userText("hi"), discard)
	e := assertKind(t, err, agent.ErrMalformed)
	if !strings.Contains(e.Message, "token limit") {
		t.Fatalf("Message=%q, want it to name the token limit", e.Message)
	}
}

func TestCallerDeadline(t *testing.T) {
	var f *fake
	f = newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamChunks(w, roleChunk(), contentChunk("Hel"))
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
	})
	p := newProvider(t, f, openai.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Stream(ctx, userText("hi"), discard)
	assertKind(t, err, agent.ErrTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err=%v, want it to wrap context.DeadlineExceeded", err)
	}
}

func TestTimeoutNotRetried(t *testing.T) {
	var f *fake
	f = newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
	})
	p := newProvider(t, f, openai.Config{Timeout: 100 * time.Millisecond, MaxRetries: 2})
	_, err := p.Stream(context.Background(), userText("hi"), discard)
	assertKind(t, err, agent.ErrTimeout)
	if got, want := f.attempts(), 1; got != want {
		t.Fatalf("attempts=%d, want %d", got, want)
	}
}

func TestCancelMidStream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		streamChunks(w, roleChunk(), contentChunk("Hel"))
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	p := newProvider(t, f, openai.Config{MaxRetries: 2})
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
	p := newProvider(t, f, openai.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := p.Stream(ctx, userText("hi"), discard)
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
			streamChunks(w, roleChunk(), contentChunk("Hel"))
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
			p := newProvider(t, f, openai.Config{Timeout: 100 * time.Millisecond})
			_, err := p.Stream(context.Background(), userText("hi"), discard)
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
	p, err := openai.New(openai.Config{BaseURL: f.url(), HTTPClient: client, MaxRetries: -1})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = p.Stream(context.Background(), userText("hi"), discard)
	assertKind(t, err, agent.ErrTimeout)
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/v1"
	srv.Close()
	p, err := openai.New(openai.Config{BaseURL: url, HTTPClient: &http.Client{Transport: &http.Transport{}}, MaxRetries: -1})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = p.Stream(context.Background(), userText("hi"), discard)
	e := assertKind(t, err, agent.ErrUnavailable)
	for _, s := range []string{url, "running", "OPENAI_BASE_URL"} {
		if !strings.Contains(e.Message, s) {
			t.Fatalf("Message=%q, want it to contain %q", e.Message, s)
		}
	}
}

func TestEmitErrorAborts(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, textStream()...) })
	p := newProvider(t, f, openai.Config{})
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
		cfg     openai.Config
		kind    agent.ErrorKind
		message string
	}{
		{"no key", openai.Config{}, agent.ErrAuth, "OPENAI_API_KEY is not set. Set it, or run with BATON_PROVIDER=offline."},
		{"no key, OpenAI's URL", openai.Config{BaseURL: "https://api.openai.com/v1"}, agent.ErrAuth, "OPENAI_API_KEY is not set. Set it, or run with BATON_PROVIDER=offline."},
		{"base URL without scheme", openai.Config{BaseURL: "localhost:11434/v1"}, agent.ErrBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openai.New(tt.cfg)
			e := assertKind(t, err, tt.kind)
			if tt.message != "" && e.Message != tt.message {
				t.Fatalf("Message=%q, want %q", e.Message, tt.message)
			}
			if !strings.Contains(e.Message, "BATON_PROVIDER=offline") && !strings.Contains(e.Message, "OPENAI_BASE_URL") {
				t.Fatalf("Message=%q, want it to say what to set", e.Message)
			}
		})
	}

	// Ollama needs no key.
	p, err := openai.New(openai.Config{BaseURL: "http://localhost:11434/v1"})
	if err != nil {
		t.Fatalf("New without key for a local server: %v", err)
	}
	if got, want := p.Model(), openai.DefaultModel; got != want {
		t.Fatalf("Model=%q, want %q", got, want)
	}
	if got, want := p.Name(), "openai"; got != want {
		t.Fatalf("Name=%q, want %q", got, want)
	}
}

func TestEnvironmentIgnored(t *testing.T) {
	// A local server without a key must not receive the OpenAI key, org or
	// project the SDK would otherwise pick up from the environment.
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-from-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-From-Env: yes")
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, textStream()...) })
	p, err := openai.New(openai.Config{BaseURL: f.url(), HTTPClient: f.srv.Client(), MaxRetries: -1})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := p.Stream(context.Background(), userText("hi"), discard); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r, _ := f.request(0)
	for _, h := range []string{"Authorization", "OpenAI-Organization", "OpenAI-Project", "X-From-Env"} {
		if got := r.Header.Get(h); got != "" {
			t.Fatalf("%s=%q, want none", h, got)
		}
	}
}

func TestLogging(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { streamChunks(w, textStream()...) })
		var buf bytes.Buffer
		p := newProvider(t, f, openai.Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
		if _, err := p.Stream(context.Background(), userText("hi"), discard); err != nil {
			t.Fatalf("Stream: %v", err)
		}
		line := onlyLine(t, &buf)
		want := map[string]any{"level": "INFO", "provider": "openai", "model": "gpt-4.1-mini-2025-04-14", "input_tokens": 19.0, "output_tokens": 10.0, "response_id": completionID}
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
			apiError(w, 401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.", nil)
		})
		var buf bytes.Buffer
		p := newProvider(t, f, openai.Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
		_, _ = p.Stream(context.Background(), userText("hi"), discard)
		line := onlyLine(t, &buf)
		want := map[string]any{"level": "WARN", "provider": "openai", "kind": "auth", "status": 401.0}
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
			apiError(w, 502, "server_error", "", "Bad gateway.", nil)
		})
		var buf bytes.Buffer
		p := newProvider(t, f, openai.Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
		_, _ = p.Stream(context.Background(), userText("hi"), discard)
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
	if e.Provider != "openai" {
		t.Fatalf("Provider=%q, want %q", e.Provider, "openai")
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
