package agent

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// WithBudget returns p limited to limit tokens per calendar month (UTC).
// Before each call to Stream it asks used how many tokens the workspace has
// spent this month; at or over the limit it returns an *Error of kind
// ErrBudget, saying so and what to do, without calling the model. used
// should count from MonthStart(time.Now()), the month the message names.
//
// The budget is checked before a call, not during it: a call that starts
// under the limit runs to its end, and calls made at the same moment all
// pass, so a month may end a little over the limit.
//
// A limit of zero or less turns the budget off and returns p itself. If used
// fails, the call is refused as well (ErrUnavailable): an unchecked budget
// is not a budget. Extraction and the reversal judge go through the budget
// when they are built on the result (ModelExtractor, ReversalJudge).
func WithBudget(p Provider, limit int64, used func(ctx context.Context) (int64, error)) Provider {
	if limit <= 0 {
		return p
	}
	return &budgeted{Provider: p, limit: limit, used: used, now: time.Now}
}

// MonthStart returns the start of t's calendar month in UTC: the moment a
// monthly token budget starts counting again.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// budgeted is a Provider that refuses calls once the month's tokens are spent.
type budgeted struct {
	Provider
	limit int64
	used  func(ctx context.Context) (int64, error)
	now   func() time.Time
}

// Stream calls the wrapped provider unless the budget is spent.
func (b *budgeted) Stream(ctx context.Context, req Request, emit func(Delta) error) (*Reply, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	return b.Provider.Stream(ctx, req, emit)
}

// check returns the error that refuses a call, or nil if it may go ahead.
func (b *budgeted) check(ctx context.Context) error {
	used, err := b.used(ctx)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("%s: model call cancelled: %w", b.Name(), ctxErr)
		}
		return &Error{
			Provider: b.Name(), Kind: ErrUnavailable, Err: err,
			Message: "Baton could not check this workspace's token budget, so the model was not called. Try again; if it keeps happening, check the database or unset BATON_TOKEN_BUDGET.",
		}
	}
	if used < b.limit {
		return nil
	}
	return &Error{
		Provider: b.Name(),
		Kind:     ErrBudget,
		Message: fmt.Sprintf("This workspace has used its token budget for %s (%s of %s tokens). Raise BATON_TOKEN_BUDGET or wait until next month.",
			b.now().UTC().Format("January 2006"), groupThousands(used), groupThousands(b.limit)),
	}
}

// groupThousands formats n with commas between groups of three digits.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return sign + string(out)
}

// workspaceKey is the context key of the workspace a model call is made for.
type workspaceKey struct{}

// WithWorkspace returns a copy of ctx that names the workspace its model
// calls are made for, so that a budget (WithBudget's used) can count that
// workspace's tokens.
func WithWorkspace(ctx context.Context, workspaceID string) context.Context {
	return context.WithValue(ctx, workspaceKey{}, workspaceID)
}

// WorkspaceFrom returns the workspace ctx names, or "" when it names none.
func WorkspaceFrom(ctx context.Context) string {
	ws, _ := ctx.Value(workspaceKey{}).(string)
	return ws
}
