package web

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/baton-dev/baton/store"
)

func TestJobCoalesceDeltas(t *testing.T) {
	events := []jobEvent{
		{"step", "<li>1</li>"}, {"delta", "a"}, {"delta", "b"}, {"delta", "c"},
		{"step", "<li>2</li>"}, {"delta", "d"}, {"progress", "p"}, {"delta", "e"}, {"delta", "f"},
	}
	got := coalesce(events, 7)
	want := []store.JobEvent{
		{Seq: 8, Name: "step", Data: "<li>1</li>"}, {Seq: 9, Name: "delta", Data: "abc"},
		{Seq: 10, Name: "step", Data: "<li>2</li>"}, {Seq: 11, Name: "delta", Data: "d"},
		{Seq: 12, Name: "progress", Data: "p"}, {Seq: 13, Name: "delta", Data: "ef"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("coalesce = %+v\nwant %+v", got, want)
	}
}

// TestJobOutcomeRoundTrip checks that a follower on another instance reads
// how a job ended as the callers of job.err test it.
func TestJobOutcomeRoundTrip(t *testing.T) {
	invalid := store.Errorf(store.EINVALID, "There is nothing to extract yet.")
	cases := []struct {
		name string
		err  error
		test func(error) bool
	}{
		{"success", nil, func(err error) bool { return err == nil }},
		{"invalid", fmt.Errorf("extract: %w", invalid), func(err error) bool {
			return store.ErrorCode(err) == store.EINVALID && store.ErrorMessage(err) == invalid.Message
		}},
		{"cancelled", fmt.Errorf("stream: %w", context.Canceled), func(err error) bool {
			return errors.Is(err, context.Canceled)
		}},
		{"failed", errors.New("model overloaded"), func(err error) bool {
			return err != nil && err.Error() == "model overloaded" && store.ErrorCode(err) == store.EINTERNAL
		}},
	}
	for _, c := range cases {
		out := jobOutcome(c.err)
		got := outcomeErr(&store.Job{Error: out.Error, ErrorCode: out.ErrorCode, Cancelled: out.Cancelled})
		if !c.test(got) {
			t.Errorf("%s: %v ended as %+v, read back as %v", c.name, c.err, out, got)
		}
	}
	for _, cause := range []error{errStopped, errLeft, errShutdown, errCancelled, errLeaseLost} {
		if got := cancelCause(cause.Error()); got != cause {
			t.Errorf("cancelCause(%q) = %v, want the sentinel", cause.Error(), got)
		}
	}
}
