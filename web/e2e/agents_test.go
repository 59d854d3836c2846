package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// agentAPI calls Baton's JSON API as a coding agent does, with a bearer
// token.
type agentAPI struct {
	t     *testing.T
	base  string
	token string
}

// post sends body as JSON to path and decodes the reply into out (when
// set), failing the test unless the status is want.
func (a agentAPI) post(path string, body any, want int, out any) {
	a.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		a.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, a.base+path, bytes.NewReader(b))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	reply, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		a.t.Fatalf("POST %s: status %d, want %d\n%s", path, res.StatusCode, want, reply)
	}
	if out != nil {
		if err := json.Unmarshal(reply, out); err != nil {
			a.t.Fatalf("POST %s: %v\n%s", path, err, reply)
		}
	}
}

// textsOf is JavaScript that lists the text of the elements sel selects.
func textsOf(sel string) string {
	return `Array.from(document.querySelectorAll(` + jsLiteral(sel) + `)).map(e => e.textContent.trim())`
}

func jsLiteral(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestAgentsPage drives /agents as a person watching coding agents work:
// connect an agent (a token, and the setups that carry it), the agent's
// entries and handoffs posted over the JSON API, the feed filtered by type
// and scope and updating by itself, the handoff lists, a handoff's page
// whose snapshot links to its decisions and entries, and acknowledging it
// from there.
func TestAgentsPage(t *testing.T) {
	db := storetest.MustOpen(t)
	srv := web.New(web.Config{DB: db, Provider: slowProvider{Provider: offline.New()}, Extractor: offline.New(),
		Logger: slog.New(slog.DiscardHandler), SessionKey: []byte("0123456789abcdef0123456789abcdef"),
		FeedRefresh: 100 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	ctx := context.Background()
	if _, err := db.SetUp(ctx, store.Setup{
		Owner: store.UserCreate{Email: ownerEmail, Name: "Ana", Password: ownerPassword}, Workspace: "Acme"}); err != nil {
		t.Fatal(err)
	}
	decisions := storetest.SeedDecisionRecords(t, db, []store.DecisionRecordSeed{
		{Content: "Tokens are opaque", Scope: "src/auth"},
		{Content: "Bill monthly", Scope: "src/billing"},
		{Content: "Everything in Go", Scope: "project"},
	})
	b := newBrowser(t)

	// Connect an agent: a token, filled into each setup.
	var claude, codex, codexEnv, cursor, note string
	err := runSteps(t, b,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/agents"),
		chromedp.WaitVisible(`[data-testid="connect-form"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="setup-claude"]`, &claude, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("agents page: %v (page problems: %v)", err, b.problems())
	}
	if !strings.Contains(claude, "<YOUR_TOKEN>") {
		t.Errorf("setup before connecting = %q, want the placeholder", claude)
	}
	err = runSteps(t, b,
		chromedp.SetValue(`#connect-name`, "Claude on Ana's laptop", chromedp.ByQuery),
		chromedp.Click(`[data-testid="connect-submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="connect-token"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="connect-token"]`, &note, chromedp.ByQuery),
		chromedp.Text(`[data-testid="setup-claude"]`, &claude, chromedp.ByQuery),
		chromedp.Text(`[data-testid="setup-codex"]`, &codex, chromedp.ByQuery),
		chromedp.Text(`[data-testid="setup-codex-env"]`, &codexEnv, chromedp.ByQuery),
		chromedp.Text(`[data-testid="setup-cursor"]`, &cursor, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("connect an agent: %v (page problems: %v)", err, b.problems())
	}
	m := regexp.MustCompile(`^claude mcp add --transport http baton (\S+) --header "Authorization: Bearer (baton_\S+)"$`).FindStringSubmatch(claude)
	if m == nil {
		t.Fatalf("Claude Code setup = %q, want claude mcp add … with the new token", claude)
	}
	mcpURL, token := m[1], m[2]
	if mcpURL != ts.URL+"/mcp" {
		t.Errorf("MCP URL = %q, want %q", mcpURL, ts.URL+"/mcp")
	}
	if !strings.Contains(note, "Claude on Ana's laptop") {
		t.Errorf("note after connecting = %q, want the token's name", note)
	}
	if !strings.Contains(codex, `url = "`+mcpURL+`"`) || !strings.Contains(codex, `bearer_token_env_var = "BATON_TOKEN"`) || codexEnv != "export BATON_TOKEN="+token {
		t.Errorf("Codex CLI setup = %q and %q, want the URL and the token in BATON_TOKEN", codex, codexEnv)
	}
	var cursorConfig struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(cursor), &cursorConfig); err != nil {
		t.Fatalf("Cursor setup is not JSON: %v\n%s", err, cursor)
	}
	if s := cursorConfig.MCPServers["baton"]; s.URL != mcpURL || s.Headers["Authorization"] != "Bearer "+token {
		t.Errorf("Cursor setup = %+v, want the URL and the token", s)
	}

	// The agent works with that token: entries and two handoffs, one of
	// which another agent acknowledges.
	api := agentAPI{t: t, base: ts.URL, token: token}
	type entry struct{ ID string }
	var authWarning, billingWarning, billingFinding entry
	api.post("/api/v1/blackboard", map[string]any{"type": "warning", "summary": "Sessions leak on logout", "scope": "src/auth/", "agentId": "claude-code"}, http.StatusCreated, &authWarning)
	api.post("/api/v1/blackboard", map[string]any{"type": "finding", "summary": "Invoices round twice", "scope": "src/billing/", "agentId": "codex"}, http.StatusCreated, &billingFinding)
	api.post("/api/v1/blackboard", map[string]any{"type": "warning", "summary": "Currency is a float", "scope": "src/billing/", "agentId": "codex"}, http.StatusCreated, &billingWarning)
	var login, invoices entry
	api.post("/api/v1/agent-handoffs", map[string]any{"sourceAgent": "claude-code", "targetAgent": "codex", "scope": "src/auth/",
		"summary": "Login refactored", "results": []any{"tests pass", map[string]string{"file": "src/auth/login.go"}}}, http.StatusCreated, &login)
	api.post("/api/v1/agent-handoffs", map[string]any{"sourceAgent": "codex", "scope": "src/billing/",
		"summary": "Invoices exported", "results": []string{"csv done"}}, http.StatusCreated, &invoices)
	api.post("/api/v1/agent-handoffs/"+invoices.ID+"/acknowledge", map[string]any{"by": "cursor"}, http.StatusOK, nil)

	// The lists, and the feed filtered by type, then by type and scope.
	var feed, warnings, authWarnings, pending, acknowledged []string
	var types []string
	err = runSteps(t, b,
		chromedp.Navigate(ts.URL+"/agents"),
		chromedp.WaitVisible(`[data-testid="feed"]`, chromedp.ByQuery),
		chromedp.Evaluate(textsOf(`[data-testid="feed-entry"] a`), &feed),
		chromedp.Evaluate(textsOf(`[data-testid="pending-handoffs"] li`), &pending),
		chromedp.Evaluate(textsOf(`[data-testid="acknowledged-handoffs"] li`), &acknowledged),
		chromedp.SetValue(`[data-testid="feed-filter"] select[name="type"]`, "warning", chromedp.ByQuery),
		chromedp.Click(`[data-testid="feed-filter"] button[type="submit"]`, chromedp.ByQuery),
		// The filtered page, rendered by the server: its option is selected in the HTML.
		chromedp.WaitReady(`[data-testid="feed-filter"] option[value="warning"][selected]`, chromedp.ByQuery),
		chromedp.Evaluate(textsOf(`[data-testid="feed-entry"] a`), &warnings),
		chromedp.SendKeys(`[data-testid="feed-filter"] input[name="scope"]`, "src/auth/login.go", chromedp.ByQuery),
		chromedp.Click(`[data-testid="feed-filter"] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="feed-filter"] input[value="src/auth/login.go"]`, chromedp.ByQuery),
		chromedp.Evaluate(textsOf(`[data-testid="feed-entry"] a`), &authWarnings),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid="feed-entry"]')).map(e => e.dataset.type)`, &types),
	)
	if err != nil {
		t.Fatalf("feed and lists: %v (page problems: %v)", err, b.problems())
	}
	for _, want := range []string{"Sessions leak on logout", "Invoices round twice", "Currency is a float",
		"Handoff created: Login refactored", "Handoff created: Invoices exported"} {
		if !slices.Contains(feed, want) {
			t.Errorf("feed %q lacks %q", feed, want)
		}
	}
	if len(pending) != 1 || !strings.Contains(pending[0], "Login refactored") || !strings.Contains(pending[0], "claude-code → codex") {
		t.Errorf("pending handoffs = %q, want Login refactored, from claude-code to codex", pending)
	}
	if len(acknowledged) != 1 || !strings.Contains(acknowledged[0], "Invoices exported") || !strings.Contains(acknowledged[0], "acknowledged by cursor") {
		t.Errorf("acknowledged handoffs = %q, want Invoices exported, acknowledged by cursor", acknowledged)
	}
	if want := []string{"Currency is a float", "Sessions leak on logout"}; !slices.Equal(warnings, want) {
		t.Errorf("feed of warnings = %q, want %q (newest first)", warnings, want)
	}
	if want := []string{"Sessions leak on logout"}; !slices.Equal(authWarnings, want) || !slices.Equal(types, []string{"warning"}) {
		t.Errorf("feed of warnings for src/auth/login.go = %q (%q), want %q", authWarnings, types, want)
	}

	// Live: what agents post shows up in the open, filtered feed by itself;
	// what the filter leaves out does not. The finding goes first, so it
	// would be there by the time the warning is.
	api.post("/api/v1/blackboard", map[string]any{"type": "finding", "summary": "Cookies lack SameSite", "scope": "src/auth/", "agentId": "codex"}, http.StatusCreated, nil)
	api.post("/api/v1/blackboard", map[string]any{"type": "warning", "summary": "Token refresh races", "scope": "src/auth/", "agentId": "codex"}, http.StatusCreated, nil)
	var arrived bool
	var live []string
	var scopeKept string
	err = runSteps(t, b,
		chromedp.Poll(`Array.from(document.querySelectorAll('[data-testid="feed-entry"] a')).some(a => a.textContent.trim() === "Token refresh races")`,
			&arrived, chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.Evaluate(textsOf(`[data-testid="feed-entry"] a`), &live),
		chromedp.Value(`[data-testid="feed-filter"] input[name="scope"]`, &scopeKept, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("live feed: %v (page problems: %v)", err, b.problems())
	}
	if want := []string{"Token refresh races", "Sessions leak on logout"}; !slices.Equal(live, want) {
		t.Errorf("live feed = %q, want %q", live, want)
	}
	if scopeKept != "src/auth/login.go" {
		t.Errorf("scope filter after the feed refreshed = %q, want it kept", scopeKept)
	}

	// The handoff's page: results, and a snapshot whose IDs link to the
	// decision records and entries they name.
	var summary, results, status string
	var decisionLinks, warningLinks []string
	var findings int
	err = runSteps(t, b,
		chromedp.Navigate(ts.URL+"/agents"),
		chromedp.Click(`[data-testid="pending-handoffs"] a`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="handoff-summary"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="handoff-summary"]`, &summary, chromedp.ByQuery),
		chromedp.Text(`[data-testid="handoff-status"]`, &status, chromedp.ByQuery),
		chromedp.Text(`[data-testid="handoff-results"]`, &results, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid="snapshot-decisions"] a')).map(a => a.getAttribute("href") + " " + a.textContent.trim())`, &decisionLinks),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid="snapshot-warnings"] a')).map(a => a.getAttribute("href") + " " + a.textContent.trim())`, &warningLinks),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="snapshot-findings"] a').length`, &findings),
	)
	if err != nil {
		t.Fatalf("handoff page: %v (page problems: %v)", err, b.problems())
	}
	if summary != "Login refactored" || status != "pending" {
		t.Errorf("handoff page: summary %q, status %q; want Login refactored, pending", summary, status)
	}
	if !strings.Contains(results, `"tests pass"`) || !strings.Contains(results, `"file": "src/auth/login.go"`) {
		t.Errorf("results = %q, want both results", results)
	}
	// Newest first: "Everything in Go" (project) was recorded after "Tokens are opaque".
	if want := []string{"/decisions/" + decisions[2] + " " + decisions[2], "/decisions/" + decisions[0] + " " + decisions[0]}; !slices.Equal(decisionLinks, want) {
		t.Errorf("snapshot decisions = %q, want %q", decisionLinks, want)
	}
	if want := []string{"/agents/entries/" + authWarning.ID + " " + authWarning.ID}; !slices.Equal(warningLinks, want) {
		t.Errorf("snapshot warnings = %q, want %q", warningLinks, want)
	}
	if findings != 0 {
		t.Errorf("snapshot lists %d findings, want none in src/auth/ when the handoff was made", findings)
	}

	handoffURL := ts.URL + "/agents/handoffs/" + login.ID
	var decisionContent, entrySummary, entryType string
	err = runSteps(t, b,
		chromedp.Click(`[data-testid="snapshot-decisions"] li:last-child a`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="record-content"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="record-content"]`, &decisionContent, chromedp.ByQuery),
		chromedp.Navigate(handoffURL),
		chromedp.Click(`[data-testid="snapshot-warnings"] a`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="entry-type"]`, chromedp.ByQuery),
		chromedp.Text(`h1`, &entrySummary, chromedp.ByQuery),
		chromedp.Text(`[data-testid="entry-type"]`, &entryType, chromedp.ByQuery),
		chromedp.Navigate(handoffURL),
		chromedp.WaitVisible(`[data-testid="acknowledge-form"]`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("snapshot links: %v (page problems: %v)", err, b.problems())
	}
	if decisionContent != "Tokens are opaque" {
		t.Errorf("decision linked from the snapshot = %q, want Tokens are opaque", decisionContent)
	}
	if entrySummary != "Sessions leak on logout" || entryType != "warning" {
		t.Errorf("entry linked from the snapshot = %q (%s), want the warning Sessions leak on logout", entrySummary, entryType)
	}

	// Acknowledge from the page.
	var ackText, flash string
	var forms int
	var csp []string
	err = runSteps(t, b,
		chromedp.SendKeys(`[data-testid="acknowledge-form"] input[name="by"]`, "Ana", chromedp.ByQuery),
		chromedp.Click(`[data-testid="acknowledge-form"] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="handoff-acknowledged"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="handoff-acknowledged"]`, &ackText, chromedp.ByQuery),
		chromedp.Text(`[data-testid="handoff-status"]`, &status, chromedp.ByQuery),
		chromedp.Text(`#flash`, &flash, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="acknowledge-form"]').length`, &forms),
		chromedp.Navigate(ts.URL+"/agents"),
		chromedp.WaitVisible(`[data-testid="acknowledged-handoffs"]`, chromedp.ByQuery),
		chromedp.Evaluate(textsOf(`[data-testid="pending-handoffs"] li`), &pending),
		chromedp.Evaluate(textsOf(`[data-testid="acknowledged-handoffs"] li`), &acknowledged),
		chromedp.Evaluate(`window.__csp`, &csp),
	)
	if err != nil {
		t.Fatalf("acknowledge: %v (page problems: %v)", err, b.problems())
	}
	got, err := db.FindAgentHandoffByID(ctx, "", login.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "by Ana, " + got.AcknowledgedAt.Format("Jan 2, 2006 15:04"); ackText != want || status != "acknowledged" {
		t.Errorf("after acknowledging: %q, status %q; want %q, acknowledged", ackText, status, want)
	}
	if flash != "Handoff acknowledged." || forms != 0 {
		t.Errorf("after acknowledging: flash %q and %d acknowledge forms, want Handoff acknowledged. and none", flash, forms)
	}
	// Newest first, as created: Invoices exported, then Login refactored.
	if len(pending) != 0 || len(acknowledged) != 2 || !strings.Contains(acknowledged[1], "Login refactored") || !strings.Contains(acknowledged[1], "acknowledged by Ana") {
		t.Errorf("lists after acknowledging: pending %q, acknowledged %q; want none pending, and Login refactored acknowledged by Ana", pending, acknowledged)
	}
	if len(csp) > 0 {
		t.Errorf("CSP violations: %v", csp)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("page problems: %v", p)
	}
}
