// Package agent holds everything that talks to a model: the provider seam,
// the tool loop, extraction, planning and prompt building. Provider adapters
// live in sub-packages (offline, anthropic, openai); only they import SDKs.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Provider is the one seam between Baton and a model.
type Provider interface {
	// Name is the provider's configuration name: offline, anthropic or openai.
	Name() string
	// Model is the model the provider calls.
	Model() string
	// Stream sends req, calls emit for each delta, and returns the complete
	// reply. An error returned by emit aborts the call and is returned as is.
	// Cancelling ctx aborts the underlying request at once.
	Stream(ctx context.Context, req Request, emit func(Delta) error) (*Reply, error)
}

// Role is who said a message.
type Role string

// Roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Request is one model call.
type Request struct {
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int
	// Schema, when set, asks for a single JSON object matching it instead of
	// free text (Anthropic: a forced tool; OpenAI: response_format json_schema).
	// The reply's text is then that object.
	Schema *Schema
}

// Schema names a JSON Schema for structured output.
type Schema struct {
	Name        string
	Description string
	JSON        json.RawMessage
}

// Message is one turn of a conversation. Its parts form a closed union.
type Message struct {
	Role  Role
	Parts []Part
}

// Text returns a message holding a single text part.
func Text(role Role, text string) Message {
	return Message{Role: role, Parts: []Part{TextPart{Text: text}}}
}

// Part is a piece of a message: TextPart, ToolCallPart or ToolResultPart.
type Part interface{ isPart() }

// TextPart is plain text.
type TextPart struct{ Text string }

// ToolCallPart is a model's request to run a tool.
type ToolCallPart struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// ToolResultPart is the result of a tool call, sent back to the model.
type ToolResultPart struct {
	CallID  string
	Content string
	IsError bool
}

func (TextPart) isPart()       {}
func (ToolCallPart) isPart()   {}
func (ToolResultPart) isPart() {}

// Tool describes a tool the model may call. InputSchema is a JSON Schema object.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Delta is an incremental piece of a streamed reply. Only text is streamed to
// people; tool call input is assembled by the provider and returned whole.
type Delta struct {
	Text string
}

// StopReason says why a reply ended.
type StopReason string

// Stop reasons, normalised across providers.
const (
	StopEnd       StopReason = "end"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
)

// Usage is what a call cost.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	ResponseID   string
}

// Reply is a complete model reply.
type Reply struct {
	Parts      []Part
	StopReason StopReason
	Usage      Usage
	Model      string
	Duration   time.Duration
}

// Text concatenates the reply's text parts.
func (r *Reply) Text() string {
	var s string
	for _, p := range r.Parts {
		if t, ok := p.(TextPart); ok {
			s += t.Text
		}
	}
	return s
}

// ToolCalls returns the reply's tool calls in order.
func (r *Reply) ToolCalls() []ToolCallPart {
	var calls []ToolCallPart
	for _, p := range r.Parts {
		if c, ok := p.(ToolCallPart); ok {
			calls = append(calls, c)
		}
	}
	return calls
}

// ErrorKind classifies why a model call failed.
type ErrorKind string

// Kinds of model failures.
const (
	ErrAuth        ErrorKind = "auth"         // 401/403: bad or missing key
	ErrModel       ErrorKind = "model"        // 404: unknown model
	ErrRateLimited ErrorKind = "rate_limited" // 429
	ErrUnavailable ErrorKind = "unavailable"  // 5xx, overloaded
	ErrTimeout     ErrorKind = "timeout"
	ErrMalformed   ErrorKind = "malformed" // a stream or body that makes no sense
	ErrBadRequest  ErrorKind = "bad_request"
	ErrBudget      ErrorKind = "budget" // the workspace's token budget is spent
)

// Error is a failed model call with a message a person can act on.
type Error struct {
	Provider   string
	Kind       ErrorKind
	Status     int           // HTTP status, if any
	RetryAfter time.Duration // from Retry-After, if any
	Message    string        // what happened and what to do
	Err        error
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("%s: %s: %v", e.Provider, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether trying the same call again later may succeed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimited, ErrUnavailable, ErrTimeout, ErrMalformed:
		return true
	}
	return false
}

// AsError returns err as an *Error if it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// RedactURL is a base URL fit for messages people read and for logs: no
// password and no query (where some gateways put keys).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.RawQuery, u.Fragment = "", ""
	return u.Redacted()
}

// WithoutURL drops the request URL from an HTTP client error, which may
// carry keys in its query, keeping what went wrong ("connection refused").
func WithoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
