package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultMaxSteps caps a tool loop whose MaxSteps is not set. A step is one
// model call.
const DefaultMaxSteps = 20

// maxCallsPerReply is how many tool calls of one reply are run; the rest get
// an error result, so that one reply cannot flood the store.
const maxCallsPerReply = 16

// LoopStatus says how a tool loop ended.
type LoopStatus string

// Loop statuses.
const (
	LoopComplete  LoopStatus = "complete"  // a tool said it was done
	LoopStopped   LoopStatus = "stopped"   // MaxSteps model calls ran first
	LoopFailed    LoopStatus = "failed"    // a model call or a hook failed
	LoopCancelled LoopStatus = "cancelled" // ctx was cancelled
)

// StepKind says what a step of a loop was.
type StepKind string

// Step kinds; they match store.PlanStepKind.
const (
	StepModelCall StepKind = "model_call"
	StepToolCall  StepKind = "tool_call"
)

// Step is something a loop did: a model call, or a tool call the model asked
// for. It is reported through Loop.OnStep as soon as it is done.
type Step struct {
	N           int // 1, 2, … over all steps of the run, in order
	Turn        int // the model call it belongs to, 1 to MaxSteps
	Kind        StepKind
	Description string // in plain words: "Read the handoff context"

	// Model calls.
	Text  string // what the model wrote in this call
	Usage Usage

	// Tool calls.
	Tool   string
	CallID string
	Input  json.RawMessage // as the model sent it

	// Result is what went back to the model for a tool call, or the error
	// message of a model call that failed; IsError marks either failure.
	Result  string
	IsError bool

	Duration time.Duration
}

// ToolOutput is what a tool gives back.
type ToolOutput struct {
	Content     string // sent back to the model
	Description string // what happened, in plain words, for people
	Done        bool   // the run ends after this reply's tool calls
}

// ToolFunc runs one tool call with the input the model sent. A returned
// error goes back to the model as an error result, and the loop goes on; its
// message is written for the model. The output's Description, if set, still
// describes the step.
type ToolFunc func(ctx context.Context, input json.RawMessage) (ToolOutput, error)

// LoopTool is a tool a loop offers: its definition, sent to the model, and
// the function that runs it.
type LoopTool struct {
	Tool
	Run ToolFunc
}

// Loop calls a model, runs the tools it asks for and sends their results
// back, until a tool reports Done or MaxSteps model calls have run. Only the
// tools in Tools exist: a call to any other name gets an error result.
type Loop struct {
	Provider  Provider
	System    string
	Tools     []LoopTool
	MaxSteps  int // DefaultMaxSteps when zero
	MaxTokens int // per model call; 4096 when zero

	// Nudge, when set, is sent as a user message after a reply that asks
	// for no tool, and the loop goes on. When empty, such a reply ends the
	// run as complete.
	Nudge string

	// OnStep is called after each model call and each tool call. OnDelta is
	// called with the text the model writes as it streams, with "\n\n" between
	// the text of successive model calls, so that the deltas add up to
	// LoopResult.Text. Both are called on Run's goroutine; an error from
	// either ends the run as failed.
	OnStep  func(Step) error
	OnDelta func(Delta) error
}

// LoopResult is how a run of a loop ended.
type LoopResult struct {
	Status LoopStatus
	// Text is the text the model wrote over the whole run, each model call's
	// text separated by a blank line; it is also what OnDelta was given.
	Text     string
	Steps    int   // model calls made
	Usage    Usage // summed over model calls
	Model    string
	Err      error     // why the run failed (a *HookError if a hook failed) or was cancelled
	Messages []Message // the conversation, ending with the last reply or results
}

// Run runs the loop from msgs, the opening messages. It never returns an
// error of its own: every ending, failures included, is a LoopResult status,
// and a tool error or panic becomes an error result for the model.
func (l *Loop) Run(ctx context.Context, msgs []Message) *LoopResult {
	r := &loopRun{Loop: l, res: &LoopResult{Messages: append([]Message(nil), msgs...)}}
	r.run(ctx)
	r.res.Text = r.text.String()
	return r.res
}

// loopRun is the state of one Run.
type loopRun struct {
	*Loop
	res     *LoopResult
	text    strings.Builder
	n       int   // steps reported
	hookErr error // the first error a hook returned
}

