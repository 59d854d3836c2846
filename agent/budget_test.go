package agent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// budgetModel is a provider that counts its calls and replies "ok".
type budgetModel struct{ calls atomic.Int32 }

func (m *budgetModel) Name() string  { return "anthropic" }
func (m *budgetModel) Model() string { return "claude-test" }

func (m *budgetModel) Stream(ctx context.Context, req Request, emit func(Delta) error) (*Reply, error) {
	m.calls.Add(1)
	if err := emit(Delta{Text: "ok"}); err != nil {
		return nil, err
	}
	return &Reply{Parts: []Part{TextPart{Text: "ok"}}, StopReason: StopEnd, Usage: Usage{InputTokens: 3, OutputTokens: 1}}, nil
}

// usedTokens returns a used func that reports n, and counts its calls.
func usedTokens(n int64, calls *atomic.Int32) func(context.Context) (int64, error) {
	return func(context.Context) (int64, error) {
		calls.Add(1)
		return n, nil
	}
}

// november2026 is a fixed clock for the budget's messages.
func november2026() time.Time { return time.Date(2026, time.November, 17, 23, 59, 0, 0, time.UTC) }

func TestWithBudgetRefusesWhenSpent(t *testing.T) {
	tests := []struct {
		name    string
		limit   int64
		used    int64
		message string
	}{
		{"at the limit", 1_000_000, 1_000_000,
			"This workspace has used its token budget for November 2026 (1,000,000 of 1,000,000 tokens). Raise BATON_TOKEN_BUDGET or wait until next month."},
		{"over the limit", 1_000_000, 1_234_567,
			"This workspace has used its token budget for November 2026 (1,234,567 of 1,000,000 tokens). Raise BATON_TOKEN_BUDGET or wait until next month."},
		{"small numbers", 500, 999,
			"This workspace has used its token budget for November 2026 (999 of 500 tokens). Raise BATON_TOKEN_BUDGET or wait until next month."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &budgetModel{}
			var checks atomic.Int32
			p := WithBudget(model, tt.limit, usedTokens(tt.used, &checks))
			p.(*budgeted).now = november2026

			emitted := 0
			reply, err := p.Stream(context.Background(), Request{Messages: []Message{Text(RoleUser, "hi")}}, func(Delta) error {
				emitted++
				return nil
			})
			if reply != nil {
				t.Fatalf("reply=%+v, want none", reply)
			}
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("err=%v (%T), want *agent.Error", err, err)
			}
			if got, want := e.Kind, ErrBudget; got != want {
				t.Fatalf("Kind=%q, want %q", got, want)
			}
			if got, want := e.Provider, "anthropic"; got != want {
				t.Fatalf("Provider=%q, want %q", got, want)
			}
			if got, want := e.Message, tt.message; got != want {
				t.Fatalf("Message=%q, want %q", got, want)
			}
			if e.Retryable() {
				t.Fatalf("Retryable()=true, want false: waiting a moment does not refill a budget")
			}
			if got := model.calls.Load(); got != 0 {
				t.Fatalf("model calls=%d, want 0", got)
			}
			if emitted != 0 {
				t.Fatalf("emitted %d deltas, want 0", emitted)
			}
			if got, want := checks.Load(), int32(1); got != want {
				t.Fatalf("used calls=%d, want %d", got, want)
			}
		})
	}
}

