// Package openai adapts OpenAI's Chat Completions API to agent.Provider
// through the official SDK (github.com/openai/openai-go/v3). Through a base
// URL it also serves OpenAI-compatible servers: Ollama, vLLM, llama.cpp and
// LM Studio. It streams text as it arrives, assembles tool calls with the
// SDK's ChatCompletionAccumulator, and turns every failure into an
// *agent.Error whose message says what to do.
package openai

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/baton-dev/baton/agent"
)

// Name is the provider's configuration name (BATON_PROVIDER=openai).
const Name = "openai"

// DefaultModel is the model called when Config.Model is empty.
const DefaultModel = "gpt-4.1-mini"

// DefaultBaseURL is OpenAI's own endpoint, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultMaxRetries is how many times a retryable failure is retried when
// Config.MaxRetries is zero.
const DefaultMaxRetries = 2

// Config configures a Provider. New reads no environment: the caller passes
// what it read from OPENAI_API_KEY, OPENAI_BASE_URL and BATON_MODEL.
type Config struct {
	// APIKey authenticates every call (OPENAI_API_KEY). Required for OpenAI
	// itself; may be empty with a BaseURL, since local servers such as
	// Ollama need none.
	APIKey string
	// BaseURL points at an OpenAI-compatible server (OPENAI_BASE_URL), e.g.
	// http://localhost:11434/v1 for Ollama. Empty means DefaultBaseURL.
	BaseURL string
	// Model is the model to call (BATON_MODEL); DefaultModel when empty.
	Model string
	// MaxRetries is how many times a call that failed before its reply began
	// (429, 5xx, connection errors) is retried with backoff. Zero means
	// DefaultMaxRetries; a negative number turns retries off.
	MaxRetries int
	// HTTPClient sends the requests. When nil, a client with its own
	// connection pool and a response-header timeout is used.
	HTTPClient *http.Client
	// Timeout bounds each attempt, the stream included. The SDK does not
	// retry an attempt that ran out of time. Zero means no bound beyond the
	// caller's context.
	Timeout time.Duration
	// Logger receives one line per model call. Nil discards them.
	Logger *slog.Logger
}

// Provider calls the Chat Completions API. It implements agent.Provider and is
// safe for concurrent use.
type Provider struct {
	chat     sdk.ChatCompletionService
	model    string
	baseURL  string // as configured; empty for OpenAI's own endpoint
	official bool   // calls go to api.openai.com
	log      *slog.Logger
}

var _ agent.Provider = (*Provider)(nil)

// New returns a Provider for cfg. A missing API key (without a base URL) or a
// base URL that is not an http(s) URL is an *agent.Error whose message says
// what to set.
func New(cfg Config) (*Provider, error) {
	base := DefaultBaseURL
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &agent.Error{
				Provider: Name,
				Kind:     agent.ErrBadRequest,
				Message:  "OPENAI_BASE_URL " + strconv.Quote(agent.RedactURL(cfg.BaseURL)) + " is not an http(s) URL. Fix it (for Ollama: http://localhost:11434/v1) or unset it to use OpenAI.",
				Err:      err,
			}
		}
		base = cfg.BaseURL
	}
	official := isOpenAI(base)
	if strings.TrimSpace(cfg.APIKey) == "" && official {
		return nil, &agent.Error{
			Provider: Name,
			Kind:     agent.ErrAuth,
			Message:  "OPENAI_API_KEY is not set. Set it, or run with BATON_PROVIDER=offline.",
		}
	}

	// The service is built without openai.NewClient on purpose: NewClient
	// starts from DefaultClientOptions, which read OPENAI_API_KEY,
	// OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID and
	// OPENAI_CUSTOM_HEADERS behind the caller's back; with an empty key for
	// Ollama, an OpenAI key from the environment would be sent to it. Here
	// only what Baton was configured with is sent.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(agent.HTTPClientOrDefault(cfg.HTTPClient)),
		option.WithMaxRetries(agent.MaxRetries(cfg.MaxRetries, DefaultMaxRetries)),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	return &Provider{
		chat:     sdk.NewChatCompletionService(opts...),
		model:    cmp.Or(cfg.Model, DefaultModel),
		baseURL:  agent.RedactURL(cfg.BaseURL),
		official: official,
		log:      agent.LoggerOrDiscard(cfg.Logger),
	}, nil
}

// isOpenAI reports whether base is OpenAI's own API rather than a compatible
// server, which changes a few request fields and the wording of messages.
func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// Name returns "openai".
func (p *Provider) Name() string { return Name }

// Model returns the model the provider calls.
func (p *Provider) Model() string { return p.model }

