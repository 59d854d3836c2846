package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/store"
)

// TestReviewFlow pins a reply, runs "Ready to plan", edits a decision with
// Enter, cancels another edit with Escape, removes an item, starts
// planning and reads the rendered plan, as a person would.
func TestReviewFlow(t *testing.T) {
	ts, db := newServer(t)
	ctx := context.Background()
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: "Orders database"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser,
		Content: "Let's go with Postgres for orders, schema in `db/schema.sql`. I'm worried about migration downtime."})
	if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, ReplyTo: u.ID,
		Content: "Use Postgres 16 with pgx, and run migrations with goose before each deploy."}); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t)
	const firstContent = `document.querySelector('[data-testid="decision"] [data-testid="content"]').textContent`
	var pins, decisionsBefore, decisionsAfter, countAfter string
	var url, edited, source, focused, afterEscape, beforeEscape, status string
	var csp []string
	var coverage string
	var tables int
	err = runSteps(t, b,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/t/"+th.ID),
		chromedp.WaitVisible(`article[data-testid="msg-assistant"]`, chromedp.ByQuery),
		chromedp.Click(`article[data-testid="msg-assistant"] [data-testid="pin"]`, chromedp.ByQuery),
		// Pin opens the editor on the reply's first sentence; Enter pins it.
		chromedp.WaitVisible(`[data-testid="pin-editor-input"]`, chromedp.ByQuery),
		pressEnter(),
		chromedp.WaitVisible(`article[data-testid="msg-assistant"] [data-testid="unpin"]`, chromedp.ByQuery),
		chromedp.Text(`#pin-count`, &pins, chromedp.ByQuery),
		chromedp.Click(`[data-testid="ready-to-plan"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="decisions"]`, chromedp.ByQuery),
		chromedp.Location(&url),
		chromedp.Text(`#count-decisions`, &decisionsBefore, chromedp.ByQuery),

		// Edit the first decision; Enter saves.
		chromedp.Click(`[data-testid="decision"] [data-testid="edit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="edit-input"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("[data-testid=edit-input]").value = ""`, nil),
		chromedp.SendKeys(`[data-testid="edit-input"]`, "Postgres 16 for orders, migrations with goose", chromedp.ByQuery),
		pressEnter(),
		chromedp.WaitNotPresent(`[data-testid="edit-input"]`, chromedp.ByQuery),
		chromedp.Evaluate(firstContent, &edited),
		chromedp.Text(`[data-testid="decision"] [data-testid="source"]`, &source, chromedp.ByQuery),
		chromedp.Sleep(100*time.Millisecond),
		chromedp.Evaluate(`document.activeElement.getAttribute("data-testid") + "@" + document.activeElement.closest("li").id`, &focused),

		// Edit again, then Escape: nothing changes.
		chromedp.Evaluate(firstContent, &beforeEscape),
		chromedp.Click(`[data-testid="decision"] [data-testid="edit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="edit-input"]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-testid="edit-input"]`, " and something else", chromedp.ByQuery),
		chromedp.KeyEvent("\x1b"),
		chromedp.WaitNotPresent(`[data-testid="edit-input"]`, chromedp.ByQuery),
		chromedp.Evaluate(firstContent, &afterEscape),

		// Remove the last decision.
		chromedp.Evaluate(`(() => { const all = document.querySelectorAll('[data-testid="decision"]'); all[all.length-1].querySelector('[data-testid="remove"]').click(); return true })()`, nil),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.Evaluate(`String(document.querySelectorAll('[data-testid="decision"]').length)`, &decisionsAfter),
		chromedp.Text(`#count-decisions`, &countAfter, chromedp.ByQuery),

		// Start planning freezes a snapshot and opens the plan, rendered.
		chromedp.Click(`[data-testid="start-planning"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="plan-body"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="plan-status"]`, &status, chromedp.ByQuery),
		chromedp.Text(`[data-testid="coverage-text"]`, &coverage, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="plan-markdown"] table').length`, &tables),
		chromedp.Evaluate(`window.__csp`, &csp),
	)
	if err != nil {
		t.Fatalf("browser: %v (page problems: %v)", err, b.problems())
	}
	if pins != "1" {
		t.Errorf("pin count=%q after pinning, want 1", pins)
	}
	if !strings.Contains(url, "/h/") {
		t.Errorf("after extraction the page is %s, want the review screen /h/…", url)
	}
	if edited != "Postgres 16 for orders, migrations with goose" || source != "EDITED" {
		t.Errorf("after Enter: content=%q source=%q, want the new text, EDITED", edited, source)
	}
	if !strings.HasPrefix(focused, "edit@item-") {
		t.Errorf("focus after saving is on %q, want the item's Edit button", focused)
	}
	if afterEscape != beforeEscape {
		t.Errorf("after Escape content=%q, want it unchanged (%q)", afterEscape, beforeEscape)
	}
	var before, after int
	if _, err := fmt.Sscan(decisionsBefore, &before); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(decisionsAfter, &after); err != nil {
		t.Fatal(err)
	}
	if before < 2 || after != before-1 || countAfter != decisionsAfter {
		t.Errorf("decisions: %d before removing, %d after (count shows %s), want one fewer and the count to match", before, after, countAfter)
	}
	if status != "complete" {
		t.Errorf("plan status=%q, want complete", status)
	}
	if want := fmt.Sprintf("covers %d of %d decisions", after, after); coverage != want {
		t.Errorf("coverage=%q, want %q", coverage, want)
	}
	if tables < 1 {
		t.Errorf("the rendered plan has no table, want its files table")
	}
	if len(csp) > 0 {
		t.Errorf("CSP violations: %v", csp)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("page problems: %v", p)
	}
}

// runSteps runs actions one by one, so that a failure names its step.
func runSteps(t *testing.T, b *browser, actions ...chromedp.Action) error {
	t.Helper()
	for i, a := range actions {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		err := chromedp.Run(ctx, a)
		cancel()
		if err != nil {
			if dir := os.Getenv("BATON_E2E_SHOTS"); dir != "" {
				var png []byte
				if chromedp.Run(b.ctx, chromedp.CaptureScreenshot(&png)) == nil {
					os.WriteFile(filepath.Join(dir, t.Name()+".png"), png, 0o644)
				}
			}
			return fmt.Errorf("step %d (%T): %w", i+1, a, err)
		}
	}
	return nil
}
