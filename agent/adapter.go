package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// What the provider adapters (anthropic, openai) share about HTTP.

// ResponseHeaderTimeout bounds how long an adapter's default client waits
// for a server that accepted the connection to start answering.
const ResponseHeaderTimeout = 10 * time.Minute

// NewHTTPClient returns a client with its own transport, so that a server
// that accepts the connection but never answers cannot hang a call forever.
func NewHTTPClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = ResponseHeaderTimeout
	return &http.Client{Transport: t}
}

// HTTPClientOrDefault returns c, or NewHTTPClient() when c is nil.
func HTTPClientOrDefault(c *http.Client) *http.Client {
	if c == nil {
		return NewHTTPClient()
	}
	return c
}

// LoggerOrDiscard returns l, or a logger that discards everything when l is nil.
func LoggerOrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// MaxRetries turns an adapter's configured retry count into the SDK's:
// zero means def, a negative number no retries.
func MaxRetries(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// RetryAfter reads how long a server asked to wait: retry-after-ms, or
// Retry-After in seconds or as an HTTP date.
func RetryAfter(res *http.Response) time.Duration {
	if res == nil {
		return 0
	}
	if v := res.Header.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := res.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// IsTimeout reports whether err is a deadline that passed: a per-attempt
// timeout, the HTTP client's timeout or a network deadline.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// WaitHint says how long to wait before trying again, for a message: the
// server's Retry-After, or "a little" when it gave none.
func WaitHint(retryAfter time.Duration) string {
	switch {
	case retryAfter <= 0:
		return "a little"
	case retryAfter < time.Second:
		return retryAfter.String()
	}
	return retryAfter.Round(time.Second).String()
}

// SchemaName makes a structured-output schema's name acceptable to the
// providers' APIs as a tool or schema name (^[a-zA-Z0-9_-]{1,64}$).
func SchemaName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() == 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "structured_output"
	}
	return b.String()
}

// CallerGaveUp returns what an adapter's Stream returns when ctx is done,
// whatever else err says went wrong (even a stream that merely looks cut
// short): an ErrTimeout *Error naming who (the service, at the start of a
// sentence) for a deadline, or an error wrapping ctx.Err() for a
// cancellation. It returns nil while ctx is live.
func CallerGaveUp(ctx context.Context, provider, who string, err error) error {
	ctxErr := ctx.Err()
	if ctxErr == nil {
		return nil
	}
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		return &Error{
			Provider: provider, Kind: ErrTimeout, Err: fmt.Errorf("%w (%v)", ctxErr, err),
			Message: who + " did not finish the reply before the deadline. Try again, or ask for a shorter reply.",
		}
	}
	return fmt.Errorf("%s: model call cancelled: %w", provider, ctxErr)
}

// Detail formats a provider's own words for the end of a sentence.
func Detail(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + strings.TrimRight(detail, ". ")
}

// LogFailure logs a failed model call once, with what a person needs to
// see why (kind, status, retry-after, cause), and returns err. err is the
// adapter's mapped error: an *Error, or the caller's cancellation, which
// is logged at Info since nothing went wrong with the provider.
func LogFailure(ctx context.Context, log *slog.Logger, provider, model string, start time.Time, err error) error {
	attrs := []slog.Attr{
		slog.String("provider", provider),
		slog.String("model", model),
		slog.Duration("duration", time.Since(start)),
	}
	var e *Error
	if !errors.As(err, &e) {
		log.LogAttrs(ctx, slog.LevelInfo, "model call cancelled", append(attrs, slog.String("err", err.Error()))...)
		return err
	}
	level := slog.LevelWarn
	if e.Kind == ErrUnavailable {
		level = slog.LevelError
	}
	attrs = append(attrs, slog.String("kind", string(e.Kind)), slog.Int("status", e.Status))
	if e.RetryAfter > 0 {
		attrs = append(attrs, slog.Duration("retry_after", e.RetryAfter))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	log.LogAttrs(ctx, level, "model call failed", attrs...)
	return err
}

// LogAborted logs a model call that the caller stopped by failing emit,
// and returns err, emit's error.
func LogAborted(ctx context.Context, log *slog.Logger, provider, model string, start time.Time, err error) error {
	log.LogAttrs(ctx, slog.LevelInfo, "model call aborted by caller",
		slog.String("provider", provider), slog.String("model", model),
		slog.Duration("duration", time.Since(start)), slog.String("err", err.Error()))
	return err
}

// LogReply logs a model call that succeeded, once, with its usage.
func LogReply(ctx context.Context, log *slog.Logger, provider string, reply *Reply) {
	log.LogAttrs(ctx, slog.LevelInfo, "model call",
		slog.String("provider", provider),
		slog.String("model", reply.Model),
		slog.Int64("input_tokens", reply.Usage.InputTokens),
		slog.Int64("output_tokens", reply.Usage.OutputTokens),
		slog.Duration("duration", reply.Duration),
		slog.String("response_id", reply.Usage.ResponseID),
		slog.String("stop_reason", string(reply.StopReason)),
	)
}
