package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

// TestPagesShowChangesAtOnce changes, straight in the database as another
// instance on the same database would, what the review screen and the
// header show, and checks that the very next view shows each change: the
// review items (whose HTML is kept by content), their comment counts, the
// lists read only when they have rows, the handoff read in one statement,
// and the workspaces read with the session.
func TestPagesShowChangesAtOnce(t *testing.T) {
	app := newApp(t, offline.New())
	ctx := store.WithActor(context.Background(), app.Owner.ID)
	th := app.createThread("Limits")
	h, err := app.DB.EnsureHandoff(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := app.DB.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Use Redis", Source: store.SourceAI}, 0)
	if err != nil {
		t.Fatal(err)
	}
	shows := func(path string, want ...string) string {
		t.Helper()
		res, body := app.get(path)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: status %d", path, res.StatusCode)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Fatalf("GET %s does not show %q", path, w)
			}
		}
		return body
	}
	review := "/h/" + h.ID
	shows(review, "Use Redis", ">D1<", ">Comment<")
	shows(review, "Use Redis") // now from the kept HTML

	edited := "Use Valkey"
	h, err = app.DB.FindHandoffByID(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := app.DB.UpdateDecision(ctx, h.ID, d.ID, store.DecisionUpdate{Content: &edited, Version: h.Version}); err != nil {
		t.Fatal(err)
	}
	if body := shows(review, "Use Valkey", "edited by Ana"); strings.Contains(body, "Use Redis") {
		t.Fatal("the review screen still shows the decision as it was")
	}
	if _, _, err := app.DB.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Answer 429", Source: store.SourceAI}, 0); err != nil {
		t.Fatal(err)
	}
	shows(review, "Answer 429", ">D2<")
	if _, err := app.DB.CreateComment(ctx, h.ID, store.CommentCreate{Anchor: store.Anchor{Kind: store.AnchorDecision, ID: d.ID},
		Body: "Why Valkey?", Author: store.Actor{UserID: app.Owner.ID, Name: app.Owner.Name}}); err != nil {
		t.Fatal(err)
	}
	shows(review, ">1 comment<")
	if _, err := app.DB.CreateReview(ctx, h.ID, store.Review{Reviewer: store.Actor{UserID: app.Owner.ID, Name: app.Owner.Name}, State: store.ReviewApproved}); err != nil {
		t.Fatal(err)
	}
	shows(review, `data-testid="reviewer"`)

	// The workspace switcher shows with a second workspace, and goes when
	// it does.
	if body := shows("/"); strings.Contains(body, `data-testid="workspace-switch"`) {
		t.Fatal("a switcher with one workspace")
	}
	w, err := app.DB.CreateWorkspace(ctx, "Second team")
	if err != nil {
		t.Fatal(err)
	}
	if err := app.DB.AddMember(ctx, w.ID, app.Owner.ID, store.RoleEditor); err != nil {
		t.Fatal(err)
	}
	shows("/", `data-testid="workspace-switch"`, "Second team (editor)")
	shows(review, "Second team (editor)")
	if err := app.DB.RemoveMember(ctx, w.ID, app.Owner.ID); err != nil {
		t.Fatal(err)
	}
	if body := shows("/"); strings.Contains(body, "Second team") {
		t.Fatal("the switcher still offers a workspace the user was removed from")
	}
}

// TestPageViewsFinishWithoutTheClient checks that a page view runs to its
// end on a request whose client has gone (detachPageViews): its reads do
// not watch the request's context.
func TestPageViewsFinishWithoutTheClient(t *testing.T) {
	app := newApp(t, offline.New())
	th := app.createThread("Gone")
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	req := app.newRequest(http.MethodGet, "/t/"+th.ID, nil, nil).WithContext(gone)
	for _, c := range app.Client.Jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	app.Srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Gone") {
		t.Errorf("GET /t/%s after the client left: status %d, want the page", th.ID, rec.Code)
	}
}
