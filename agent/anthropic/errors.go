package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/shared"

	"github.com/baton-dev/baton/agent"
)

// offline is the way out that every message offers.
const offline = "switch BATON_PROVIDER=offline"

// mapError turns what the SDK returned into what Stream returns: an error
// wrapping ctx.Err() when the caller gave up, an *agent.Error otherwise.
func (p *Provider) mapError(ctx context.Context, err error) error {
	if err := agent.CallerGaveUp(ctx, Name, "Anthropic", err); err != nil {
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
	if agent.IsTimeout(err) {
		return &agent.Error{
			Provider: Name, Kind: agent.ErrTimeout, Err: err,
			Message: "Anthropic did not answer in time. Try again, raise the timeout, or " + offline + ".",
		}
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) || strings.Contains(err.Error(), "received error while streaming") {
		return malformed("the stream is not the Messages API's event stream", err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &agent.Error{
			Provider: Name, Kind: agent.ErrUnavailable, Err: err,
			Message: "The connection to Anthropic broke off in the middle of the reply. Try again, or " + offline + ".",
		}
	}
	return &agent.Error{
		Provider: Name, Kind: agent.ErrUnavailable, Err: err,
		Message: fmt.Sprintf("Could not reach Anthropic at %s (%v). Check the network and ANTHROPIC_BASE_URL, or %s.", p.endpoint(), agent.WithoutURL(err), offline),
	}
}

// mapAPIError maps an error status, or an error event inside a stream (which
// arrives with the stream's status, 200), by status and by error type.
func (p *Provider) mapAPIError(apiErr *sdk.Error) *agent.Error {
	status := apiErr.StatusCode
	typ := apiErr.Type()
	detail := apiMessage(apiErr.RawJSON())
	e := &agent.Error{Provider: Name, Status: status, Err: apiErr}
	if status == http.StatusOK {
		// An error event in a stream that had begun well.
		e.Status = 0
	}
	switch {
	case status == http.StatusUnauthorized || typ == shared.ErrorTypeAuthenticationError:
		e.Kind = agent.ErrAuth
		e.Message = "Anthropic rejected the API key (401). Set ANTHROPIC_API_KEY or " + offline + "."
	case status == http.StatusForbidden || typ == shared.ErrorTypePermissionError:
		e.Kind = agent.ErrAuth
		e.Message = "Anthropic refused this API key access (403)" + agent.Detail(detail) + ". Use a key with access to " + quote(p.model) + " in ANTHROPIC_API_KEY, or " + offline + "."
	case status == http.StatusPaymentRequired || typ == shared.ErrorTypeBillingError:
		e.Kind = agent.ErrAuth
		e.Message = "Anthropic refused the call for billing reasons" + agent.Detail(detail) + ". Check the account's plan and credits, or " + offline + "."
	case status == http.StatusNotFound || typ == shared.ErrorTypeNotFoundError:
		e.Kind = agent.ErrModel
		e.Message = "Anthropic does not know the model " + quote(p.model) + " (404). Set BATON_MODEL to a model your key can use, e.g. " + DefaultModel + "."
		if p.baseURL != "" {
			e.Message += " If the model is right, check ANTHROPIC_BASE_URL (" + p.baseURL + ")."
		}
	case status == http.StatusTooManyRequests || typ == shared.ErrorTypeRateLimitError:
		e.Kind = agent.ErrRateLimited
		e.RetryAfter = agent.RetryAfter(apiErr.Response)
		e.Message = "Anthropic is rate-limiting this API key (429). Wait " + agent.WaitHint(e.RetryAfter) + " and try again, or " + offline + "."
	case status == 529 || status >= 500 || typ == shared.ErrorTypeOverloadedError || typ == shared.ErrorTypeAPIError:
		e.Kind = agent.ErrUnavailable
		what := "failed"
		if status == 529 || typ == shared.ErrorTypeOverloadedError {
			what = "is overloaded"
		}
		e.Message = fmt.Sprintf("Anthropic %s%s. Try again in a minute, or %s.", what, statusNote(e.Status), offline)
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout || typ == shared.ErrorTypeTimeoutError:
		e.Kind = agent.ErrTimeout
		e.Message = "Anthropic timed out" + statusNote(e.Status) + ". Try again, or ask for a shorter reply."
	case status >= 400 && status < 500:
		e.Kind = agent.ErrBadRequest
		e.Message = fmt.Sprintf("Anthropic refused the request (%d)%s. Check BATON_MODEL and the conversation's length; if it keeps happening, report it as a Baton bug.", status, agent.Detail(detail))
	default:
		// An error event of a type we do not know.
		e.Kind = agent.ErrMalformed
		e.Message = "Anthropic sent an error in the middle of the reply" + agent.Detail(detail) + ". Try again, or " + offline + "."
	}
	return e
}

// malformed is the error for a stream that makes no sense.
func malformed(what string, err error) *agent.Error {
	return &agent.Error{
		Provider: Name, Kind: agent.ErrMalformed, Err: err,
		Message: "The reply from Anthropic could not be read: " + what + ". Try again, or check that ANTHROPIC_BASE_URL points at the Messages API.",
	}
}

// badRequest is the error for a request that cannot be sent as it is.
func badRequest(what string) *agent.Error {
	return &agent.Error{
		Provider: Name, Kind: agent.ErrBadRequest,
		Message: "Baton could not build the request for Anthropic: " + what + ". This is a bug; please report it.",
	}
}

// endpoint names where calls go, for messages.
func (p *Provider) endpoint() string {
	if p.baseURL != "" {
		return p.baseURL
	}
	return "https://api.anthropic.com"
}

// apiMessage extracts error.message from an error body or event.
func apiMessage(raw string) string {
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) != nil {
		return ""
	}
	return body.Error.Message
}

// statusNote formats an HTTP status for a message, if there is one.
func statusNote(status int) string {
	if status == 0 {
		return ""
	}
	return " (" + strconv.Itoa(status) + ")"
}

// quote quotes s for a message.
func quote(s string) string { return strconv.Quote(s) }
