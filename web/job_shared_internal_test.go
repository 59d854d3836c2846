package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
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

// TestRecoverWithoutRef recovers jobs whose instance died after their
// setup made a plan or an extraction run but before it recorded the ref:
// the key names the work.
func TestRecoverWithoutRef(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	sh := &sharedJobs{db: db, log: slog.New(slog.DiscardHandler)}

	sn := storetest.FrozenSnapshot(t, db, storetest.Items{Decisions: storetest.Decisions("Use SQLite.")})
	plan, err := db.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	sh.recover(ctx, &store.Job{Kind: "plan", Key: planKey(sn.ID)})
	if p, err := db.FindPlanByID(ctx, plan.ID); err != nil || p.Status != store.PlanFailed || !strings.Contains(p.Error, "Interrupted") {
		t.Fatalf("plan after recovery: %+v, %v; want failed as interrupted", p, err)
	}

	h := storetest.NewHandoff(t, db, storetest.Items{Title: "Extract"})
	if _, err := db.StartExtractionRun(ctx, h.ID); err != nil {
		t.Fatal(err)
	}
	sh.recover(ctx, &store.Job{Kind: "extraction", Key: extractKey(h.ThreadID)})
	if run, err := db.FindLatestExtractionRun(ctx, h.ID); err != nil || run.Status != store.RunFailed || !strings.Contains(run.Error, "Interrupted") {
		t.Fatalf("run after recovery: %+v, %v; want failed as interrupted", run, err)
	}

	// Nothing made yet: nothing to do, and no error.
	sh.recover(ctx, &store.Job{Kind: "extraction", Key: extractKey("no-such-thread")})
	sh.recover(ctx, &store.Job{Kind: "reply", Key: "reply:x"})
}
