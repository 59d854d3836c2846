package web_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/web"
)

// reviewApp is a server with a planned handoff: decisions, a file, a
// risk, a summary and a finished plan with sections.
type reviewApp struct {
	*testApp
	model *planModel
	s     planSetup
	h     *store.Handoff
	plan  apiPlan
	other *store.Handoff // another handoff, for anchors that do not belong
}

func newReviewApp(t *testing.T) reviewApp {
	t.Helper()
	model := newPlanModel()
	app := newAppWith(t, web.Config{Provider: model, ModelRate: 100, ShareRate: 1000})
	s := newPlanSetup(t, app)
	plan := app.postPlan(s.handoffID)
	o := newPlanSetupOf(t, app, "Something else entirely.")
	return reviewApp{testApp: app, model: model, s: s, h: app.handoff(s.handoffID), plan: plan, other: app.handoff(o.handoffID)}
}

func (a reviewApp) comments(handoffID string) []*store.Comment {
	a.t.Helper()
	cs, err := a.DB.FindComments(context.Background(), store.CommentFilter{HandoffID: handoffID})
	if err != nil {
		a.t.Fatal(err)
	}
	return cs
}

func TestReviewPageComments(t *testing.T) {
	app := newReviewApp(t)
	h := app.h
	d2 := h.Decisions[1]
	base := "/h/" + h.ID

	// The review screen has a comment button on every item and the summary.
	_, body := app.get(base)
	doc := parseHTML(t, body)
	if got, want := len(findAll(doc, "button", "data-testid", "comment-count")), 3+1+1+1+1; got != want {
		t.Errorf("%d comment buttons, want %d (3 decisions, file, risk, summary, discussion)", got, want)
	}
	for _, id := range []string{"reviews", "overview", "activity", "shares", "viewers"} {
		if byID(doc, id) == nil {
			t.Errorf("review screen has no #%s", id)
		}
	}

	// Opening a thread, then commenting through it, as htmx does.
	q := "kind=decision&id=" + d2.ID
	res, body := app.do(app.newRequest(http.MethodGet, base+"/comments?"+q, nil, htmxSameOrigin))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="comment-input"`) {
		t.Fatalf("thread: Status=%d, body %s", res.StatusCode, body)
	}
	form := url.Values{"kind": {"decision"}, "id": {d2.ID}, "body": {"Why **stream**? <script>x</script>"}}
	res, body = app.postForm(base+"/comments", form, htmxSameOrigin)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("comment: Status=%d, body %s", res.StatusCode, body)
	}
	if !strings.Contains(body, "<strong>stream</strong>") || strings.Contains(body, "<script>") {
		t.Errorf("comment body not rendered as sanitised markdown: %s", body)
	}
	if !strings.Contains(body, `data-testid="comment-author">Ana<`) {
		t.Errorf("author is not the signed-in owner Ana: %s", body)
	}

	// Bad input: 422 with a message, nothing stored.
	for _, tt := range []struct {
		name string
		form url.Values
	}{
		{"empty", url.Values{"kind": {"decision"}, "id": {d2.ID}, "body": {"  "}}},
		{"too long", url.Values{"kind": {"decision"}, "id": {d2.ID}, "body": {strings.Repeat("x", 10001)}}},
		{"other handoff's decision", url.Values{"kind": {"decision"}, "id": {app.other.Decisions[0].ID}, "body": {"x"}}},
		{"unknown kind", url.Values{"kind": {"line"}, "body": {"x"}}},
	} {
		res, body := app.postForm(base+"/comments", tt.form, htmxSameOrigin)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "error-message") {
			t.Errorf("%s: Status=%d, want 422 with a message; body %s", tt.name, res.StatusCode, body)
		}
	}
	if got := len(app.comments(h.ID)); got != 1 {
		t.Fatalf("%d threads stored, want 1", got)
	}
	c := app.comments(h.ID)[0]

	// Reply, resolve, reopen, edit, delete.
	for _, step := range []struct {
		path string
		form url.Values
		want int
	}{
		{"/comments/" + c.ID + "/replies", url.Values{"body": {"Memory."}}, http.StatusCreated},
		{"/comments/" + c.ID + "/resolve", nil, http.StatusOK},
		{"/comments/" + c.ID + "/reopen", nil, http.StatusOK},
		{"/comments/" + c.ID + "/edit", url.Values{"body": {"Why stream rows?"}}, http.StatusOK},
		{"/comments/nope/resolve", nil, http.StatusNotFound},
	} {
		if res, body := app.postForm(base+step.path, step.form, htmxSameOrigin); res.StatusCode != step.want {
			t.Errorf("POST %s: Status=%d, want %d; body %s", step.path, res.StatusCode, step.want, body)
		}
	}
	got := app.comments(h.ID)[0]
	if got.Resolved() || got.Body != "Why stream rows?" || len(got.Replies) != 1 {
		t.Errorf("thread %+v, want open, edited, with one reply", got)
	}
	// A comment of this handoff under another handoff's route is not found.
	if res, _ := app.postForm("/h/"+app.other.ID+"/comments/"+c.ID+"/resolve", nil, htmxSameOrigin); res.StatusCode != http.StatusNotFound {
		t.Errorf("resolve through another handoff: Status=%d, want 404", res.StatusCode)
	}

	// The page now counts it, lists it in the overview and the timeline.
	_, body = app.get(base)
	doc = parseHTML(t, body)
	btn := byID(doc, "ccount-decision-"+d2.ID)
	if btn == nil || !strings.Contains(textOf(btn), "2 comments") {
		t.Errorf("count button of D2: %v", btn)
	}
	if items := findAll(doc, "li", "data-testid", "overview-item"); len(items) != 1 || !strings.Contains(textOf(items[0]), "D2") {
		t.Errorf("overview has %d items, want D2's thread", len(items))
	}
	if !strings.Contains(textOf(byID(doc, "activity")), "commented on D2") {
		t.Errorf("activity lacks the comment: %s", textOf(byID(doc, "activity")))
	}

	if res, _ := app.postForm(base+"/comments/"+c.ID+"/delete", nil, htmxSameOrigin); res.StatusCode != http.StatusOK {
		t.Errorf("delete: Status=%d", res.StatusCode)
	}
	if got := len(app.comments(h.ID)); got != 0 {
		t.Errorf("%d threads after delete, want 0", got)
	}
}

func TestReviewsWarnBeforePlanning(t *testing.T) {
	app := newReviewApp(t)
	base := "/h/" + app.h.ID
	// An edit unfreezes the handoff, so that "Start planning" shows.
	if _, _, err := app.DB.CreateDecision(context.Background(), app.h.ID, store.DecisionCreate{Content: "Add a retry."}, 0); err != nil {
		t.Fatal(err)
	}
	warns := func() bool {
		_, body := app.get(base)
		return strings.Contains(body, `data-testid="changes-requested-warning"`)
	}
	if warns() {
		t.Fatal("warns before any review")
	}
	res, body := app.postForm(base+"/reviews", url.Values{"state": {"changes_requested"}, "body": {"D2 is vague"}}, htmxSameOrigin)
	if res.StatusCode != http.StatusCreated || !strings.Contains(body, "changes requested") {
		t.Fatalf("review: Status=%d body %s", res.StatusCode, body)
	}
	if !warns() {
		t.Error("no warning while changes are requested")
	}
	if res, _ := app.postForm(base+"/reviews", url.Values{"state": {"lgtm"}}, htmxSameOrigin); res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("unknown state: Status=%d, want 422", res.StatusCode)
	}
	app.postForm(base+"/reviews", url.Values{"state": {"approved"}}, htmxSameOrigin)
	if warns() {
		t.Error("still warns after the reviewer approved")
	}
	// Start planning still works while changes are requested (a warning, not a block).
	app.postForm(base+"/reviews", url.Values{"state": {"changes_requested"}}, htmxSameOrigin)
	if res, body := app.postForm(base+"/freeze", url.Values{}, sameOrigin); res.StatusCode != http.StatusSeeOther {
		t.Errorf("freeze while changes requested: Status=%d, body %s", res.StatusCode, body)
	}
	// Ana is the workspace's only member: there is nobody to ask, and the page says so.
	_, body = app.get(base)
	if !strings.Contains(body, `data-testid="no-members"`) {
		t.Error("the review request form does not say there are no members yet")
	}
}

// TestReviewByAViewer checks team review with a second member: the owner
// asks a viewer of the workspace for review, and the viewer comments and
// reviews but may neither share nor ask others for review.
func TestReviewByAViewer(t *testing.T) {
	app := newReviewApp(t)
	ctx := context.Background()
	base := "/h/" + app.h.ID
	vic, _, err := app.DB.AddUser(ctx, store.UserAdd{User: store.UserCreate{Email: "vic@example.com", Name: "Vic", Password: ownerPassword},
		Role: store.RoleViewer})
	if err != nil {
		t.Fatal(err)
	}
	// The owner's request form lists Vic, and she asks him.
	_, body := app.get(base)
	if strings.Contains(body, `data-testid="no-members"`) || !strings.Contains(body, vic.ID) {
		t.Fatal("the review request form does not offer the workspace's other member")
	}
	if res, body := app.postForm(base+"/review-requests", url.Values{"reviewer": {vic.ID}}, sameOrigin); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("request review: Status=%d; body %s", res.StatusCode, body)
	}
	if res, _ := app.postForm(base+"/review-requests", url.Values{"reviewer": {"u-nobody"}}, sameOrigin); res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("request review of a non-member: Status=%d, want 422", res.StatusCode)
	}

	viewer := app.browser()
	viewer.login("vic@example.com", ownerPassword)
	post := func(path string, form url.Values) (*http.Response, string) {
		req := app.newRequest(http.MethodPost, path, strings.NewReader(form.Encode()), htmxSameOrigin)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return viewer.do(req)
	}
	res, body := post(base+"/comments", url.Values{"kind": {"summary"}, "body": {"Clear enough."}})
	if res.StatusCode != http.StatusCreated || !strings.Contains(body, `data-testid="comment-author">Vic<`) {
		t.Errorf("viewer's comment: Status=%d, want 201 by Vic; body %s", res.StatusCode, body)
	}
	if res, body := post(base+"/reviews", url.Values{"state": {"approved"}}); res.StatusCode != http.StatusCreated {
		t.Errorf("viewer's review: Status=%d, want 201; body %s", res.StatusCode, body)
	}
	for _, path := range []string{base + "/shares", base + "/review-requests"} {
		if res, _ := post(path, url.Values{"mode": {"view"}, "expiresIn": {"1d"}, "reviewer": {app.Owner.ID}}); res.StatusCode != http.StatusForbidden {
			t.Errorf("viewer POST %s: Status=%d, want 403", path, res.StatusCode)
		}
	}
	states, err := app.DB.FindReviewerStates(ctx, app.h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].Reviewer.UserID != vic.ID || states[0].State != store.ReviewApproved {
		t.Errorf("reviewer states %+v, want Vic, asked, approved", states)
	}
}

func TestAPIReview(t *testing.T) {
	app := newReviewApp(t)
	h := app.h
	api := "/api/v1/handoffs/" + h.ID

	type apiComment struct {
		ID     string `json:"id"`
		Anchor struct {
			Kind, ID, Section, Label string
		} `json:"anchor"`
		Author struct {
			Name  string `json:"name"`
			Guest bool   `json:"guest"`
		} `json:"author"`
		Body     string        `json:"body"`
		Resolved bool          `json:"resolved"`
		Replies  []*apiComment `json:"replies"`
	}
	planAnchor := fmt.Sprintf(`{"kind":"plan-section","id":%q,"section":"steps"}`, app.plan.ID)
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"decision", fmt.Sprintf(`{"anchor":{"kind":"decision","id":%q},"body":"Why CSV?"}`, h.Decisions[0].ID), 201, ""},
		{"plan section", `{"anchor":` + planAnchor + `,"body":"Add a rollback step."}`, 201, ""},
		{"summary", `{"anchor":{"kind":"summary"},"body":"Clear."}`, 201, ""},
		{"general", `{"anchor":{"kind":"general"},"body":"Looks good."}`, 201, ""},
		{"empty", `{"anchor":{"kind":"summary"},"body":""}`, 422, store.EINVALID},
		{"too long", `{"anchor":{"kind":"summary"},"body":"` + strings.Repeat("x", 10001) + `"}`, 422, store.EINVALID},
		{"other handoff's risk", fmt.Sprintf(`{"anchor":{"kind":"risk","id":%q},"body":"x"}`, app.other.Risks[0].ID), 422, store.EINVALID},
		{"unknown section", fmt.Sprintf(`{"anchor":{"kind":"plan-section","id":%q,"section":"nope"},"body":"x"}`, app.plan.ID), 422, store.EINVALID},
		{"unknown field", `{"anchor":{"kind":"summary"},"body":"x","extra":1}`, 400, "bad_json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, body := app.postJSON(api+"/comments", tt.body)
			if tt.code != "" {
				wantAPIError(t, res, body, tt.status, tt.code)
				return
			}
			if res.StatusCode != tt.status {
				t.Fatalf("Status=%d, want %d; body %s", res.StatusCode, tt.status, body)
			}
		})
	}
	if res, body := app.postJSON("/api/v1/handoffs/nope/comments", `{"anchor":{"kind":"summary"},"body":"x"}`); res.StatusCode != 404 {
		t.Errorf("unknown handoff: Status=%d body %s", res.StatusCode, body)
	}

	_, body := app.get(api + "/comments")
	list := decodeJSON[struct{ Comments []*apiComment }](t, body)
	if len(list.Comments) != 4 || list.Comments[1].Anchor.Label != "Steps" || list.Comments[0].Author.Name != "Ana" || list.Comments[0].Replies == nil {
		t.Fatalf("comments %+v", list.Comments)
	}
	first := list.Comments[0].ID
	res, body := app.postJSON("/api/v1/comments/"+first+"/replies", `{"body":"Finance asked."}`)
	if res.StatusCode != 201 {
		t.Fatalf("reply: %d %s", res.StatusCode, body)
	}
	reply := decodeJSON[apiComment](t, body)
	if res, body := app.postJSON("/api/v1/comments/"+reply.ID+"/replies", `{"body":"deeper"}`); res.StatusCode != 422 {
		t.Errorf("reply to a reply: %d %s", res.StatusCode, body)
	}
	res, body = app.postJSON("/api/v1/comments/"+first+"/resolve", "")
	if res.StatusCode != 200 || !decodeJSON[apiComment](t, body).Resolved {
		t.Errorf("resolve: %d %s", res.StatusCode, body)
	}
	res, body = app.postJSON("/api/v1/comments/"+first+"/reopen", "")
	if res.StatusCode != 200 || decodeJSON[apiComment](t, body).Resolved {
		t.Errorf("reopen: %d %s", res.StatusCode, body)
	}
	if res, _ := app.postJSON("/api/v1/comments/nope/resolve", ""); res.StatusCode != 404 {
		t.Errorf("resolve unknown: %d", res.StatusCode)
	}
	if res, body := app.sendJSON(http.MethodPatch, "/api/v1/comments/"+first, `{"body":"Why CSV and not XLSX?"}`, nil); res.StatusCode != 200 {
		t.Errorf("edit: %d %s", res.StatusCode, body)
	}
	if res, body := app.sendJSON(http.MethodDelete, "/api/v1/comments/"+reply.ID, "", nil); res.StatusCode != 204 {
		t.Errorf("delete: %d %s", res.StatusCode, body)
	}

	// Reviews.
	for _, tt := range []struct {
		body   string
		status int
	}{
		{`{"state":"approved"}`, 201},
		{`{"state":"commented","body":"Nit: name D3."}`, 201},
		{`{"state":"changes_requested","body":"Add a rollback."}`, 201},
		{`{"state":"maybe"}`, 422},
	} {
		if res, body := app.postJSON(api+"/reviews", tt.body); res.StatusCode != tt.status {
			t.Errorf("review %s: Status=%d, want %d; %s", tt.body, res.StatusCode, tt.status, body)
		}
	}

	// Share links.
	type apiShare struct {
		ID, URL, Token, Mode string
		ExpiresAt            *time.Time
	}
	res, body = app.postJSON(api+"/shares", `{"mode":"review","expiresIn":"7d","label":"QA"}`)
	if res.StatusCode != 201 {
		t.Fatalf("share: %d %s", res.StatusCode, body)
	}
	sh := decodeJSON[apiShare](t, body)
	if len(sh.Token) < 22 || !strings.HasSuffix(sh.URL, "/s/"+sh.Token) || sh.Mode != "review" || sh.ExpiresAt == nil {
		t.Errorf("share %+v", sh)
	}
	res, body = app.postJSON("/api/v1/plans/"+app.plan.ID+"/shares", `{"mode":"view","expiresIn":"never"}`)
	if res.StatusCode != 201 || decodeJSON[apiShare](t, body).ExpiresAt != nil {
		t.Errorf("plan share: %d %s", res.StatusCode, body)
	}
	for _, bad := range []string{`{"mode":"view","expiresIn":"2d"}`, `{"mode":"edit","expiresIn":"1d"}`} {
		if res, body := app.postJSON(api+"/shares", bad); res.StatusCode != 422 {
			t.Errorf("share %s: %d %s", bad, res.StatusCode, body)
		}
	}
	if res, _ := app.postJSON("/api/v1/plans/nope/shares", `{"mode":"view","expiresIn":"1d"}`); res.StatusCode != 404 {
		t.Errorf("share of unknown plan: %d", res.StatusCode)
	}
	_, body = app.get("/api/v1/shares")
	if strings.Contains(body, sh.Token) || strings.Contains(body, `"token"`) {
		t.Errorf("the list shows a token: %s", body)
	}
	shares := decodeJSON[struct {
		Shares []struct {
			ID, Mode, Last4 string
			Active          bool
		}
	}](t, body)
	if len(shares.Shares) != 2 || shares.Shares[1].Last4 != sh.Token[len(sh.Token)-4:] {
		t.Fatalf("shares %+v", shares.Shares)
	}
	if res, _ := app.sendJSON(http.MethodDelete, "/api/v1/shares/"+sh.ID, "", nil); res.StatusCode != 204 {
		t.Errorf("revoke: %d", res.StatusCode)
	}
	if res, _ := app.sendJSON(http.MethodDelete, "/api/v1/shares/nope", "", nil); res.StatusCode != 404 {
		t.Errorf("revoke unknown: %d", res.StatusCode)
	}
	if res, _ := app.get("/s/" + sh.Token); res.StatusCode != 404 {
		t.Errorf("revoked link: %d, want 404", res.StatusCode)
	}
}

// shareTokens makes the share-token matrix's links of one mode: valid,
// revoked, expired, and a wrong token.
func (a reviewApp) shareTokens(mode store.ShareMode) map[string]string {
	a.t.Helper()
	ctx := context.Background()
	mk := func(expires string) (*store.ShareLink, string) {
		l, tok, err := a.DB.CreateShareLink(ctx, store.ShareCreate{HandoffID: a.h.ID, Mode: mode, ExpiresIn: expires, By: store.Actor{Name: "You"}})
		if err != nil {
			a.t.Fatal(err)
		}
		return l, tok
	}
	_, valid := mk("30d")
	revoked, revokedTok := mk("never")
	if _, err := a.DB.RevokeShareLink(ctx, a.h.WorkspaceID, revoked.ID); err != nil {
		a.t.Fatal(err)
	}
	// A day-long link made two days ago.
	a.DB.SetClock(func() time.Time { return time.Now().UTC().Add(-48 * time.Hour) })
	_, expired := mk("1d")
	a.DB.SetClock(func() time.Time { return time.Now().UTC() })
	return map[string]string{"valid": valid, "revoked": revokedTok, "expired": expired,
		"wrong": valid[:len(valid)-2] + strings.Map(func(r rune) rune { return r ^ 1 }, valid[len(valid)-2:])}
}

func TestShareTokenMatrix(t *testing.T) {
	app := newReviewApp(t)
	for _, mode := range []store.ShareMode{store.ShareView, store.ShareReview} {
		tokens := app.shareTokens(mode)
		var notFound string
		for _, name := range []string{"valid", "revoked", "expired", "wrong"} {
			t.Run(string(mode)+"/"+name, func(t *testing.T) {
				tok := tokens[name]
				res, body := app.get("/s/" + tok)
				for k, want := range map[string]string{"Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex, nofollow", "Cache-Control": "private, no-store"} {
					if got := res.Header.Get(k); got != want {
						t.Errorf("%s=%q, want %q", k, got, want)
					}
				}
				comment := `{"name":"Gail","anchor":{"kind":"summary"},"body":"From a guest."}`
				cres, cbody := app.postJSON("/s/"+tok+"/comments", comment)
				if name != "valid" {
					if res.StatusCode != 404 || cres.StatusCode != 404 {
						t.Fatalf("page %d, comment %d; want 404 and 404", res.StatusCode, cres.StatusCode)
					}
					// One 404 for every bad token: nothing tells them apart.
					if notFound == "" {
						notFound = body
					} else if body != notFound {
						t.Errorf("this 404 differs from another bad token's")
					}
					return
				}
				if res.StatusCode != 200 {
					t.Fatalf("page: %d", res.StatusCode)
				}
				want := map[store.ShareMode]int{store.ShareView: 403, store.ShareReview: 201}[mode]
				if cres.StatusCode != want {
					t.Errorf("guest comment: %d, want %d; %s", cres.StatusCode, want, cbody)
				}
			})
		}
	}
	threads := app.comments(app.h.ID)
	if len(threads) != 1 || !threads[0].Author.Guest || threads[0].Author.Name != "Gail" {
		t.Fatalf("threads %+v, want the one guest comment of the review link", threads)
	}
}

func TestSharePage(t *testing.T) {
	app := newReviewApp(t)
	tokens := app.shareTokens(store.ShareReview)
	tok := tokens["valid"]
	if _, err := app.DB.CreateComment(context.Background(), app.h.ID, store.CommentCreate{Anchor: store.Anchor{Kind: store.AnchorDecision, ID: app.h.Decisions[0].ID},
		Body: "member note", Author: store.Actor{Name: "You"}}); err != nil {
		t.Fatal(err)
	}
	res, body := app.get("/s/" + tok)
	if res.StatusCode != 200 {
		t.Fatalf("Status=%d", res.StatusCode)
	}
	doc := parseHTML(t, body)
	// The handoff and its plan, like the member pages.
	for _, want := range []string{app.h.Decisions[0].Content, "billing/export.go", "Large exports time out", "Finance wants invoices out as CSV.", "Add the CSV exporter"} {
		if !strings.Contains(textOf(doc), want) {
			t.Errorf("share page lacks %q", want)
		}
	}
	// Nothing of another handoff, and no link into member pages.
	if strings.Contains(body, app.other.ID) || strings.Contains(body, "Something else entirely.") {
		t.Error("share page shows another handoff")
	}
	for _, a := range findAll(doc, "a") {
		href := attr(a, "href")
		// In-page links, and what the plan's own markdown links to.
		if strings.HasPrefix(href, "/") {
			t.Errorf("share page links to %q", href)
		}
	}
	for _, el := range findAll(doc, "button") {
		if g := attr(el, "hx-get"); g != "" && !strings.HasPrefix(g, "/s/"+tok+"/") {
			t.Errorf("share page fetches %q", g)
		}
	}
	if strings.Contains(body, `href="/memory"`) || strings.Contains(body, "/h/"+app.h.ID) {
		t.Error("share page names a member route")
	}
	// The open thread shows, a guest comments under a name through the form.
	q := "kind=decision&id=" + app.h.Decisions[0].ID
	_, thread := app.do(app.newRequest(http.MethodGet, "/s/"+tok+"/comments?"+q, nil, htmxSameOrigin))
	if !strings.Contains(thread, "member note") || !strings.Contains(thread, `data-testid="guest-name"`) {
		t.Errorf("guest thread: %s", thread)
	}
	res, body = app.postForm("/s/"+tok+"/comments", url.Values{"name": {"Gail"}, "kind": {"decision"}, "id": {app.h.Decisions[0].ID}, "body": {"Guest view"}}, htmxSameOrigin)
	if res.StatusCode != 201 || !strings.Contains(body, `data-testid="guest-tag"`) {
		t.Errorf("guest form comment: %d %s", res.StatusCode, body)
	}
	if res, _ := app.postForm("/s/"+tok+"/comments", url.Values{"kind": {"summary"}, "body": {"no name"}}, htmxSameOrigin); res.StatusCode != 422 {
		t.Errorf("guest without a name: %d, want 422", res.StatusCode)
	}
	// A guest may not answer with another handoff's anchor.
	if res, _ := app.postJSON("/s/"+tok+"/comments", fmt.Sprintf(`{"name":"G","anchor":{"kind":"decision","id":%q},"body":"x"}`, app.other.Decisions[0].ID)); res.StatusCode != 422 {
		t.Errorf("guest comment on another handoff's decision: %d, want 422", res.StatusCode)
	}
	// A cross-site form post is refused.
	if res, _ := app.postForm("/s/"+tok+"/comments", url.Values{"name": {"X"}, "kind": {"summary"}, "body": {"x"}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}); res.StatusCode != 403 {
		t.Errorf("cross-site guest comment: %d, want 403", res.StatusCode)
	}
	// Views are counted.
	links, _ := app.DB.FindShareLinks(context.Background(), store.ShareFilter{WorkspaceID: app.h.WorkspaceID})
	views := 0
	for _, l := range links {
		views += l.Views
	}
	if views != 1 {
		t.Errorf("%d views, want 1", views)
	}
}

func TestShareRateLimit(t *testing.T) {
	app := newAppWith(t, web.Config{Provider: newPlanModel(), ModelRate: 100, ShareRate: 1})
	limited := false
	for i := 0; i < 20 && !limited; i++ {
		res, _ := app.get("/s/" + strings.Repeat("A", 32))
		limited = res.StatusCode == http.StatusTooManyRequests
	}
	if !limited {
		t.Fatal("20 lookups in a row at 1/s were never limited")
	}
}

func TestPageShareLinks(t *testing.T) {
	app := newReviewApp(t)
	base := "/h/" + app.h.ID
	res, _ := app.postForm(base+"/shares", url.Values{"mode": {"view"}, "expiresIn": {"1d"}, "label": {"Board"}}, sameOrigin)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d", res.StatusCode)
	}
	_, body := app.get(base)
	doc := parseHTML(t, body)
	flash := textOf(byID(doc, "flash"))
	i := strings.Index(flash, "/s/")
	if i < 0 {
		t.Fatalf("flash %q has no link", flash)
	}
	tok := strings.TrimSpace(flash[i+3:])
	if res, _ := app.get("/s/" + tok); res.StatusCode != 200 {
		t.Fatalf("new link: %d", res.StatusCode)
	}
	rows := findAll(doc, "tr", "data-testid", "share-row")
	if len(rows) != 1 || !strings.Contains(textOf(rows[0]), "Board") {
		t.Fatalf("share rows %d", len(rows))
	}
	// A bad expiry stores nothing and says why.
	app.postForm(base+"/shares", url.Values{"mode": {"view"}, "expiresIn": {"1y"}}, sameOrigin)
	_, body = app.get(base)
	if !strings.Contains(body, "1d, 7d, 30d or never") || len(findAll(parseHTML(t, body), "tr", "data-testid", "share-row")) != 1 {
		t.Error("bad expiry: no message, or a link was stored")
	}
	links, _ := app.DB.FindShareLinks(context.Background(), store.ShareFilter{WorkspaceID: app.h.WorkspaceID})
	if res, _ := app.postForm("/h/"+app.other.ID+"/shares/"+links[0].ID+"/revoke", nil, sameOrigin); res.StatusCode != 404 {
		t.Errorf("revoke through another handoff: %d, want 404", res.StatusCode)
	}
	if res, _ := app.postForm(base+"/shares/"+links[0].ID+"/revoke", nil, sameOrigin); res.StatusCode != http.StatusSeeOther {
		t.Errorf("revoke: %d", res.StatusCode)
	}
	if res, _ := app.get("/s/" + tok); res.StatusCode != 404 {
		t.Errorf("revoked link: %d, want 404", res.StatusCode)
	}
}

func TestLiveUpdates(t *testing.T) {
	app := newReviewApp(t)
	tok := app.shareTokens(store.ShareReview)["valid"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(path string) *sseStream {
		req := app.newRequest(http.MethodGet, path, nil, http.Header{"Accept": {"text/event-stream"}, "Accept-Encoding": {"gzip"}, "Sec-Fetch-Site": {"same-origin"}})
		res, err := app.Client.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		return &sseStream{Res: res, r: bufio.NewReader(res.Body)}
	}
	next := func(s *sseStream, event string) sseEvent {
		t.Helper()
		for {
			ev, err := s.next()
			if err != nil {
				t.Fatalf("waiting for %s: %v", event, err)
			}
			if ev.Event == event {
				return ev
			}
		}
	}
	member := open("/h/" + app.h.ID + "/live")
	next(member, "viewers") // alone
	guest := open("/s/" + tok + "/live")
	if ev := next(member, "viewers"); !strings.Contains(ev.Data, "Guest") {
		t.Errorf("member sees viewers %q, want the guest", ev.Data)
	}
	if ev := next(guest, "viewers"); !strings.Contains(ev.Data, "Ana") {
		t.Errorf("guest sees viewers %q, want Ana", ev.Data)
	}
	// An edit of an item (a handler this feature does not own) reaches both.
	d := app.h.Decisions[0]
	if res, body := app.postForm("/h/"+app.h.ID+"/decisions/"+d.ID, url.Values{"content": {"Export as CSV and XLSX."}}, htmxSameOrigin); res.StatusCode != 200 {
		t.Fatalf("edit: %d %s", res.StatusCode, body)
	}
	next(member, "changed")
	next(guest, "changed")
	// So does a guest's comment, and a review through the API.
	app.postJSON("/s/"+tok+"/comments", `{"name":"Gail","anchor":{"kind":"summary"},"body":"Nice."}`)
	next(member, "changed")
	app.postJSON("/api/v1/handoffs/"+app.h.ID+"/reviews", `{"state":"approved"}`)
	next(guest, "changed")
	// Revoking the link ends its guest's stream.
	links, err := app.DB.FindShareLinks(context.Background(), store.ShareFilter{WorkspaceID: app.h.WorkspaceID})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		app.sendJSON(http.MethodDelete, "/api/v1/shares/"+l.ID, "", nil)
	}
	for {
		if _, err := guest.next(); err != nil {
			break // the stream ended
		}
	}
	next(member, "changed")
}

func TestPlanAgainWithReviewComments(t *testing.T) {
	app := newReviewApp(t)
	ctx := context.Background()
	if _, err := app.DB.CreateComment(ctx, app.h.ID, store.CommentCreate{Anchor: store.Anchor{Kind: store.AnchorPlanSection, ID: app.plan.ID, Section: "steps"},
		Body: "Add a rollback step.", Author: store.Actor{Name: "Ana", UserID: "u-ana"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.CreateComment(ctx, app.h.ID, store.CommentCreate{Anchor: store.Anchor{Kind: store.AnchorRisk, ID: app.h.Risks[0].ID},
		Body: "Timeouts at 10k rows.", Author: store.Actor{Name: "You"}}); err != nil {
		t.Fatal(err)
	}
	resolved, err := app.DB.CreateComment(ctx, app.h.ID, store.CommentCreate{Anchor: store.Anchor{Kind: store.AnchorSummary}, Body: "Old news.", Author: store.Actor{Name: "You"}})
	if err != nil {
		t.Fatal(err)
	}
	app.DB.ResolveComment(ctx, resolved.ID, true, store.Actor{Name: "You"})

	_, body := app.get("/p/" + app.plan.ID)
	if !strings.Contains(body, `data-testid="replan-with-comments"`) || !strings.Contains(body, "2 review comments") {
		t.Fatalf("plan page lacks “Plan again with 2 review comments”")
	}
	before := len(app.model.requests())
	res, body := app.postForm("/p/"+app.plan.ID+"/replan", nil, sameOrigin)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("replan: %d %s", res.StatusCode, body)
	}
	id := planIDFrom(t, res.Header.Get("Location"))
	p := app.waitPlan(id, store.PlanComplete)
	if p.Version != 2 {
		t.Errorf("version %d, want 2", p.Version)
	}
	sys := app.model.requests()[before].System
	for _, want := range []string{`section "Steps" of the plan, Ana wrote:`, "> Add a rollback step.", "risk Large exports time out", "> Timeouts at 10k rows."} {
		if !strings.Contains(sys, want) {
			t.Errorf("the agent's prompt lacks %q", want)
		}
	}
	if strings.Contains(sys, "Old news.") {
		t.Error("the agent got a resolved comment")
	}
	_, body = app.get("/p/" + id)
	doc := parseHTML(t, body)
	if got := len(findAll(doc, "li", "data-testid", "addressed-comment")); got != 2 {
		t.Errorf("%d addressed comments listed, want 2", got)
	}
	if findAll(doc, "details", "data-testid", "plan-diff") == nil {
		t.Error("no diff against v1")
	}
}