func (r *loopRun) run(ctx context.Context) {
	maxSteps := r.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 4096
	}
	tools := make([]Tool, len(r.Tools))
	byName := make(map[string]ToolFunc, len(r.Tools))
	for i, t := range r.Tools {
		tools[i] = t.Tool
		byName[t.Name] = t.Run
	}

	for turn := 1; turn <= maxSteps; turn++ {
		if err := ctx.Err(); err != nil {
			r.end(LoopCancelled, err)
			return
		}
		reply, err := r.call(ctx, turn, Request{System: r.System, Messages: r.res.Messages, Tools: tools, MaxTokens: maxTokens})
		switch {
		case r.hookErr != nil:
			r.end(LoopFailed, r.hookErr)
			return
		case ctx.Err() != nil:
			r.end(LoopCancelled, ctx.Err())
			return
		case err != nil:
			r.end(LoopFailed, err)
			return
		}
		r.res.Messages = append(r.res.Messages, Message{Role: RoleAssistant, Parts: replayable(reply.Parts)})

		calls := reply.ToolCalls()
		if len(calls) == 0 {
			if r.Nudge == "" {
				r.end(LoopComplete, nil)
				return
			}
			nudge := r.Nudge
			if reply.StopReason == StopMaxTokens {
				nudge = "Your reply was cut off at the output limit. Continue exactly where it stopped, without repeating anything. " + nudge
			}
			r.res.Messages = append(r.res.Messages, Text(RoleUser, nudge))
			continue
		}
		results := make([]Part, 0, len(calls))
		done := false
		for i, c := range calls {
			if err := ctx.Err(); err != nil {
				r.end(LoopCancelled, err)
				return
			}
			res, out := r.runTool(ctx, byName, c, i)
			done = done || out.Done
			results = append(results, res)
			if err := r.report(Step{Turn: turn, Kind: StepToolCall, Tool: c.Name, CallID: c.ID, Input: c.Input,
				Result: res.Content, IsError: res.IsError, Description: out.Description, Duration: out.duration}); err != nil {
				r.end(LoopFailed, err)
				return
			}
		}
		r.res.Messages = append(r.res.Messages, Message{Role: RoleUser, Parts: results})
		if done {
			r.end(LoopComplete, nil)
			return
		}
	}
	r.end(LoopStopped, nil)
}

// replayable returns parts fit to be sent back as history: a tool call whose
// input is not JSON (a cut-off reply, say) would make providers refuse the
// next request, so its input becomes {}. Its error result still says why.
func replayable(parts []Part) []Part {
	out := make([]Part, len(parts))
	for i, p := range parts {
		if c, ok := p.(ToolCallPart); ok && len(bytes.TrimSpace(c.Input)) > 0 && !json.Valid(c.Input) {
			c.Input = json.RawMessage("{}")
			p = c
		}
		out[i] = p
	}
	return out
}

// end records how the run ended.
func (r *loopRun) end(status LoopStatus, err error) {
	r.res.Status, r.res.Err = status, err
}

// call makes model call turn, streaming its text through OnDelta, and
// reports it as a step.
func (r *loopRun) call(ctx context.Context, turn int, req Request) (*Reply, error) {
	start := time.Now()
	var streamed strings.Builder
	emit := func(d Delta) error {
		if d.Text == "" {
			return nil
		}
		if streamed.Len() == 0 {
			if err := r.forward(separator(r.text.String())); err != nil {
				return err
			}
		}
		streamed.WriteString(d.Text)
		return r.forward(d.Text)
	}
	reply, err := r.Provider.Stream(ctx, req, emit)
	r.res.Steps = turn
	if reply != nil {
		r.res.Usage.InputTokens += reply.Usage.InputTokens
		r.res.Usage.OutputTokens += reply.Usage.OutputTokens
		r.res.Usage.ResponseID = reply.Usage.ResponseID
		if reply.Model != "" {
			r.res.Model = reply.Model
		}
		// A provider that does not stream all of its text still has it in the reply.
		if full := reply.Text(); err == nil && r.hookErr == nil && strings.HasPrefix(full, streamed.String()) {
			if rest := full[streamed.Len():]; rest != "" {
				if herr := emit(Delta{Text: rest}); herr != nil {
					return reply, herr
				}
			}
		}
	}
	if r.res.Model == "" {
		r.res.Model = r.Provider.Model()
	}
	if err != nil {
		if r.hookErr == nil && ctx.Err() == nil {
			msg := ErrorMessage(err)
			if herr := r.report(Step{Turn: turn, Kind: StepModelCall, Text: streamed.String(), IsError: true, Result: msg,
				Description: fmt.Sprintf("Step %d: the model call failed", turn), Duration: time.Since(start)}); herr != nil {
				return reply, herr
			}
		}
		return reply, err
	}
	if reply == nil {
		return nil, fmt.Errorf("%s returned no reply", r.Provider.Name())
	}
	s := Step{Turn: turn, Kind: StepModelCall, Text: streamed.String(), Usage: reply.Usage, Duration: time.Since(start)}
	s.Description = describeCall(turn, s.Text, reply.ToolCalls())
	return reply, r.report(s)
}

