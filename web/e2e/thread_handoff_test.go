package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// TestThreadHandoffFlow types /handoff in the composer, watches the
// preview replace the progress, edits the title and summary, accepts, and
// lands on the child thread whose opening card shows the summary.
func TestThreadHandoffFlow(t *testing.T) {
	db := storetest.MustOpen(t)
	srv := web.New(web.Config{DB: db, Provider: slowProvider{Provider: offline.New()}, Extractor: offline.New(),
		Summariser: agent.RuleSummariser, Logger: slog.New(slog.DiscardHandler),
		SessionKey: []byte("0123456789abcdef0123456789abcdef")})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	ctx := context.Background()
	if _, err := db.SetUp(ctx, store.Setup{
		Owner: store.UserCreate{Email: ownerEmail, Name: "Ana", Password: ownerPassword}, Workspace: "Acme"}); err != nil {
		t.Fatal(err)
	}
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: "Caching"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		u, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser,
			Content: fmt.Sprintf("Step %d: should the cache live in `web/cache.go`?", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, ReplyTo: u.ID,
			Content: "Let's go with an LRU of 1,024 items."}); err != nil {
			t.Fatal(err)
		}
	}

	b := newBrowser(t)
	var title, card, from, summary, meta string
	var csp []string
	err = chromedp.Run(b.ctx,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/t/"+th.ID),
		chromedp.WaitVisible(`#content`, chromedp.ByQuery),
		chromedp.SendKeys(`#content`, "/handoff plan the eviction", chromedp.ByQuery),
		pressEnter(),
		chromedp.WaitVisible(`[data-testid="handoff-preview"]`, chromedp.ByQuery),
		chromedp.Value(`[data-testid="handoff-summary"]`, &summary, chromedp.ByQuery),
		chromedp.Text(`[data-testid="handoff-meta"]`, &meta, chromedp.ByQuery),
		chromedp.SetValue(`[data-testid="handoff-title"]`, "Eviction plan", chromedp.ByQuery),
		chromedp.SetValue(`[data-testid="handoff-summary"]`, "**Decided** an LRU with 1,024 items.", chromedp.ByQuery),
		chromedp.Click(`[data-testid="handoff-accept"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="handoff-card"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="thread-title"]`, &title, chromedp.ByQuery),
		chromedp.Text(`[data-testid="handoff-card-summary"]`, &card, chromedp.ByQuery),
		chromedp.AttributeValue(`[data-testid="continued-from"]`, "href", &from, nil, chromedp.ByQuery),
		chromedp.Evaluate(`window.__csp`, &csp),
	)
	if err != nil {
		t.Fatalf("browser: %v (page problems: %v)", err, b.problems())
	}
	if !strings.Contains(summary, "**Next step**\n- plan the eviction") {
		t.Errorf("preview summary = %q, want the goal as the next step", summary)
	}
	if !strings.Contains(meta, "offline-rules") || !strings.Contains(meta, "handoff ") {
		t.Errorf("preview meta = %q, want the handoff ID and the model", meta)
	}
	if title != "Eviction plan" {
		t.Errorf("child title = %q, want the edited one", title)
	}
	if !strings.Contains(card, "Decided an LRU with 1,024 items.") {
		t.Errorf("opening card = %q, want the edited summary", card)
	}
	if from != "/t/"+th.ID {
		t.Errorf("continued from %q, want /t/%s", from, th.ID)
	}
	if len(csp) > 0 {
		t.Errorf("CSP violations: %v", csp)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("page problems: %v", p)
	}
	if msgs, _ := db.FindMessages(ctx, store.MessageFilter{ThreadID: th.ID}); len(msgs) != 12 {
		t.Errorf("parent has %d messages, want 12: /handoff is not a message", len(msgs))
	}
}
