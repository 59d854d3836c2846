package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/anthropic"
	"github.com/baton-dev/baton/agent/openai"
)

// providerPlanText is the plan the wire fakes write on their second
// request: it cites both decisions of the handoff.
const providerPlanText = "# Billing export\n\n" +
	"1. Add the CSV exporter in billing/export.go (D1).\n" +
	"2. Stream rows from the invoices table (D2).\n"

const providerPlanSummary = "Exports invoices as CSV, streamed row by row."

// planWireFake is a model API on httptest that answers its n-th request
// (from 1) with script(w, n) in the provider's streaming wire format, and
// records the request bodies.
type planWireFake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newPlanWireFake(t *testing.T, script func(w http.ResponseWriter, n int)) *planWireFake {
	t.Helper()
	f := &planWireFake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		n := len(f.bodies)
		f.mu.Unlock()
		if n > 2 {
			http.Error(w, `{"error":"unexpected request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		script(w, n)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *planWireFake) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

// flushed writes s and flushes it, so that each event is its own read.
func flushed(w http.ResponseWriter, s string) {
	io.WriteString(w, s)
	w.(http.Flusher).Flush()
}

// jsonString encodes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pieces cuts s into parts of at most n bytes.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// anthropicPlanScript answers as the Messages API streams: first a
// get_handoff_context tool_use, then the plan's text and a complete_planning
// tool_use, tool inputs arriving as input_json_delta pieces.
func anthropicPlanScript(w http.ResponseWriter, n int) {
	ev := func(name, data string) { flushed(w, "event: "+name+"\ndata: "+data+"\n\n") }
	toolUse := func(index int, id, name string, input []string) {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, index, id, name))
		for _, p := range input {
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, jsonString(p)))
		}
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
	}
	start := func(id string, inputTokens int) {
		ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":%q,"type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, id, inputTokens))
	}
	end := func(outputTokens int) {
		ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":%d}}`, outputTokens))
		ev("message_stop", `{"type":"message_stop"}`)
	}
	switch n {
	case 1:
		start("msg_01PlanContext", 500)
		ev("ping", `{"type": "ping"}`)
		toolUse(0, "toolu_01Context", agent.ToolGetHandoffContext, []string{"", "{", "}"})
		end(12)
	case 2:
		start("msg_01PlanWrite", 900)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for _, p := range pieces(providerPlanText, 11) {
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, jsonString(p)))
		}
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		toolUse(1, "toolu_01Done", agent.ToolCompletePlanning, pieces(`{"summary": `+jsonString(providerPlanSummary)+`}`, 9))
		end(150)
	}
}

// openaiPlanScript answers as Chat Completions streams: tool_calls deltas
// with the index, id and name first and the arguments split over chunks,
// finish_reason tool_calls, then a usage chunk and [DONE].
func openaiPlanScript(w http.ResponseWriter, n int) {
	id := fmt.Sprintf("chatcmpl-plan%d", n)
	chunk := func(choice string) {
		flushed(w, fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-mini","system_fingerprint":"fp_1","choices":[%s],"usage":null}`+"\n\n", id, choice))
	}
	toolCall := func(index int, callID, name string, args []string) {
		chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]},"logprobs":null,"finish_reason":null}`, index, callID, name))
		for _, a := range args {
			chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]},"logprobs":null,"finish_reason":null}`, index, jsonString(a)))
		}
	}
	end := func(prompt, completion int) {
		chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}`)
		flushed(w, fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-mini","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", id, prompt, completion, prompt+completion))
		flushed(w, "data: [DONE]\n\n")
	}
	switch n {
	case 1:
		chunk(`{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null}`)
		toolCall(0, "call_Context01", agent.ToolGetHandoffContext, []string{"{", "}"})
		end(500, 12)
	case 2:
		chunk(`{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`)
		for _, p := range pieces(providerPlanText, 11) {
			chunk(fmt.Sprintf(`{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":null}`, jsonString(p)))
		}
		toolCall(0, "call_Done01", agent.ToolCompletePlanning, pieces(`{"summary": `+jsonString(providerPlanSummary)+`}`, 9))
		end(900, 150)
	}
}

// planProviderCase is a real provider adapter against a plan wire fake.
type planProviderCase struct {
	name   string
	new    func(t *testing.T) (agent.Provider, *planWireFake)
	callID string // of the get_handoff_context call the fake makes
	// toolNames lists the tools a request offers.
	toolNames func(body map[string]any) []string
	// toolResult returns the content of the request's result for callID,
	// and whether there is one.
	toolResult func(body map[string]any, callID string) (string, bool)
}

