package e2e

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// newReviewServer serves a handoff with three decisions, a file, a risk
// and a summary. Its live streams end at cleanup.
func newReviewServer(t *testing.T) (*httptest.Server, *store.DB, *store.Handoff) {
	t.Helper()
	db := storetest.MustOpen(t)
	srv := web.New(web.Config{DB: db, Provider: offline.New(), Extractor: offline.New(),
		Logger: slog.New(slog.DiscardHandler), SessionKey: []byte("0123456789abcdef0123456789abcdef")})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	if _, err := db.SetUp(context.Background(), store.Setup{
		Owner: store.UserCreate{Email: ownerEmail, Name: "Ana", Password: ownerPassword}, Workspace: "Acme"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AddUser(context.Background(), store.UserAdd{
		User: store.UserCreate{Email: boEmail, Name: "Bo", Password: ownerPassword}, Workspace: "Acme", Role: store.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	h := storetest.NewHandoff(t, db, storetest.Items{Title: "Orders database",
		Decisions: storetest.Decisions("Use Postgres 16 for orders.", "Run migrations with goose.", "Deploy on Fridays."),
		Files:     []store.FileRefInput{{Path: "db/schema.sql"}},
		Risks:     []store.RiskInput{{Description: "Migration downtime"}},
		Summary:   "Orders move to Postgres."})
	h, err := db.FindHandoffByID(context.Background(), h.ID)
	if err != nil {
		t.Fatal(err)
	}
	return ts, db, h
}

// boEmail is the second member of newReviewServer's workspace, a viewer.
const boEmail = "bo@example.com"

// jsClick waits for the element to be visible, then clicks it from the
// page's own JavaScript, which finds the node at the moment of the click:
// a live refresh may replace an element between chromedp finding a node
// and clicking it.
func jsClick(sel string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.WaitVisible(sel, chromedp.ByQuery),
		waitJS(`(() => { const el = document.querySelector(` + strconv.Quote(sel) + `); if (!el) return false; el.click(); return true; })()`),
	}
}

// waitJS polls a JavaScript condition until it is true.
func waitJS(expr string) chromedp.Action {
	return chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(8*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
}

// TestTwoReviewersLive has two people (two browsers) on one handoff: Ana
// edits a decision and comments, Bo sees both arrive live while his own
// comment draft stays as he typed it, and approves; Ana sees the approval.
func TestTwoReviewersLive(t *testing.T) {
	ts, db, h := newReviewServer(t)
	ana, bo := newBrowser(t), newBrowser(t)
	page := ts.URL + "/h/" + h.ID
	d1, d2 := h.Decisions[0], h.Decisions[1]
	item := func(id string) string { return "#item-" + id }

	for b, email := range map[*browser]string{ana: ownerEmail, bo: boEmail} {
		if err := runSteps(t, b, signIn(ts.URL, email, ownerPassword), chromedp.Navigate(page), chromedp.WaitVisible(`[data-testid="decisions"]`, chromedp.ByQuery)); err != nil {
			t.Fatalf("open: %v", err)
		}
	}
	const draft = "Bo's draft: what about rollbacks?"
	var boDraft, boD1, boCount, anaReviews, boViewers string
	var csp []string
	// Bo starts a comment on D2 and leaves it unsent.
	err := runSteps(t, bo,
		waitJS(`document.querySelector("#viewers").textContent.includes("Ana")`),
		chromedp.Text(`#viewers`, &boViewers, chromedp.ByQuery),
		jsClick(item(d2.ID)+` [data-testid="comment-count"]`),
		chromedp.WaitVisible(item(d2.ID)+` [data-testid="comment-input"]`, chromedp.ByQuery),
		chromedp.SendKeys(item(d2.ID)+` [data-testid="comment-input"]`, draft, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("Bo: %v (problems %v)", err, bo.problems())
	}
	// Ana edits D1 and comments on it.
	err = runSteps(t, ana,
		jsClick(item(d1.ID)+` [data-testid="edit"]`),
		chromedp.WaitVisible(`[data-testid="edit-input"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("[data-testid=edit-input]").value = ""`, nil),
		chromedp.SendKeys(`[data-testid="edit-input"]`, "Use Postgres 16 with pgx for orders.", chromedp.ByQuery),
		pressEnter(),
		chromedp.WaitNotPresent(`[data-testid="edit-input"]`, chromedp.ByQuery),
		// Ana's own page refreshes after her edit too; act once it has.
		waitJS(`document.body.hasAttribute("data-live-applied")`),
	)
	if err != nil {
		t.Fatalf("Ana edits: %v (problems %v)", err, ana.problems())
	}
	err = runSteps(t, bo,
		waitJS(`document.querySelector("`+item(d1.ID)+` [data-testid=content]").textContent.includes("pgx")`),
		chromedp.Text(item(d1.ID)+` [data-testid="content"]`, &boD1, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("Bo never saw Ana's edit: %v (problems %v)", err, bo.problems())
	}
	err = runSteps(t, ana,
		jsClick(item(d1.ID)+` [data-testid="comment-count"]`),
		chromedp.WaitVisible(item(d1.ID)+` [data-testid="comment-input"]`, chromedp.ByQuery),
		chromedp.SendKeys(item(d1.ID)+` [data-testid="comment-input"]`, "pgx gives us **COPY**.", chromedp.ByQuery),
		jsClick(item(d1.ID)+` [data-testid="comment-submit"]`),
		chromedp.WaitVisible(item(d1.ID)+` [data-testid="comment-body"]`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("Ana comments: %v (problems %v)", err, ana.problems())
	}
	err = runSteps(t, bo,
		waitJS(`document.querySelector("`+item(d1.ID)+` [data-testid=comment-count]").textContent.includes("1 comment")`),
		chromedp.Text(item(d1.ID)+` [data-testid="comment-count"]`, &boCount, chromedp.ByQuery),
		chromedp.Value(item(d2.ID)+` [data-testid="comment-input"]`, &boDraft, chromedp.ByQuery),
		// Bo approves.
		jsClick(`[data-testid="review-submit"]`),
		chromedp.WaitVisible(`[data-testid="reviewer"][data-state="approved"]`, chromedp.ByQuery),
		chromedp.Evaluate(`window.__csp`, &csp),
	)
	if err != nil {
		t.Fatalf("Bo: %v (problems %v)", err, bo.problems())
	}
	err = runSteps(t, ana,
		waitJS(`document.querySelector('[data-testid="reviewer"][data-state="approved"]') !== null`),
		chromedp.Text(`#reviews`, &anaReviews, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("Ana never saw the approval: %v (problems %v)", err, ana.problems())
	}
	if !strings.Contains(boD1, "pgx") {
		t.Errorf("Bo's D1=%q, want Ana's edit", boD1)
	}
	if boDraft != draft {
		t.Errorf("Bo's draft=%q after live updates, want %q", boDraft, draft)
	}
	if !strings.Contains(anaReviews, "approved") {
		t.Errorf("Ana's reviews: %q", anaReviews)
	}
	if !strings.Contains(boViewers, "Ana") {
		t.Errorf("Bo's viewers=%q, want the other page", boViewers)
	}
	if len(csp) > 0 {
		t.Errorf("CSP violations: %v", csp)
	}
	for _, b := range []*browser{ana, bo} {
		if p := b.problems(); len(p) > 0 {
			t.Errorf("page problems: %v", p)
		}
	}
	states, err := db.FindReviewerStates(context.Background(), h.ID)
	if err != nil || len(states) != 1 || states[0].State != store.ReviewApproved {
		t.Errorf("stored reviews %v, %v", states, err)
	}
}

// TestGuestCommentsThroughReviewLink opens a review link in a fresh
// browser profile and comments as a guest.
func TestGuestCommentsThroughReviewLink(t *testing.T) {
	ts, db, h := newReviewServer(t)
	_, token, err := db.CreateShareLink(context.Background(), store.ShareCreate{HandoffID: h.ID, Mode: store.ShareReview, ExpiresIn: "7d", By: store.Actor{Name: "You"}})
	if err != nil {
		t.Fatal(err)
	}
	guest := newBrowser(t)
	var author, tag, links string
	var csp []string
	err = runSteps(t, guest,
		chromedp.Navigate(ts.URL+"/s/"+token),
		chromedp.WaitVisible(`[data-testid="share-page"]`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href")).filter(h => h.startsWith("/")).join(" ")`, &links),
		chromedp.Click(`#item-`+h.Risks[0].ID+` [data-testid="comment-count"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="guest-name"]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-testid="guest-name"]`, "Gail", chromedp.ByQuery),
		chromedp.SendKeys(`[data-testid="comment-input"]`, "Plan a maintenance window.", chromedp.ByQuery),
		chromedp.Click(`[data-testid="comment-submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="guest-tag"]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid="comment-author"]`, &author, chromedp.ByQuery),
		chromedp.Text(`[data-testid="guest-tag"]`, &tag, chromedp.ByQuery),
		chromedp.Evaluate(`window.__csp`, &csp),
	)
	if err != nil {
		t.Fatalf("guest: %v (problems %v)", err, guest.problems())
	}
	if author != "Gail" || tag != "guest" {
		t.Errorf("comment by %q (%q), want Gail, guest", author, tag)
	}
	if links != "" {
		t.Errorf("the share page links to member pages: %s", links)
	}
	if len(csp) > 0 {
		t.Errorf("CSP violations: %v", csp)
	}
	if p := guest.problems(); len(p) > 0 {
		t.Errorf("page problems: %v", p)
	}
	threads, _ := db.FindComments(context.Background(), store.CommentFilter{HandoffID: h.ID})
	if len(threads) != 1 || !threads[0].Author.Guest || threads[0].Author.Name != "Gail" || threads[0].Anchor.ID != h.Risks[0].ID {
		t.Errorf("stored %+v, want Gail's guest comment on the risk", threads)
	}
}