// Stream sends req to the Chat Completions API and streams the reply. Text
// deltas go to emit as they arrive; tool call arguments are assembled and
// returned whole. With req.Schema set, the call asks for response_format
// json_schema (strict) and the reply's text is the JSON object.
//
// Retries happen only before the reply begins: once a stream is open the SDK
// hands it over and never sends the request again, so text already emitted is
// never repeated. Cancelling ctx aborts the request at once and returns an
// error wrapping ctx.Err(). Other failures are *agent.Error; an error from
// emit is returned as it is.
func (p *Provider) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	start := time.Now()
	params, err := p.params(req)
	if err != nil {
		return nil, p.failed(ctx, start, err)
	}

	stream := p.chat.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		acc      sdk.ChatCompletionAccumulator
		usage    *sdk.CompletionUsage
		finished bool
	)
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return nil, p.failed(ctx, start, p.malformed("a chunk does not fit the ones before it", nil))
		}
		// The usage chunk comes last, with no choices. Take the last one
		// reported rather than the accumulator's sum, as some servers repeat
		// running totals in every chunk.
		if chunk.JSON.Usage.Valid() {
			u := chunk.Usage
			usage = &u
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // Baton asks for one choice
			}
			text := choice.Delta.Content
			if text == "" {
				text = choice.Delta.Refusal
			}
			if text != "" {
				if err := emit(agent.Delta{Text: text}); err != nil {
					return nil, agent.LogAborted(ctx, p.log, Name, p.model, start, err)
				}
			}
			if choice.FinishReason != "" {
				finished = true
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.failed(ctx, start, err)
	}
	if !finished {
		return nil, p.failed(ctx, start, p.malformed("the stream ended before the model finished (no finish_reason)", nil))
	}

	reply, err := p.reply(&acc, usage)
	if err != nil {
		return nil, p.failed(ctx, start, err)
	}
	reply.Duration = time.Since(start)
	agent.LogReply(ctx, p.log, Name, reply)
	return reply, nil
}

// reply turns the accumulated completion into an agent.Reply.
func (p *Provider) reply(acc *sdk.ChatCompletionAccumulator, usage *sdk.CompletionUsage) (*agent.Reply, error) {
	if len(acc.Choices) == 0 {
		return nil, p.malformed("the stream has no choices", nil)
	}
	choice := acc.Choices[0]
	reply := &agent.Reply{
		Model: acc.Model,
		Usage: agent.Usage{ResponseID: acc.ID},
	}
	if reply.Model == "" {
		reply.Model = p.model
	}
	if usage != nil {
		reply.Usage.InputTokens = usage.PromptTokens
		reply.Usage.OutputTokens = usage.CompletionTokens
	}
	text := choice.Message.Content
	if text == "" {
		text = choice.Message.Refusal
	}
	if text != "" {
		reply.Parts = append(reply.Parts, agent.TextPart{Text: text})
	}
	for i, call := range choice.Message.ToolCalls {
		args := strings.TrimSpace(call.Function.Arguments)
		if args == "" {
			args = "{}"
		}
		if !jsonValid(args) {
			if choice.FinishReason == "length" {
				return nil, p.malformed("the reply hit the token limit in the middle of tool call "+strconv.Quote(call.Function.Name)+"; raise the request's MaxTokens", nil)
			}
			return nil, p.malformed("the arguments of tool call "+strconv.Quote(call.Function.Name)+" are not JSON", nil)
		}
		if call.Function.Name == "" {
			return nil, p.malformed("a tool call has no name", nil)
		}
		id := call.ID
		if id == "" {
			// Some compatible servers leave ids out; the result must still
			// name the call it answers.
			id = "call_" + strconv.Itoa(i)
		}
		reply.Parts = append(reply.Parts, agent.ToolCallPart{ID: id, Name: call.Function.Name, Input: []byte(args)})
	}
	reply.StopReason = stopReason(choice.FinishReason, len(choice.Message.ToolCalls) > 0)
	return reply, nil
}

// stopReason normalises a finish_reason. Some compatible servers (older
// Ollama) say "stop" even when the reply calls tools, so tool calls decide.
func stopReason(finish string, hasToolCalls bool) agent.StopReason {
	switch {
	case finish == "length":
		return agent.StopMaxTokens
	case finish == "tool_calls" || finish == "function_call" || hasToolCalls:
		return agent.StopToolUse
	default: // stop, content_filter
		return agent.StopEnd
	}
}

// failed maps err, logs the failed call once and returns what Stream returns.
func (p *Provider) failed(ctx context.Context, start time.Time, err error) error {
	return agent.LogFailure(ctx, p.log, Name, p.model, start, p.mapError(ctx, err))
}