func planProviderCases() []planProviderCase {
	return []planProviderCase{
		{
			name: "anthropic",
			new: func(t *testing.T) (agent.Provider, *planWireFake) {
				f := newPlanWireFake(t, anthropicPlanScript)
				p, err := anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: f.srv.URL, Model: "claude-sonnet-4-6",
					MaxRetries: -1, HTTPClient: f.srv.Client()})
				if err != nil {
					t.Fatal(err)
				}
				return p, f
			},
			callID: "toolu_01Context",
			toolNames: func(body map[string]any) []string {
				var names []string
				for _, x := range asSlice(body["tools"]) {
					names = append(names, fmt.Sprint(asMap(x)["name"]))
				}
				return names
			},
			// A user turn holds a tool_result block naming the tool_use_id,
			// its content a list of text blocks.
			toolResult: func(body map[string]any, callID string) (string, bool) {
				for _, m := range asSlice(body["messages"]) {
					if asMap(m)["role"] != "user" {
						continue
					}
					for _, b := range asSlice(asMap(m)["content"]) {
						block := asMap(b)
						if block["type"] != "tool_result" || block["tool_use_id"] != callID {
							continue
						}
						var text strings.Builder
						for _, c := range asSlice(block["content"]) {
							if asMap(c)["type"] == "text" {
								text.WriteString(fmt.Sprint(asMap(c)["text"]))
							}
						}
						return text.String(), true
					}
				}
				return "", false
			},
		},
		{
			name: "openai",
			new: func(t *testing.T) (agent.Provider, *planWireFake) {
				f := newPlanWireFake(t, openaiPlanScript)
				p, err := openai.New(openai.Config{APIKey: "sk-proj-test", BaseURL: f.srv.URL + "/v1", Model: "gpt-4.1-mini",
					MaxRetries: -1, HTTPClient: f.srv.Client()})
				if err != nil {
					t.Fatal(err)
				}
				return p, f
			},
			callID: "call_Context01",
			toolNames: func(body map[string]any) []string {
				var names []string
				for _, x := range asSlice(body["tools"]) {
					if asMap(x)["type"] != "function" {
						names = append(names, fmt.Sprintf("(%v)", asMap(x)["type"]))
						continue
					}
					names = append(names, fmt.Sprint(asMap(asMap(x)["function"])["name"]))
				}
				return names
			},
			// A message with role "tool" carries the tool_call_id.
			toolResult: func(body map[string]any, callID string) (string, bool) {
				for _, m := range asSlice(body["messages"]) {
					if msg := asMap(m); msg["role"] == "tool" && msg["tool_call_id"] == callID {
						s, ok := msg["content"].(string)
						return s, ok
					}
				}
				return "", false
			},
		},
	}
}

func asSlice(v any) []any        { s, _ := v.([]any); return s }
func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func TestProviderPlan(t *testing.T) {
	for _, pc := range planProviderCases() {
		t.Run(pc.name, func(t *testing.T) {
			p, fake := pc.new(t)
			app := newApp(t, p)
			s := newPlanSetupOf(t, app, "Export invoices as CSV.", "Stream rows instead of loading every invoice.")

			plan := app.postPlan(s.handoffID)
			if plan.Status != "complete" || plan.Error != "" {
				t.Fatalf("Status=%q Error=%q, want complete", plan.Status, plan.Error)
			}
			if plan.Markdown != providerPlanText || plan.Summary != providerPlanSummary {
				t.Fatalf("Markdown=%q Summary=%q, want the streamed text and complete_planning's summary", plan.Markdown, plan.Summary)
			}
			if c := plan.Coverage; !cmp.Equal(c.Covered, []string{"D1", "D2"}) || len(c.Uncovered) != 0 || c.Total != 2 || c.Text != "covers 2 of 2" {
				t.Fatalf("coverage %+v, want both decisions covered", c)
			}
			// Tool inputs are assembled from their pieces (the API's JSON is compact).
			want := []string{agent.ToolGetHandoffContext + " {}", agent.ToolCompletePlanning + ` {"summary":` + jsonString(providerPlanSummary) + `}`}
			if diff := cmp.Diff(want, plan.toolSteps()); diff != "" {
				t.Fatalf("tool steps (-want +got):\n%s", diff)
			}
			for _, st := range plan.Steps {
				if st.IsError {
					t.Fatalf("step %+v failed", st)
				}
			}
			if plan.Usage.InputTokens != 1400 || plan.Usage.OutputTokens != 162 {
				t.Fatalf("usage %+v, want the two replies' usage summed: 1400 in, 162 out", plan.Usage)
			}

			reqs := fake.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			// Only the three planning tools are offered, on every request.
			for i, body := range reqs {
				if diff := cmp.Diff([]string{agent.ToolGetHandoffContext, agent.ToolAddDecision, agent.ToolCompletePlanning}, pc.toolNames(body)); diff != "" {
					t.Fatalf("request %d tools (-want +got):\n%s", i+1, diff)
				}
			}
			if _, ok := pc.toolResult(reqs[0], pc.callID); ok {
				t.Fatalf("the first request already holds a tool result")
			}
			// The second request sends get_handoff_context's result back,
			// tied to the call: the frozen decisions with their labels.
			content, ok := pc.toolResult(reqs[1], pc.callID)
			if !ok {
				t.Fatalf("the second request has no result for %s: %v", pc.callID, reqs[1]["messages"])
			}
			var hc agent.HandoffContext
			if err := json.Unmarshal([]byte(content), &hc); err != nil {
				t.Fatalf("tool result %q is not the handoff context: %v", content, err)
			}
			var got []string
			for _, d := range hc.Decisions {
				got = append(got, d.Label+": "+d.Content)
			}
			if diff := cmp.Diff([]string{"D1: Export invoices as CSV.", "D2: Stream rows instead of loading every invoice."}, got); diff != "" {
				t.Fatalf("decisions in the tool result (-want +got):\n%s", diff)
			}
			if hc.SnapshotID != plan.SnapshotID {
				t.Fatalf("tool result of snapshot %q, want the plan's %q", hc.SnapshotID, plan.SnapshotID)
			}
		})
	}
}
