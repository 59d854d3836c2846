package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

// modelTurn is one scripted reply of a fakeModel.
type modelTurn struct {
	text  string
	calls []ToolCallPart
	err   error
	// block, when set, streams the text and then waits for ctx to end.
	block bool
}

// fakeModel is a scripted model: it answers the n-th call with turns[n], and
// with the last turn once they run out. It records every request.
type fakeModel struct {
	mu      sync.Mutex
	turns   []modelTurn
	reqs    []Request
	started chan struct{} // closed when a blocking turn has streamed its text
}

func (f *fakeModel) Name() string  { return "fake" }
func (f *fakeModel) Model() string { return "fake-1" }

func (f *fakeModel) Stream(ctx context.Context, req Request, emit func(Delta) error) (*Reply, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	t := f.turns[min(len(f.reqs), len(f.turns))-1]
	f.mu.Unlock()
	if t.err != nil {
		return nil, t.err
	}
	// Stream the text in two pieces, as a real model would in many.
	half := len(t.text) / 2
	for _, piece := range []string{t.text[:half], t.text[half:]} {
		if err := emit(Delta{Text: piece}); err != nil {
			return nil, err
		}
	}
	reply := &Reply{StopReason: StopEnd, Usage: Usage{InputTokens: 10, OutputTokens: 3}, Model: "fake-1"}
	if t.text != "" {
		reply.Parts = append(reply.Parts, TextPart{Text: t.text})
	}
	if t.block {
		close(f.started)
		<-ctx.Done()
		return reply, ctx.Err()
	}
	for _, c := range t.calls {
		reply.Parts = append(reply.Parts, c)
		reply.StopReason = StopToolUse
	}
	return reply, nil
}

// requests returns the requests the model was given.
func (f *fakeModel) requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// call makes a tool call part.
func call(id, name, input string) ToolCallPart {
	return ToolCallPart{ID: id, Name: name, Input: json.RawMessage(input)}
}

// resultsOf returns the tool results of the last message of req.
func resultsOf(req Request) []ToolResultPart {
	var out []ToolResultPart
	if len(req.Messages) == 0 {
		return nil
	}
	for _, p := range req.Messages[len(req.Messages)-1].Parts {
		if r, ok := p.(ToolResultPart); ok {
			out = append(out, r)
		}
	}
	return out
}

// echoTools are tools for loop tests: echo returns its input, fail always
// fails, boom panics and done ends the run.
func echoTools() []LoopTool {
	run := func(out ToolOutput, err error) ToolFunc {
		return func(context.Context, json.RawMessage) (ToolOutput, error) { return out, err }
	}
	return []LoopTool{
		{Tool: Tool{Name: "echo"}, Run: func(_ context.Context, in json.RawMessage) (ToolOutput, error) {
			return ToolOutput{Content: string(in), Description: "Echoed"}, nil
		}},
		{Tool: Tool{Name: "fail"}, Run: run(ToolOutput{Description: "Could not fail well"}, errors.New("it failed, try echo"))},
		{Tool: Tool{Name: "boom"}, Run: func(context.Context, json.RawMessage) (ToolOutput, error) { panic("boom") }},
		{Tool: Tool{Name: "done"}, Run: run(ToolOutput{Content: "ok", Description: "Finished", Done: true}, nil)},
	}
}

// recorder keeps what a loop reports.
type recorder struct {
	steps  []Step
	deltas strings.Builder
}

func (r *recorder) loop(p Provider) *Loop {
	return &Loop{
		Provider: p,
		System:   "system",
		Tools:    echoTools(),
		OnStep:   func(s Step) error { r.steps = append(r.steps, s); return nil },
		OnDelta:  func(d Delta) error { r.deltas.WriteString(d.Text); return nil },
	}
}