func TestWithBudgetPassesUnderTheLimit(t *testing.T) {
	model := &budgetModel{}
	var checks atomic.Int32
	p := WithBudget(model, 1_000, usedTokens(999, &checks))
	var got strings.Builder
	for i := range 2 {
		reply, err := p.Stream(context.Background(), Request{}, func(d Delta) error {
			got.WriteString(d.Text)
			return nil
		})
		if err != nil {
			t.Fatalf("call %d: Stream: %v", i, err)
		}
		if got, want := reply.Text(), "ok"; got != want {
			t.Fatalf("call %d: Text=%q, want %q", i, got, want)
		}
	}
	if got, want := got.String(), "okok"; got != want {
		t.Fatalf("emitted=%q, want %q", got, want)
	}
	if got, want := model.calls.Load(), int32(2); got != want {
		t.Fatalf("model calls=%d, want %d", got, want)
	}
	// The budget is asked before every call, not once.
	if got, want := checks.Load(), int32(2); got != want {
		t.Fatalf("used calls=%d, want %d", got, want)
	}
	if got, want := p.Name(), "anthropic"; got != want {
		t.Fatalf("Name=%q, want %q", got, want)
	}
	if got, want := p.Model(), "claude-test"; got != want {
		t.Fatalf("Model=%q, want %q", got, want)
	}
}

func TestWithBudgetUsedFails(t *testing.T) {
	model := &budgetModel{}
	dbErr := errors.New("database is locked")
	p := WithBudget(model, 10, func(context.Context) (int64, error) { return 0, dbErr })

	_, err := p.Stream(context.Background(), Request{}, func(Delta) error { return nil })
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("err=%v, want *agent.Error", err)
	}
	if got, want := e.Kind, ErrUnavailable; got != want {
		t.Fatalf("Kind=%q, want %q", got, want)
	}
	if !errors.Is(err, dbErr) {
		t.Fatalf("err=%v, want it to wrap the cause", err)
	}
	if !strings.Contains(e.Message, "token budget") {
		t.Fatalf("Message=%q, want it to say the budget could not be checked", e.Message)
	}
	if got := model.calls.Load(); got != 0 {
		t.Fatalf("model calls=%d, want 0", got)
	}

	// A caller that gave up hears that, not a budget failure.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p = WithBudget(model, 10, func(ctx context.Context) (int64, error) { return 0, ctx.Err() })
	_, err = p.Stream(ctx, Request{}, func(Delta) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
	if _, ok := AsError(err); ok {
		t.Fatalf("err=%v is an *agent.Error, want a plain cancellation", err)
	}
}

func TestWithBudgetOff(t *testing.T) {
	model := &budgetModel{}
	for _, limit := range []int64{0, -1} {
		if got := WithBudget(model, limit, nil); got != Provider(model) {
			t.Fatalf("WithBudget(limit %d)=%T, want the provider itself", limit, got)
		}
	}
}

// TestModelExtractorBehindBudget checks that an extraction built on a
// budgeted provider is refused, without a model call, once the budget is spent.
func TestModelExtractorBehindBudget(t *testing.T) {
	var checks atomic.Int32
	model := &budgetModel{}
	p := WithBudget(model, 10, usedTokens(100, &checks))
	_, err := Extract(context.Background(), ModelExtractor(p), transcript(3))
	if e, ok := AsError(err); !ok || e.Kind != ErrBudget {
		t.Fatalf("Extract err=%v, want ErrBudget", err)
	}
	if got := model.calls.Load(); got != 0 {
		t.Fatalf("model calls=%d, want 0", got)
	}
}

func TestMonthStart(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*60*60)
	tests := []struct {
		name string
		in   time.Time
		want time.Time
	}{
		{"mid-month", time.Date(2026, time.November, 17, 12, 30, 0, 0, time.UTC), time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)},
		{"first instant", time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)},
		{"last instant", time.Date(2026, time.December, 31, 23, 59, 59, 999, time.UTC), time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC)},
		// Already December in Tokyo, still November in UTC: UTC decides.
		{"other zone", time.Date(2026, time.December, 1, 8, 0, 0, 0, tokyo), time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MonthStart(tt.in); !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Fatalf("MonthStart(%v)=%v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestGroupThousands(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {65536, "65,536"},
		{1_000_000, "1,000,000"}, {123_456_789, "123,456,789"}, {-1234, "-1,234"},
	}
	for _, tt := range tests {
		if got := groupThousands(tt.in); got != tt.want {
			t.Fatalf("groupThousands(%d)=%q, want %q", tt.in, got, tt.want)
		}
	}
}
