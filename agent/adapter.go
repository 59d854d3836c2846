package agent

import (
	"context"
	"errors"
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
