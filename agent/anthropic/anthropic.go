// Package anthropic adapts Anthropic's Messages API to agent.Provider through
// the official SDK (github.com/anthropics/anthropic-sdk-go). It streams text as
// it arrives, assembles tool calls with the SDK's accumulator, and turns every
// failure into an *agent.Error whose message says what to do.
package anthropic

import (
	"bytes"
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/baton-dev/baton/agent"
)

// Name is the provider's configuration name (BATON_PROVIDER=anthropic).
const Name = "anthropic"

// DefaultModel is the model called when Config.Model is empty.
const DefaultModel = "claude-sonnet-4-6"

// DefaultMaxTokens caps a reply when Request.MaxTokens is zero; the Messages
// API requires a cap on every call.
const DefaultMaxTokens = 8192

// DefaultMaxRetries is how many times a retryable failure is retried when
// Config.MaxRetries is zero.
const DefaultMaxRetries = 2

// Config configures a Provider. New reads no environment: the caller passes
// what it read from ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and BATON_MODEL.
type Config struct {
	// APIKey authenticates every call (ANTHROPIC_API_KEY). Required.
	APIKey string
	// BaseURL replaces https://api.anthropic.com (ANTHROPIC_BASE_URL), for a
	// proxy or a test server.
	BaseURL string
	// Model is the model to call (BATON_MODEL); DefaultModel when empty.
	Model string
	// MaxRetries is how many times a call that failed before its reply began
	// (429, 5xx, 529 overloaded, connection errors) is retried with backoff.
	// Zero means DefaultMaxRetries; a negative number turns retries off.
	MaxRetries int
	// HTTPClient sends the requests. When nil, a client with its own
	// connection pool and a response-header timeout is used.
	HTTPClient *http.Client
	// Timeout bounds each attempt, the stream included. An attempt that runs
	// out of time before the reply begins is retried like a connection error.
	// Zero means no bound beyond the caller's context.
	Timeout time.Duration
	// Logger receives one line per model call. Nil discards them.
	Logger *slog.Logger
}

// Provider calls Anthropic's Messages API. It implements agent.Provider and is
// safe for concurrent use.
type Provider struct {
	client  sdk.Client
	model   string
	baseURL string // as configured; empty for Anthropic's own endpoint
	log     *slog.Logger
}

var _ agent.Provider = (*Provider)(nil)

// New returns a Provider for cfg. A missing API key or a base URL that is not
// an http(s) URL is an *agent.Error whose message says what to set.
func New(cfg Config) (*Provider, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, &agent.Error{
			Provider: Name,
			Kind:     agent.ErrAuth,
			Message:  "ANTHROPIC_API_KEY is not set. Set it, or run with BATON_PROVIDER=offline.",
		}
	}
	if cfg.BaseURL != "" {
		if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &agent.Error{
				Provider: Name,
				Kind:     agent.ErrBadRequest,
				Message:  "ANTHROPIC_BASE_URL " + quote(agent.RedactURL(cfg.BaseURL)) + " is not an http(s) URL. Fix it or unset it to use https://api.anthropic.com.",
				Err:      err,
			}
		}
	}

	// WithoutEnvironmentDefaults keeps the SDK from reading ANTHROPIC_API_KEY,
	// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, profiles or custom headers on
	// its own: what Baton was configured with is what is sent, nothing else.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(agent.HTTPClientOrDefault(cfg.HTTPClient)),
		option.WithMaxRetries(agent.MaxRetries(cfg.MaxRetries, DefaultMaxRetries)),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	return &Provider{
		client:  sdk.NewClient(opts...),
		model:   cmp.Or(cfg.Model, DefaultModel),
		baseURL: agent.RedactURL(cfg.BaseURL),
		log:     agent.LoggerOrDiscard(cfg.Logger),
	}, nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return Name }

// Model returns the model the provider calls.
func (p *Provider) Model() string { return p.model }

