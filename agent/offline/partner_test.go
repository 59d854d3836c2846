package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent"
)

// converse plays a thread with the offline partner: each user message gets
// the partner's reply, which stays in the thread as it would in Baton.
func converse(t *testing.T, users ...string) []string {
	t.Helper()
	var msgs []agent.Message
	var replies []string
	for _, text := range users {
		msgs = append(msgs, agent.Text(agent.RoleUser, text))
		reply, err := New().Stream(context.Background(), agent.Request{Messages: msgs}, func(agent.Delta) error { return nil })
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		replies = append(replies, reply.Text())
		msgs = append(msgs, agent.Text(agent.RoleAssistant, reply.Text()))
	}
	return replies
}

// nextOf returns the question a reply asks.
func nextOf(reply string) string {
	for line := range strings.SplitSeq(reply, "\n") {
		if q, ok := strings.CutPrefix(line, nextPrefix); ok {
			return q
		}
	}
	return ""
}

var threadTurns = []string{
	"We want to export invoices as CSV from the billing admin.",
	"Let's build it as a Celery task in billing/tasks.py.",
	"I'm worried a large export could time out the worker and lose the file.",
	"Store the file in S3 under exports/ and email a link.",
	"Let's add a unit test in tests/test_exports.py.",
	"Roll it out behind a feature flag.",
	"Log each export with the account id and row count.",
	"Only admins may start an export.",
	"Use a separate exports queue.",
	"Keep the links valid for 7 days.",
}

func TestPartnerNeverAsksTwice(t *testing.T) {
	replies := converse(t, threadTurns...)
	seen := map[string]int{}
	for i, r := range replies {
		q := nextOf(r)
		if q == "" {
			t.Fatalf("reply %d has no question:\n%s", i, r)
		}
		if j, ok := seen[q]; ok {
			t.Fatalf("replies %d and %d both ask %q", j, i, q)
		}
		seen[q] = i
	}
}

func TestPartnerAnswersTheLatestMessage(t *testing.T) {
	replies := converse(t, threadTurns[:5]...)
	last := replies[len(replies)-1]
	heard, _, _ := strings.Cut(last, nextPrefix)
	if !strings.Contains(heard, "`tests/test_exports.py`") || !strings.Contains(strings.ToLower(heard), "unit test") {
		t.Errorf("the reply does not say what the latest message added:\n%s", last)
	}
	for _, old := range []string{"billing/tasks.py", "exports/", "Celery"} {
		if strings.Contains(heard, old) {
			t.Errorf("the reply repeats %q from an earlier message:\n%s", old, last)
		}
	}
	if !strings.Contains(last, "So far: ") {
		t.Errorf("the reply has no short summary of the thread:\n%s", last)
	}
}

func TestPartnerStaysShort(t *testing.T) {
	replies := converse(t, threadTurns...)
	for i, r := range replies {
		if n := strings.Count(r, "\n"); n > 12 {
			t.Errorf("reply %d has %d lines, want at most 12:\n%s", i, n, r)
		}
	}
	if a, b := len(replies[1]), len(replies[len(replies)-1]); b > 2*a+200 {
		t.Errorf("replies grow with the thread: %d bytes at turn 2, %d at turn %d", a, b, len(replies))
	}
}

func TestPartnerQuestionFollowsAnUnansweredRisk(t *testing.T) {
	replies := converse(t, "Let's store API tokens in plaintext in the users table for now, with unit tests. The risk is that a leaked backup exposes every token.")
	if q := nextOf(replies[0]); !strings.Contains(q, "leaked backup") {
		t.Fatalf("question=%q, want it about the unanswered high risk", q)
	}
}