func TestLoopCompletes(t *testing.T) {
	m := &fakeModel{turns: []modelTurn{
		{text: "Reading.", calls: []ToolCallPart{call("c1", "echo", `{"a":1}`)}},
		{text: "# Plan\n\nDo it.", calls: []ToolCallPart{call("c2", "echo", `{}`), call("c3", "done", `{}`)}},
		{text: "never asked"},
	}}
	var rec recorder
	res := rec.loop(m).Run(context.Background(), []Message{Text(RoleUser, "go")})

	if res.Status != LoopComplete || res.Err != nil {
		t.Fatalf("Status=%q Err=%v, want complete", res.Status, res.Err)
	}
	if res.Steps != 2 || len(m.requests()) != 2 {
		t.Fatalf("Steps=%d, %d model calls, want 2", res.Steps, len(m.requests()))
	}
	if want := "Reading.\n\n# Plan\n\nDo it."; res.Text != want {
		t.Fatalf("Text=%q, want %q", res.Text, want)
	}
	if got := rec.deltas.String(); got != res.Text {
		t.Fatalf("deltas add up to %q, want Text %q", got, res.Text)
	}
	if res.Usage.InputTokens != 20 || res.Usage.OutputTokens != 6 || res.Model != "fake-1" {
		t.Fatalf("Usage=%+v Model=%q, want summed usage of 2 calls", res.Usage, res.Model)
	}

	type brief struct {
		N, Turn int
		Kind    StepKind
		Tool    string
		Desc    string
	}
	var got []brief
	for _, s := range rec.steps {
		got = append(got, brief{s.N, s.Turn, s.Kind, s.Tool, s.Description})
	}
	want := []brief{
		{1, 1, StepModelCall, "", "Step 1: wrote 1 word and asked for echo"},
		{2, 1, StepToolCall, "echo", "Echoed"},
		{3, 2, StepModelCall, "", "Step 2: wrote 4 words and asked for echo, done"},
		{4, 2, StepToolCall, "echo", "Echoed"},
		{5, 2, StepToolCall, "done", "Finished"},
	}
	if len(got) != len(want) {
		t.Fatalf("steps=%+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("step %d=%+v, want %+v", i, got[i], want[i])
		}
	}
	if s := rec.steps[1]; string(s.Input) != `{"a":1}` || s.Result != `{"a":1}` || s.CallID != "c1" {
		t.Fatalf("tool step=%+v, want its input, result and call ID", s)
	}
	// The second request carries the first reply and its results.
	r2 := m.requests()[1]
	if res := resultsOf(r2); len(res) != 1 || res[0].CallID != "c1" || res[0].IsError {
		t.Fatalf("results sent back=%+v, want c1's", res)
	}
	if len(r2.Tools) != 4 || r2.System != "system" {
		t.Fatalf("request Tools=%d System=%q, want the loop's", len(r2.Tools), r2.System)
	}
}

func TestLoopToolErrorsGoBackToTheModel(t *testing.T) {
	tests := []struct {
		name      string
		call      ToolCallPart
		wantText  string
		wantDescr string
	}{
		{"tool error", call("c1", "fail", `{}`), "it failed, try echo", "Could not fail well"},
		{"unknown tool", call("c1", "delete_everything", `{}`), `There is no tool named "delete_everything". The only tools are: echo, fail, boom, done.`, "Asked for a tool that does not exist (delete_everything)"},
		{"panic", call("c1", "boom", `{}`), "the tool failed unexpectedly", "The boom tool failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{turns: []modelTurn{
				{calls: []ToolCallPart{tt.call}},
				{calls: []ToolCallPart{call("c2", "done", `{}`)}},
			}}
			var rec recorder
			res := rec.loop(m).Run(context.Background(), []Message{Text(RoleUser, "go")})
			if res.Status != LoopComplete {
				t.Fatalf("Status=%q Err=%v, want the run to go on and complete", res.Status, res.Err)
			}
			got := resultsOf(m.requests()[1])
			if len(got) != 1 || !got[0].IsError || got[0].CallID != "c1" || !strings.Contains(got[0].Content, tt.wantText) {
				t.Fatalf("result sent back=%+v, want an error result containing %q", got, tt.wantText)
			}
			s := rec.steps[1]
			if !s.IsError || s.Description != tt.wantDescr || s.Tool != tt.call.Name {
				t.Fatalf("step=%+v, want an error step described %q", s, tt.wantDescr)
			}
		})
	}
}

func TestLoopStopsAtMaxSteps(t *testing.T) {
	m := &fakeModel{turns: []modelTurn{{text: "more", calls: []ToolCallPart{call("c", "echo", `{}`)}}}}
	var rec recorder
	res := rec.loop(m).Run(context.Background(), []Message{Text(RoleUser, "go")})
	if res.Status != LoopStopped || res.Err != nil {
		t.Fatalf("Status=%q Err=%v, want stopped", res.Status, res.Err)
	}
	if res.Steps != DefaultMaxSteps || len(m.requests()) != DefaultMaxSteps {
		t.Fatalf("Steps=%d, %d model calls, want %d", res.Steps, len(m.requests()), DefaultMaxSteps)
	}
	if n := strings.Count(res.Text, "more"); n != DefaultMaxSteps {
		t.Fatalf("Text has %d pieces, want %d", n, DefaultMaxSteps)
	}
}

func TestLoopNudgesAReplyWithoutTools(t *testing.T) {
	m := &fakeModel{turns: []modelTurn{
		{text: "Plan."},
		{calls: []ToolCallPart{call("c", "done", `{}`)}},
	}}
	l := (&recorder{}).loop(m)
	l.Nudge = "Call done."
	res := l.Run(context.Background(), []Message{Text(RoleUser, "go")})
	if res.Status != LoopComplete || res.Steps != 2 {
		t.Fatalf("Status=%q Steps=%d, want complete after 2", res.Status, res.Steps)
	}
	msgs := m.requests()[1].Messages
	if last := msgs[len(msgs)-1]; last.Role != RoleUser || last.Parts[0].(TextPart).Text != "Call done." {
		t.Fatalf("last message=%+v, want the nudge", last)
	}

	t.Run("without a nudge such a reply ends the run", func(t *testing.T) {
		m := &fakeModel{turns: []modelTurn{{text: "Plan."}}}
		res := (&recorder{}).loop(m).Run(context.Background(), nil)
		if res.Status != LoopComplete || res.Steps != 1 || res.Text != "Plan." {
			t.Fatalf("Status=%q Steps=%d Text=%q, want complete after 1", res.Status, res.Steps, res.Text)
		}
	})
}