// Stream sends req to the Messages API and streams the reply. Text deltas go
// to emit as they arrive; tool call input is assembled and returned whole.
// With req.Schema set, the model is forced to call a tool named after the
// schema, and the reply is that tool's input as a single text part (its JSON
// is streamed through emit too).
//
// Retries happen only before the reply begins: once a stream is open the SDK
// hands it over and never sends the request again, so text already emitted is
// never repeated. Cancelling ctx aborts the request at once and returns an
// error wrapping ctx.Err(). Other failures are *agent.Error; an error from
// emit is returned as it is.
func (p *Provider) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	start := time.Now()
	params, schemaTool, err := p.params(req)
	if err != nil {
		return nil, p.failed(ctx, start, err)
	}

	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		msg        sdk.Message
		stopped    bool
		brokenTool string // a tool call whose input is not JSON
	)
	for stream.Next() {
		event := stream.Current()
		// The accumulator quietly replaces tool input that is not JSON with
		// {} when its block stops; catch it before that happens.
		switch event.Type {
		case "content_block_stop":
			if name, ok := brokenToolInput(&msg, event.Index); ok && brokenTool == "" {
				brokenTool = name
			}
		case "message_stop":
			for i := range msg.Content {
				if name, ok := brokenToolInput(&msg, int64(i)); ok && brokenTool == "" {
					brokenTool = name
				}
			}
		}
		if err := msg.Accumulate(event); err != nil {
			return nil, p.failed(ctx, start, malformed("the stream's events are out of order", err))
		}
		switch event.Type {
		case "content_block_delta":
			if text := deltaText(&msg, event, schemaTool); text != "" {
				if err := emit(agent.Delta{Text: text}); err != nil {
					return nil, agent.LogAborted(ctx, p.log, Name, p.model, start, err)
				}
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.failed(ctx, start, err)
	}
	if !stopped {
		return nil, p.failed(ctx, start, malformed("the stream ended before message_stop", nil))
	}
	if brokenTool != "" {
		what := "the input of tool call " + quote(brokenTool) + " is not JSON"
		if msg.StopReason == sdk.StopReasonMaxTokens {
			what = "the reply hit max_tokens in the middle of tool call " + quote(brokenTool) + "; raise the request's MaxTokens"
		}
		return nil, p.failed(ctx, start, malformed(what, nil))
	}

	reply, err := p.reply(&msg, schemaTool)
	if err != nil {
		return nil, p.failed(ctx, start, err)
	}
	reply.Duration = time.Since(start)
	agent.LogReply(ctx, p.log, Name, reply)
	return reply, nil
}

// deltaText returns what a content_block_delta event adds to the visible
// reply: text, or with a schema the JSON of the schema tool's input.
func deltaText(msg *sdk.Message, event sdk.MessageStreamEventUnion, schemaTool string) string {
	switch event.Delta.Type {
	case "text_delta":
		if schemaTool == "" {
			return event.Delta.Text
		}
	case "input_json_delta":
		if schemaTool != "" && event.Index >= 0 && event.Index < int64(len(msg.Content)) &&
			msg.Content[event.Index].Name == schemaTool {
			return event.Delta.PartialJSON
		}
	}
	return ""
}

// brokenToolInput reports the name of the tool_use block at index if its
// streamed input is not JSON.
func brokenToolInput(msg *sdk.Message, index int64) (string, bool) {
	if index < 0 || index >= int64(len(msg.Content)) {
		return "", false // Accumulate reports the bad index
	}
	block := msg.Content[index]
	if block.Type == "tool_use" && len(block.Input) > 0 && !jsonValid(block.Input) {
		return block.Name, true
	}
	return "", false
}

// reply turns an accumulated message into an agent.Reply.
func (p *Provider) reply(msg *sdk.Message, schemaTool string) (*agent.Reply, error) {
	reply := &agent.Reply{
		Model:      msg.Model,
		StopReason: stopReason(msg.StopReason),
		Usage: agent.Usage{
			// input_tokens leaves out what was read from or written to the
			// prompt cache; all of it was sent, so all of it is counted.
			InputTokens:  msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens,
			OutputTokens: msg.Usage.OutputTokens,
			ResponseID:   msg.ID,
		},
	}
	if reply.Model == "" {
		reply.Model = p.model
	}
	found := false
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			if schemaTool == "" && block.Text != "" {
				reply.Parts = append(reply.Parts, agent.TextPart{Text: block.Text})
			}
		case "tool_use":
			input := bytes.Clone(block.Input)
			if len(input) == 0 {
				input = []byte("{}")
			}
			if schemaTool != "" {
				if block.Name == schemaTool && !found {
					reply.Parts = append(reply.Parts, agent.TextPart{Text: string(input)})
					found = true
				}
				continue
			}
			reply.Parts = append(reply.Parts, agent.ToolCallPart{ID: block.ID, Name: block.Name, Input: input})
		}
	}
	if schemaTool != "" {
		if !found {
			if reply.StopReason == agent.StopMaxTokens {
				return nil, malformed("the reply hit max_tokens before the structured output was written; raise the request's MaxTokens", nil)
			}
			return nil, malformed("the reply has no structured output (no call of tool "+quote(schemaTool)+")", nil)
		}
		// The forced tool call is the answer, not a request to run a tool.
		if reply.StopReason == agent.StopToolUse {
			reply.StopReason = agent.StopEnd
		}
	}
	return reply, nil
}

// stopReason normalises Anthropic's stop reasons.
func stopReason(r sdk.StopReason) agent.StopReason {
	switch r {
	case sdk.StopReasonToolUse:
		return agent.StopToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return agent.StopMaxTokens
	default: // end_turn, stop_sequence, pause_turn, refusal
		return agent.StopEnd
	}
}

// failed maps err, logs the failed call once and returns what Stream returns.
func (p *Provider) failed(ctx context.Context, start time.Time, err error) error {
	return agent.LogFailure(ctx, p.log, Name, p.model, start, p.mapError(ctx, err))
}
