package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/baton-dev/baton/agent"
)

// offline is the way out that every message offers.
const offline = "switch BATON_PROVIDER=offline"

// mapError turns what the SDK returned into what Stream returns: an error
// wrapping ctx.Err() when the caller gave up, an *agent.Error otherwise.
func (p *Provider) mapError(ctx context.Context, err error) error {
	if err := agent.CallerGaveUp(ctx, Name, p.who(), err); err != nil {
		return err
	}
	var e *agent.Error
	if errors.As(err, &e) {
		return err
	}

	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return p.mapAPIError(apiErr)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return p.mapStreamError(streamErr)
	}
	if agent.IsTimeout(err) {
		return &agent.Error{
			Provider: Name, Kind: agent.ErrTimeout, Err: err,
			Message: p.who() + " did not answer in time. Try again, raise the timeout, or " + offline + ".",
		}
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
		return p.malformed("the stream is not a Chat Completions stream", err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &agent.Error{
			Provider: Name, Kind: agent.ErrUnavailable, Err: err,
			Message: "The connection to " + p.name() + " broke off in the middle of the reply. Try again, or " + offline + ".",
		}
	}
	hint := "Check the network and OPENAI_BASE_URL"
	if !p.official {
		hint = "Check that the server is running and OPENAI_BASE_URL is right"
	}
	return &agent.Error{
		Provider: Name, Kind: agent.ErrUnavailable, Err: err,
		Message: fmt.Sprintf("Could not reach %s (%v). %s, or %s.", p.name(), agent.WithoutURL(err), hint, offline),
	}
}

// mapAPIError maps an error status by status and by the error's code.
func (p *Provider) mapAPIError(apiErr *sdk.Error) *agent.Error {
	status := apiErr.StatusCode
	detail := apiErr.Message
	e := &agent.Error{Provider: Name, Status: status, Err: apiErr}
	switch {
	case status == http.StatusUnauthorized:
		e.Kind = agent.ErrAuth
		if p.official {
			e.Message = "OpenAI rejected the API key (401). Set OPENAI_API_KEY or " + offline + "."
		} else {
			e.Message = p.who() + " rejected the API key (401). Set OPENAI_API_KEY to a key it accepts, or " + offline + "."
		}
	case status == http.StatusForbidden:
		e.Kind = agent.ErrAuth
		e.Message = p.who() + " refused this API key access (403)" + agent.Detail(detail) + ". Use a key with access to " + strconv.Quote(p.model) + " in OPENAI_API_KEY, or " + offline + "."
	case status == http.StatusNotFound:
		e.Kind = agent.ErrModel
		if p.official {
			e.Message = "OpenAI does not know the model " + strconv.Quote(p.model) + " (404). Set BATON_MODEL to a model your key can use, e.g. " + DefaultModel + "."
		} else {
			e.Message = p.who() + " does not know the model " + strconv.Quote(p.model) + " (404). Set BATON_MODEL to a model it serves (for Ollama, pull it first), and check that OPENAI_BASE_URL ends in /v1."
		}
	case status == http.StatusTooManyRequests && apiErr.Code == "insufficient_quota":
		// Not a rate limit: waiting will not help.
		e.Kind = agent.ErrAuth
		e.Message = p.who() + " says the account has no quota left (429 insufficient_quota). Check the plan and billing, or " + offline + "."
	case status == http.StatusTooManyRequests:
		e.Kind = agent.ErrRateLimited
		e.RetryAfter = agent.RetryAfter(apiErr.Response)
		e.Message = p.who() + " is rate-limiting this API key (429). Wait " + agent.WaitHint(e.RetryAfter) + " and try again, or " + offline + "."
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Kind = agent.ErrTimeout
		e.Message = fmt.Sprintf("%s timed out (%d). Try again, or ask for a shorter reply.", p.who(), status)
	case status >= 500:
		e.Kind = agent.ErrUnavailable
		e.Message = fmt.Sprintf("%s failed (%d)%s. Try again in a minute, or %s.", p.who(), status, agent.Detail(detail), offline)
	default:
		e.Kind = agent.ErrBadRequest
		e.Message = fmt.Sprintf("%s refused the request (%d)%s. Check BATON_MODEL and the conversation's length; if it keeps happening, report it as a Baton bug.", p.who(), status, agent.Detail(detail))
	}
	return e
}

// mapStreamError maps an error sent inside a stream that had begun well, as
// `data: {"error": {...}}`.
func (p *Provider) mapStreamError(streamErr *ssestream.StreamError) *agent.Error {
	var body struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(streamErr.Event.Data, &body)
	detail := body.Error.Message
	code := fmt.Sprint(body.Error.Code)
	e := &agent.Error{Provider: Name, Err: streamErr}
	switch {
	case body.Error.Type == "server_error" || strings.Contains(code, "server_error") || strings.Contains(body.Error.Type, "overloaded"):
		e.Kind = agent.ErrUnavailable
		e.Message = p.who() + " failed in the middle of the reply" + agent.Detail(detail) + ". Try again in a minute, or " + offline + "."
	case strings.Contains(body.Error.Type, "rate_limit") || strings.Contains(code, "rate_limit"):
		e.Kind = agent.ErrRateLimited
		e.Message = p.who() + " is rate-limiting this API key" + agent.Detail(detail) + ". Wait a little and try again, or " + offline + "."
	default:
		e.Kind = agent.ErrMalformed
		e.Message = p.who() + " sent an error in the middle of the reply" + agent.Detail(detail) + ". Try again, or " + offline + "."
	}
	return e
}

// malformed is the error for a stream that makes no sense.
func (p *Provider) malformed(what string, err error) *agent.Error {
	msg := "The reply from " + p.name() + " could not be read: " + what + ". Try again"
	if !p.official {
		msg += ", or check that OPENAI_BASE_URL points at an OpenAI-compatible /v1 endpoint"
	}
	return &agent.Error{Provider: Name, Kind: agent.ErrMalformed, Err: err, Message: msg + "."}
}

// badRequest is the error for a request that cannot be sent as it is.
func badRequest(what string) *agent.Error {
	return &agent.Error{
		Provider: Name, Kind: agent.ErrBadRequest,
		Message: "Baton could not build the request for OpenAI: " + what + ". This is a bug; please report it.",
	}
}

// name names the service for messages: OpenAI, or the compatible server.
func (p *Provider) name() string {
	if p.official {
		return "OpenAI"
	}
	return "the server at " + p.endpoint()
}

// who is name at the start of a sentence.
func (p *Provider) who() string {
	n := p.name()
	return strings.ToUpper(n[:1]) + n[1:]
}

// endpoint is where calls go.
func (p *Provider) endpoint() string {
	if p.baseURL != "" {
		return p.baseURL
	}
	return DefaultBaseURL
}
