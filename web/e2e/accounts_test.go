package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/agent/offline"
)

// TestAccountsFlow walks a team's first day: set-up, sign out, sign in,
// invite a viewer, who joins through the link, reads the brainstorm and
// has no way to edit it (and the server refuses an edit anyway).
func TestAccountsFlow(t *testing.T) {
	ts, _ := newBareServer(t, slowProvider{Provider: offline.New()})
	b := newBrowser(t)
	signOut := chromedp.Tasks{
		chromedp.Click(`[data-testid="user-name"]`, chromedp.ByQuery),
		chromedp.Click(`[data-testid="sign-out"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="login-form"]`, chromedp.ByQuery),
	}
	var setupURL, ownerName, inviteURL, viewerName, title string
	var composers, newThreadForms, pins int
	var status float64
	var csp []string
	err := runSteps(t, b,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(`[data-testid="setup-form"]`, chromedp.ByQuery),
		chromedp.Location(&setupURL),
		chromedp.SendKeys(`#name`, "Ana", chromedp.ByQuery),
		chromedp.SendKeys(`#email`, ownerEmail, chromedp.ByQuery),
		chromedp.SendKeys(`#password`, ownerPassword, chromedp.ByQuery),
		chromedp.SendKeys(`#workspace`, "Acme", chromedp.ByQuery),
		chromedp.Click(`[data-testid="setup-submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="user-name"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="user-name"]`, &ownerName, chromedp.ByQuery),
		chromedp.SendKeys(`#title`, "Roadmap", chromedp.ByQuery),
		chromedp.Click(`[data-testid="new-brainstorm"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#composer`, chromedp.ByQuery),

		signOut,
		signIn(ts.URL, ownerEmail, ownerPassword),

		chromedp.Navigate(ts.URL+"/members"),
		chromedp.WaitVisible(`[data-testid="invite-form"]`, chromedp.ByQuery),
		chromedp.SetValue(`#invite-role`, "viewer", chromedp.ByQuery),
		chromedp.Click(`[data-testid="invite-create"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="invite-link"] input`, chromedp.ByQuery),
		chromedp.Value(`[data-testid="invite-link"] input`, &inviteURL, chromedp.ByQuery),
		signOut,
	)
	if err != nil {
		t.Fatalf("owner: %v (page problems: %v)", err, b.problems())
	}
	if !strings.HasSuffix(setupURL, "/setup") || ownerName != "Ana" || !strings.Contains(inviteURL, "/invite/") {
		t.Fatalf("set-up at %q, signed in as %q, invite %q", setupURL, ownerName, inviteURL)
	}

	const editStatus = `fetch("/threads", {method: "POST", headers: {"X-CSRF-Token": JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRF-Token"]}}).then(r => r.status)`
	err = runSteps(t, b,
		chromedp.Navigate(inviteURL),
		chromedp.WaitVisible(`[data-testid="invite-signup"]`, chromedp.ByQuery),
		chromedp.SendKeys(`#name`, "Vic", chromedp.ByQuery),
		chromedp.SendKeys(`#email`, "vic@example.com", chromedp.ByQuery),
		chromedp.SendKeys(`#password`, "another long password", chromedp.ByQuery),
		chromedp.Click(`[data-testid="invite-signup"] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="user-name"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="user-name"]`, &viewerName, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="new-thread"]').length`, &newThreadForms),
		chromedp.Click(`ul.threads a`, chromedp.ByQuery),
		chromedp.WaitVisible(`h1`, chromedp.ByQuery),
		chromedp.Text(`h1`, &title, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#composer').length`, &composers),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="pin"]').length`, &pins),
		chromedp.Evaluate(`window.__csp`, &csp),
	)
	if err != nil {
		t.Fatalf("viewer: %v (page problems: %v)", err, b.problems())
	}
	problems := b.problems() // the refused edit below logs its 403
	if err := runSteps(t, b, chromedp.Evaluate(editStatus, &status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })); err != nil {
		t.Fatalf("viewer's edit: %v", err)
	}
	if viewerName != "Vic" {
		t.Errorf("signed in as %q after joining, want Vic", viewerName)
	}
	if !strings.Contains(title, "Roadmap") {
		t.Errorf("the viewer opened %q, want the Roadmap brainstorm", title)
	}
	if composers != 0 || newThreadForms != 0 || pins != 0 {
		t.Errorf("the viewer sees %d composers, %d new-brainstorm forms, %d pin buttons; want none", composers, newThreadForms, pins)
	}
	if status != 403 {
		t.Errorf("a viewer's POST /threads answered %v, want 403", status)
	}
	if len(csp) > 0 {
		t.Errorf("CSP violations: %v", csp)
	}
	if len(problems) > 0 {
		t.Errorf("page problems: %v", problems)
	}
}