func TestLoopLimitsCallsPerReply(t *testing.T) {
	var calls []ToolCallPart
	for range maxCallsPerReply + 2 {
		calls = append(calls, call("c", "echo", `{}`))
	}
	m := &fakeModel{turns: []modelTurn{{calls: calls}, {calls: []ToolCallPart{call("d", "done", `{}`)}}}}
	res := (&recorder{}).loop(m).Run(context.Background(), nil)
	if res.Status != LoopComplete {
		t.Fatalf("Status=%q, want complete", res.Status)
	}
	got := resultsOf(m.requests()[1])
	if len(got) != len(calls) {
		t.Fatalf("%d results, want one per call (%d)", len(got), len(calls))
	}
	for i, r := range got {
		if want := i >= maxCallsPerReply; r.IsError != want {
			t.Fatalf("result %d IsError=%v, want %v", i, r.IsError, want)
		}
	}
}

func TestLoopProviderError(t *testing.T) {
	perr := &Error{Provider: "fake", Kind: ErrRateLimited, Message: "The model is rate limited. Wait a minute and try again."}
	m := &fakeModel{turns: []modelTurn{
		{text: "Part one.", calls: []ToolCallPart{call("c", "echo", `{}`)}},
		{err: perr},
	}}
	var rec recorder
	res := rec.loop(m).Run(context.Background(), nil)
	if res.Status != LoopFailed || !errors.Is(res.Err, perr) {
		t.Fatalf("Status=%q Err=%v, want failed with the provider's error", res.Status, res.Err)
	}
	if got := ErrorMessage(res.Err); got != perr.Message {
		t.Fatalf("ErrorMessage=%q, want %q", got, perr.Message)
	}
	if res.Text != "Part one." {
		t.Fatalf("Text=%q, want what was written before", res.Text)
	}
	last := rec.steps[len(rec.steps)-1]
	if last.Kind != StepModelCall || !last.IsError || last.Result != perr.Message {
		t.Fatalf("last step=%+v, want the failed model call", last)
	}
}

func TestLoopCancel(t *testing.T) {
	m := &fakeModel{started: make(chan struct{}), turns: []modelTurn{{text: "Half a plan", block: true}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-m.started
		cancel()
	}()
	var rec recorder
	res := rec.loop(m).Run(ctx, nil)
	if res.Status != LoopCancelled || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("Status=%q Err=%v, want cancelled", res.Status, res.Err)
	}
	if res.Text != "Half a plan" || rec.deltas.String() != res.Text {
		t.Fatalf("Text=%q deltas=%q, want what was streamed", res.Text, rec.deltas.String())
	}

	t.Run("before the first call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		m := &fakeModel{turns: []modelTurn{{text: "x"}}}
		if res := (&recorder{}).loop(m).Run(ctx, nil); res.Status != LoopCancelled || len(m.requests()) != 0 {
			t.Fatalf("Status=%q after %d calls, want cancelled before any", res.Status, len(m.requests()))
		}
	})
}

func TestLoopHookError(t *testing.T) {
	m := &fakeModel{turns: []modelTurn{{text: "x", calls: []ToolCallPart{call("c", "echo", `{}`)}}}}
	boom := errors.New("disk full")
	l := (&recorder{}).loop(m)
	l.OnStep = func(Step) error { return boom }
	res := l.Run(context.Background(), nil)
	var he *HookError
	if res.Status != LoopFailed || !errors.As(res.Err, &he) || !errors.Is(res.Err, boom) || he.Hook != "OnStep" {
		t.Fatalf("Status=%q Err=%v, want failed with a HookError", res.Status, res.Err)
	}
	if len(m.requests()) != 1 {
		t.Fatalf("%d model calls, want the run to end at the first", len(m.requests()))
	}
}

func TestLoopReplaysInputThatIsNotJSONAsAnEmptyObject(t *testing.T) {
	m := &fakeModel{turns: []modelTurn{
		{calls: []ToolCallPart{call("c1", "echo", `{"cut off`)}},
		{calls: []ToolCallPart{call("c2", "done", `{}`)}},
	}}
	var rec recorder
	res := rec.loop(m).Run(context.Background(), nil)
	if res.Status != LoopComplete {
		t.Fatalf("Status=%q, want complete", res.Status)
	}
	msgs := m.requests()[1].Messages
	replayed := msgs[len(msgs)-2].Parts[0].(ToolCallPart)
	if string(replayed.Input) != "{}" {
		t.Fatalf("replayed input=%s, want {}", replayed.Input)
	}
	if got := string(rec.steps[1].Input); got != `{"cut off` {
		t.Fatalf("step input=%s, want what the model sent", got)
	}
}
