package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent/offline"
)

// apiThread is a thread as the API returns it.
type apiThread struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Archived bool   `json:"archived"`
}

func TestAPIThreadUpdateAndDelete(t *testing.T) {
	app := newApp(t, offline.New())
	th := app.createThread("Auth")
	path := "/api/v1/threads/" + th.ID

	res, body := app.sendJSON(http.MethodPatch, path, `{"title":"JWT migration"}`, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("rename: Status=%d, want 200; body %s", res.StatusCode, body)
	}
	if got := decodeJSON[apiThread](t, body); got.Title != "JWT migration" || got.Archived {
		t.Fatalf("renamed %+v, want the new title, not archived", got)
	}
	res, body = app.sendJSON(http.MethodPatch, path, `{"archived":true}`, nil)
	if got := decodeJSON[apiThread](t, body); res.StatusCode != http.StatusOK || !got.Archived || got.Title != "JWT migration" {
		t.Fatalf("archive: Status=%d %+v, want 200, archived, title kept", res.StatusCode, got)
	}
	_, body = app.get("/api/v1/threads")
	if strings.Contains(body, th.ID) {
		t.Fatal("an archived thread is in the thread list")
	}

	res, body = app.sendJSON(http.MethodPatch, path, `{"title":"  "}`, nil)
	wantAPIError(t, res, body, http.StatusUnprocessableEntity, "invalid")
	res, body = app.sendJSON(http.MethodPatch, path, `{"name":"x"}`, nil)
	wantAPIError(t, res, body, http.StatusBadRequest, "bad_json")
	res, body = app.sendJSON(http.MethodPatch, "/api/v1/threads/nope", `{"title":"x"}`, nil)
	wantAPIError(t, res, body, http.StatusNotFound, "not_found")

	res, body = app.sendJSON(http.MethodDelete, path, "", nil)
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: Status=%d, want 204; body %s", res.StatusCode, body)
	}
	res, body = app.get(path)
	wantAPIError(t, res, body, http.StatusNotFound, "not_found")
	res, body = app.sendJSON(http.MethodDelete, path, "", nil)
	wantAPIError(t, res, body, http.StatusNotFound, "not_found")
}

// TestThreadManagePages renames, archives and deletes a brainstorm from its
// page; after deleting, its frozen snapshot's plan still opens and says it
// came from a deleted brainstorm.
func TestThreadManagePages(t *testing.T) {
	app := newApp(t, offline.New())
	ctx := context.Background()
	ex := app.seedExchange("Auth", "Sessions?", "Use JWT.")
	base := "/t/" + ex.Thread.ID

	res, _ := app.postForm(base+"/rename", url.Values{"title": {"JWT migration"}}, sameOrigin)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("rename: Status=%d, want 303", res.StatusCode)
	}
	_, page := app.get(base)
	if got := textOf(findOne(t, parseHTML(t, page), "h1", "data-testid", "thread-title")); got != "JWT migration" {
		t.Fatalf("title=%q after renaming", got)
	}

	app.postForm(base+"/archive", url.Values{"archived": {"true"}}, sameOrigin)
	_, home := app.get("/")
	_, archived := app.get("/archived")
	if strings.Contains(home, base) || !strings.Contains(archived, base) {
		t.Fatal("an archived brainstorm should leave the home list for /archived")
	}
	app.postForm(base+"/archive", url.Values{"archived": {"false"}}, sameOrigin)
	if _, home = app.get("/"); !strings.Contains(home, base) {
		t.Fatal("an unarchived brainstorm is not back on the home list")
	}

	d, _, err := app.DB.PinMessage(ctx, ex.Thread.ID, ex.Reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := app.DB.Freeze(ctx, d.HandoffID, 0)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := app.DB.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}

	res, page = app.get(base + "/delete")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "snapshots") {
		t.Fatalf("delete asks first: Status=%d, want 200 with what stays", res.StatusCode)
	}
	res, _ = app.postForm(base+"/delete", nil, sameOrigin)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("delete: Status=%d Location=%q, want 303 to /", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ = app.get(base); res.StatusCode != http.StatusNotFound {
		t.Fatalf("deleted brainstorm: Status=%d, want 404", res.StatusCode)
	}
	res, page = app.get("/p/" + plan.ID)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("plan of a deleted brainstorm: Status=%d, want 200", res.StatusCode)
	}
	findOne(t, parseHTML(t, page), "p", "data-testid", "deleted-source")
}
