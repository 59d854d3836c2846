package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

// TestFrozenReviewIsReadOnly checks that a frozen handoff shows no Edit,
// Remove, Add or Start planning, offers "Edit a new draft", and that this
// makes it an editable draft again with its snapshot kept.
func TestFrozenReviewIsReadOnly(t *testing.T) {
	app := newApp(t, offline.New())
	ctx := context.Background()
	ex := app.seedExchange("Auth", "Sessions?", "Use JWT.")
	d, _, err := app.DB.PinMessage(ctx, ex.Thread.ID, ex.Reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.Freeze(ctx, d.HandoffID, 0); err != nil {
		t.Fatal(err)
	}
	review := "/h/" + d.HandoffID

	_, page := app.get(review)
	doc := parseHTML(t, page)
	for _, id := range []string{"edit", "remove", "start-planning", "add-decision", "add-file", "add-risk"} {
		if n := len(findAll(doc, "", "data-testid", id)); n != 0 {
			t.Errorf("frozen review shows %d %q controls, want none", n, id)
		}
	}
	button := findOne(t, doc, "button", "data-testid", "edit-new-draft")
	version := attr(findOne(t, button.Parent, "input", "name", "version"), "value")

	res, body := app.postForm(review+"/draft", url.Values{"version": {version}}, sameOrigin)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != review {
		t.Fatalf("Edit a new draft: Status=%d Location=%q, want 303 to %s; body %s", res.StatusCode, res.Header.Get("Location"), review, body)
	}
	h, err := app.DB.FindHandoffByID(ctx, d.HandoffID)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := strconv.Atoi(version); h.Status != store.HandoffDraft || h.Version != v+1 {
		t.Fatalf("after Edit a new draft: %s v%d, want draft v%d", h.Status, h.Version, v+1)
	}
	if sns, _ := app.DB.FindSnapshots(ctx, h.ID); len(sns) != 1 {
		t.Fatalf("%d snapshots after reopening, want the frozen one kept", len(sns))
	}
	_, page = app.get(review)
	doc = parseHTML(t, page)
	if len(findAll(doc, "", "data-testid", "edit")) == 0 || len(findAll(doc, "", "data-testid", "start-planning")) != 1 {
		t.Fatal("the reopened draft shows no Edit or Start planning")
	}

	// A stale version is refused.
	res, _ = app.postForm(review+"/draft", url.Values{"version": {version}}, sameOrigin)
	if res.StatusCode != http.StatusConflict {
		t.Fatalf("stale Edit a new draft: Status=%d, want 409", res.StatusCode)
	}
}