// forward passes text to OnDelta and keeps it.
func (r *loopRun) forward(text string) error {
	if text == "" {
		return nil
	}
	if r.OnDelta != nil {
		if err := r.OnDelta(Delta{Text: text}); err != nil {
			r.hookErr = &HookError{Hook: "OnDelta", Err: err}
			return r.hookErr
		}
	}
	r.text.WriteString(text)
	return nil
}

// separator is what goes between text already written and the next model
// call's text: enough newlines for a blank line.
func separator(before string) string {
	switch {
	case before == "", strings.HasSuffix(before, "\n\n"):
		return ""
	case strings.HasSuffix(before, "\n"):
		return "\n"
	}
	return "\n\n"
}

// report numbers a step and passes it to OnStep.
func (r *loopRun) report(s Step) error {
	r.n++
	s.N = r.n
	if r.OnStep == nil {
		return nil
	}
	if err := r.OnStep(s); err != nil {
		r.hookErr = &HookError{Hook: "OnStep", Err: err}
		return r.hookErr
	}
	return nil
}

// HookError is LoopResult.Err when OnStep or OnDelta failed, as opposed to
// a model call.
type HookError struct {
	Hook string // OnStep or OnDelta
	Err  error
}

func (e *HookError) Error() string { return e.Hook + ": " + e.Err.Error() }

func (e *HookError) Unwrap() error { return e.Err }

// toolOutcome is a tool output with how long the tool took.
type toolOutcome struct {
	ToolOutput
	duration time.Duration
}

// runTool runs the i-th tool call of a reply. Whatever goes wrong becomes an
// error result for the model.
func (r *loopRun) runTool(ctx context.Context, byName map[string]ToolFunc, c ToolCallPart, i int) (ToolResultPart, toolOutcome) {
	start := time.Now()
	fail := func(desc, format string, args ...any) (ToolResultPart, toolOutcome) {
		return ToolResultPart{CallID: c.ID, Content: fmt.Sprintf(format, args...), IsError: true},
			toolOutcome{ToolOutput: ToolOutput{Description: desc}, duration: time.Since(start)}
	}
	if i >= maxCallsPerReply {
		return fail("Skipped a tool call: too many in one reply",
			"Not run: at most %d tool calls are run per reply. Call it again in your next reply if you still need it.", maxCallsPerReply)
	}
	run, ok := byName[c.Name]
	if !ok {
		return fail(fmt.Sprintf("Asked for a tool that does not exist (%s)", clip(c.Name, 60)),
			"There is no tool named %q. The only tools are: %s.", clip(c.Name, 60), r.toolNames())
	}
	out, err := safeRun(ctx, run, c.Input)
	if err != nil {
		desc := out.Description
		if desc == "" {
			desc = fmt.Sprintf("The %s tool failed", c.Name)
		}
		return fail(desc, "%s", err.Error())
	}
	if out.Description == "" {
		out.Description = "Ran " + c.Name
	}
	return ToolResultPart{CallID: c.ID, Content: out.Content},
		toolOutcome{ToolOutput: out, duration: time.Since(start)}
}

// toolNames lists the loop's tool names.
func (r *loopRun) toolNames() string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// safeRun runs a tool, turning a panic into an error.
func safeRun(ctx context.Context, run ToolFunc, input json.RawMessage) (out ToolOutput, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = ToolOutput{}, errors.New("the tool failed unexpectedly; try something else")
		}
	}()
	return run(ctx, input)
}

// ErrorMessage is what a person is told about err: an *Error's Message,
// written for people, when err is or wraps one, else err's text.
func ErrorMessage(err error) string {
	if e, ok := AsError(err); ok && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// describeCall says in plain words what model call turn did.
func describeCall(turn int, text string, calls []ToolCallPart) string {
	var did []string
	if n := len(strings.Fields(text)); n > 0 {
		unit := "words"
		if n == 1 {
			unit = "word"
		}
		did = append(did, fmt.Sprintf("wrote %d %s", n, unit))
	}
	if len(calls) > 0 {
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = clip(c.Name, 60)
		}
		did = append(did, "asked for "+strings.Join(names, ", "))
	}
	if len(did) == 0 {
		did = append(did, "wrote nothing and asked for no tool")
	}
	return fmt.Sprintf("Step %d: %s", turn, strings.Join(did, " and "))
}
