package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// TestTokenBudgetSpent checks that once the workspace's monthly token
// budget is used up, a message gets a failed reply saying so, with Retry,
// and the model is not called; the last call under the budget still goes
// through.
func TestTokenBudgetSpent(t *testing.T) {
	ctx := context.Background()
	model := newFakeModel("Fine, ", "one more.") // 7 in, 2 out tokens
	// The budget reads the server's own database, as cmd/baton wires it.
	var db atomic.Pointer[store.DB]
	used := func(ctx context.Context) (int64, error) {
		return db.Load().TokensUsed(ctx, db.Load().DefaultWorkspaceID(), agent.MonthStart(time.Now()))
	}
	app := newApp(t, agent.WithBudget(model, 1_000_000, used))
	db.Store(app.DB)

	// Earlier this month the workspace spent all but 9 tokens.
	th := app.createThread("Budget")
	q, err := app.DB.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "Big question"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, ReplyTo: q.ID,
		Content: "Long answer", Model: "fake-1", InputTokens: 600_000, OutputTokens: 399_991}); err != nil {
		t.Fatal(err)
	}

	// Under the budget: the model is called and the reply spends the rest.
	user := app.sendHTMX(th.ID, "Anything else?")
	deltas, done := streamReply(t, app, th.ID, user.ID)
	if got, want := strings.Join(deltas, ""), "Fine, one more."; got != want {
		t.Fatalf("deltas=%q, want %q", got, want)
	}
	if !strings.Contains(done.Data, `data-status="complete"`) {
		t.Fatalf("done=%s, want a complete reply", done.Data)
	}
	if got, want := model.Calls(), 1; got != want {
		t.Fatalf("model calls=%d, want %d", got, want)
	}

	// Spent: the next message is answered by the budget, not the model.
	month := time.Now().UTC().Format("January 2006")
	why := fmt.Sprintf("This workspace has used its token budget for %s (1,000,000 of 1,000,000 tokens). Raise BATON_TOKEN_BUDGET or wait until next month.", month)
	user = app.sendHTMX(th.ID, "And another thing?")
	deltas, done = streamReply(t, app, th.ID, user.ID)
	if len(deltas) != 0 {
		t.Fatalf("deltas=%q, want none", deltas)
	}
	reply, err := app.DB.FindReply(ctx, th.ID, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Status != store.StatusFailed || reply.Error != why || reply.Content != "" {
		t.Fatalf("stored Status=%q Error=%q Content=%q, want failed with %q", reply.Status, reply.Error, reply.Content, why)
	}
	retryURL := "/t/" + th.ID + "/messages/" + reply.ID + "/retry"
	checkShown := func(t *testing.T, where, doc string) {
		t.Helper()
		art := findOne(t, parseHTML(t, doc), "article", "id", "msg-"+reply.ID)
		if got, want := attr(art, "data-status"), "failed"; got != want {
			t.Fatalf("%s: data-status=%q, want %q", where, got, want)
		}
		if got := textOf(findOne(t, art, "", "data-testid", "reply-error")); got != why {
			t.Fatalf("%s: reply-error=%q, want %q", where, got, why)
		}
		findOne(t, findOne(t, art, "form", "action", retryURL), "button", "data-testid", "retry")
	}
	checkShown(t, "done event", done.Data)
	_, page := app.get("/t/" + th.ID)
	checkShown(t, "page", page)

	// Retry is refused the same way while the budget stays spent.
	if res, body := app.postForm(retryURL, nil, htmxSameOrigin); res.StatusCode != http.StatusOK {
		t.Fatalf("retry: Status=%d, want %d; body: %s", res.StatusCode, http.StatusOK, body)
	}
	_, done = streamReply(t, app, th.ID, user.ID)
	if !strings.Contains(done.Data, `data-status="failed"`) || !strings.Contains(done.Data, "BATON_TOKEN_BUDGET") {
		t.Fatalf("retried done=%s, want the budget message again", done.Data)
	}

	// The JSON API says the same.
	res, body := app.postJSON("/api/v1/threads/"+th.ID+"/messages", `{"content":"Via the API?"}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("API send: Status=%d, want %d; body: %s", got, want, body)
	}
	sent := decodeJSON[struct {
		Assistant chatMessage `json:"assistant_message"`
	}](t, body)
	if sent.Assistant.Status != "failed" || sent.Assistant.Error != why {
		t.Fatalf("API assistant_message=%+v, want failed with %q", sent.Assistant, why)
	}

	if got, want := model.Calls(), 1; got != want {
		t.Fatalf("model calls=%d, want %d: a spent budget must not reach the model", got, want)
	}
}
