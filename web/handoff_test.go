package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/web"
)

// exchange is a thread with one question and the assistant's complete reply.
type exchange struct {
	Thread *store.Thread
	User   *store.Message
	Reply  *store.Message
}

// seedExchange stores a thread with a user message and its reply, the
// transcript positions 0 and 1 of an extraction.
func (a *testApp) seedExchange(title, question, answer string) exchange {
	a.t.Helper()
	ctx := context.Background()
	th := a.createThread(title)
	u, err := a.DB.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: question})
	if err != nil {
		a.t.Fatal(err)
	}
	r, err := a.DB.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, Content: answer, ReplyTo: u.ID, Model: "m"})
	if err != nil {
		a.t.Fatal(err)
	}
	return exchange{Thread: th, User: u, Reply: r}
}

func (a *testApp) handoff(id string) *store.Handoff {
	a.t.Helper()
	h, err := a.DB.FindHandoffByID(context.Background(), id)
	if err != nil {
		a.t.Fatal(err)
	}
	return h
}

// handoffItems lists a handoff's items as "kind|text|source" lines.
func handoffItems(h *store.Handoff) []string {
	var out []string
	for _, d := range h.Decisions {
		out = append(out, "decision|"+d.Content+"|"+string(d.Source))
	}
	for _, f := range h.Files {
		out = append(out, "file|"+f.Path+"|"+string(f.Relevance)+"|"+string(f.Source))
	}
	for _, r := range h.Risks {
		out = append(out, "risk|"+r.Description+"|"+string(r.Severity)+"|"+string(r.Source))
	}
	return out
}

// extractionJSON is a model's structured extraction. Sources index the
// transcript: 0 is the question, 1 the reply.
func extractionJSON(t *testing.T, summary string, decisions ...string) string {
	t.Helper()
	var ds []map[string]any
	for _, d := range decisions {
		ds = append(ds, map[string]any{"content": d, "confidence": 0.9, "sources": []int{1}})
	}
	b, err := json.Marshal(map[string]any{
		"decisions":       ds,
		"filesReferenced": []map[string]any{{"path": "src/session.go", "relevance": "high", "context": "cookie handling", "sources": []int{1}}},
		"risks":           []map[string]any{{"description": "Token theft", "severity": "high", "mitigation": "short expiry", "sources": []int{0, 1}}},
		"summary":         summary,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// extractionModel is a fake model whose reply is an extraction. It waits
// for release (when not nil) before answering, and reports each call on
// started.
func extractionModel(reply string, release <-chan struct{}, started chan<- struct{}) *fakeModel {
	f := newFakeModel(reply)
	f.OnStream = func(ctx context.Context, req agent.Request) {
		if started != nil {
			select {
			case started <- struct{}{}:
			default:
			}
		}
		if release != nil {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	}
	return f
}

// openEvents opens the extraction event stream of a thread.
func (a *testApp) openEvents(ctx context.Context, threadID string) *sseStream {
	a.t.Helper()
	req := a.newRequest(http.MethodGet, "/t/"+threadID+"/extract/events", nil,
		http.Header{"Accept": {"text/event-stream"}, "Accept-Encoding": {"gzip"}, "Sec-Fetch-Site": {"same-origin"}})
	res, err := a.Client.Do(req.WithContext(ctx))
	if err != nil {
		a.t.Fatalf("open extraction events: %v", err)
	}
	a.t.Cleanup(func() { res.Body.Close() })
	if got, want := res.StatusCode, http.StatusOK; got != want {
		a.t.Fatalf("extraction events: Status=%d, want %d", got, want)
	}
	return &sseStream{Res: res, r: bufio.NewReader(res.Body)}
}

// waitRun polls until the handoff's latest extraction run has status.
func (a *testApp) waitRun(handoffID string, status store.RunStatus, timeout time.Duration) *store.ExtractionRun {
	a.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		run, err := a.DB.FindLatestExtractionRun(context.Background(), handoffID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			a.t.Fatal(err)
		}
		if err == nil && run.Status == status {
			return run
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("latest run %+v, want status %q within %v", run, status, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countRuns counts the extraction runs in the app's database (a test makes one handoff).
func (a *testApp) countRuns() int {
	a.t.Helper()
	n, err := a.DB.TableCounts(context.Background())
	if err != nil {
		a.t.Fatal(err)
	}
	return n["extraction_runs"]
}

func oobCount(t *testing.T, doc *html.Node, kind string) string {
	t.Helper()
	n := findOne(t, doc, "span", "id", "count-"+kind)
	if got := attr(n, "hx-swap-oob"); got != "true" {
		t.Fatalf("#count-%s hx-swap-oob=%q, want true", kind, got)
	}
	return textOf(n)
}

func oobVersion(t *testing.T, doc *html.Node) string {
	t.Helper()
	n := findOne(t, doc, "input", "id", "handoff-version")
	if got := attr(n, "hx-swap-oob"); got != "true" {
		t.Fatalf("#handoff-version hx-swap-oob=%q, want true", got)
	}
	return attr(n, "value")
}

func TestPinHTMX(t *testing.T) {
	app := newApp(t, offline.New())
	ex := app.seedExchange("Auth", "How do sessions work?", "Use JWT in an HttpOnly cookie.")
	base := "/t/" + ex.Thread.ID + "/messages/" + ex.Reply.ID

	res, body := app.postForm(base+"/pin", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("pin: Status=%d, want %d; body: %s", got, want, body)
	}
	doc := parseHTML(t, body)
	msg := findOne(t, doc, "article", "id", "msg-"+ex.Reply.ID)
	unpin := findOne(t, msg, "button", "data-testid", "unpin")
	if got := attr(unpin, "aria-pressed"); got != "true" {
		t.Fatalf("unpin aria-pressed=%q, want true", got)
	}
	findOne(t, msg, "form", "hx-post", base+"/unpin")
	badge := findOne(t, doc, "span", "id", "pin-count")
	if attr(badge, "hx-swap-oob") != "true" || textOf(badge) != "1" {
		t.Fatalf("pin-count=%s, want an out-of-band badge showing 1", render(badge))
	}

	h, err := app.DB.FindHandoffByThread(context.Background(), ex.Thread.ID)
	if err != nil {
		t.Fatalf("pinning created no handoff: %v", err)
	}
	if len(h.Decisions) != 1 || h.Decisions[0].Source != store.SourcePinned || h.Decisions[0].PinnedMessageID != ex.Reply.ID {
		t.Fatalf("decisions %v, want one user-pinned decision of the reply", handoffItems(h))
	}

	// The thread page shows the badge and the pinned state.
	_, page := app.get("/t/" + ex.Thread.ID)
	doc = parseHTML(t, page)
	if got := textOf(findOne(t, doc, "span", "data-testid", "pin-count")); got != "1" {
		t.Fatalf("thread page pin-count=%q, want 1", got)
	}
	findOne(t, findOne(t, doc, "article", "id", "msg-"+ex.Reply.ID), "button", "data-testid", "unpin")
	if got := attr(findOne(t, doc, "a", "data-testid", "review-link"), "href"); got != "/h/"+h.ID {
		t.Fatalf("review link=%q, want /h/%s", got, h.ID)
	}

	// Unpin removes the decision and the badge goes back to 0.
	res, body = app.postForm(base+"/unpin", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("unpin: Status=%d, want %d; body: %s", got, want, body)
	}
	doc = parseHTML(t, body)
	findOne(t, findOne(t, doc, "article", "id", "msg-"+ex.Reply.ID), "button", "data-testid", "pin")
	if got := textOf(findOne(t, doc, "span", "id", "pin-count")); got != "0" {
		t.Fatalf("pin-count after unpin=%q, want 0", got)
	}
	if got := len(app.handoff(h.ID).Decisions); got != 0 {
		t.Fatalf("after unpin: %d decisions, want 0", got)
	}

	// Without htmx the form redirects back to the message.
	res, _ = app.postForm(base+"/pin", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("plain pin: Status=%d, want %d", got, want)
	}
	if got, want := res.Header.Get("Location"), "/t/"+ex.Thread.ID+"#msg-"+ex.Reply.ID; got != want {
		t.Fatalf("Location=%q, want %q", got, want)
	}

	// A user message cannot be pinned.
	res, body = app.postForm("/t/"+ex.Thread.ID+"/messages/"+ex.User.ID+"/pin", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
		t.Fatalf("pin a user message: Status=%d, want %d", got, want)
	}
	if !strings.Contains(body, "Only an assistant reply") {
		t.Fatalf("pin a user message: body %q, want the reason", body)
	}
	res, _ = app.postForm("/t/"+ex.Thread.ID+"/messages/nope/pin", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusNotFound; got != want {
		t.Fatalf("pin an unknown message: Status=%d, want %d", got, want)
	}
}

func TestExtractHTMX(t *testing.T) {
	release := make(chan struct{})
	model := extractionModel(extractionJSON(t, "We use JWT.", "Use JWT in an HttpOnly cookie."), release, nil)
	app := newApp(t, model)
	ex := app.seedExchange("Auth", "How do sessions work?", "Use JWT in an HttpOnly cookie.")

	res, body := app.postForm("/t/"+ex.Thread.ID+"/extract", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("extract: Status=%d, want %d; body: %s", got, want, body)
	}
	bar := findOne(t, parseHTML(t, body), "div", "id", "ready")
	if got, want := attr(bar, "data-testid"), "extracting"; got != want {
		t.Fatalf("bar data-testid=%q, want %q", got, want)
	}
	if got, want := attr(bar, "sse-connect"), "/t/"+ex.Thread.ID+"/extract/events"; got != want {
		t.Fatalf("sse-connect=%q, want %q", got, want)
	}
	findOne(t, bar, "button", "data-testid", "cancel-extract")

	// The thread page shows the running bar too.
	_, page := app.get("/t/" + ex.Thread.ID)
	findOne(t, parseHTML(t, page), "div", "data-testid", "extracting")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream := app.openEvents(ctx, ex.Thread.ID)
	first, err := stream.next()
	if err != nil {
		t.Fatal(err)
	}
	if first.Event != "progress" || first.Data == "" {
		t.Fatalf("first event %+v, want a progress message", first)
	}
	close(release)
	evs := append([]sseEvent{first}, stream.all(t)...)
	last := evs[len(evs)-1]
	if last.Event != "done" {
		t.Fatalf("last event %q, want done; events: %+v", last.Event, evs)
	}
	for _, ev := range evs[:len(evs)-1] {
		if ev.Event != "progress" {
			t.Fatalf("event %q before done, want only progress", ev.Event)
		}
	}
	h, err := app.DB.FindHandoffByThread(context.Background(), ex.Thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	done := findOne(t, parseHTML(t, last.Data), "div", "id", "ready")
	if got, want := attr(done, "data-redirect"), "/h/"+h.ID; got != want {
		t.Fatalf("done data-redirect=%q, want %q (the review opens)", got, want)
	}
	if got := textOf(findOne(t, done, "span", "data-testid", "extract-notice")); !strings.Contains(got, "Added 3 items") {
		t.Fatalf("notice=%q, want it to say 3 items were added", got)
	}

	run := app.waitRun(h.ID, store.RunSucceeded, 5*time.Second)
	if run.Added != 3 {
		t.Fatalf("run.Added=%d, want 3", run.Added)
	}
	want := []string{"decision|Use JWT in an HttpOnly cookie.|ai-extracted", "file|src/session.go|high|ai-extracted", "risk|Token theft|high|ai-extracted"}
	if got := handoffItems(app.handoff(h.ID)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := app.handoff(h.ID); got.Summary != "We use JWT." || got.Decisions[0].MessageIDs[0] != ex.Reply.ID {
		t.Fatalf("summary %q, decision sources %v; want the summary and the reply as source", got.Summary, got.Decisions[0].MessageIDs)
	}
	if got := model.Calls(); got != 1 {
		t.Fatalf("model calls=%d, want 1", got)
	}
}

func TestExtractJoinsRunningAndCancel(t *testing.T) {
	started := make(chan struct{}, 1)
	model := extractionModel(extractionJSON(t, "S", "Never merged"), nil, started)
	model.Block = true
	app := newApp(t, model)
	ex := app.seedExchange("Auth", "Q?", "Use JWT.")
	pinned, _, err := app.DB.PinMessage(context.Background(), ex.Thread.ID, ex.Reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	before := app.handoff(pinned.HandoffID)

	res, body := app.postForm("/t/"+ex.Thread.ID+"/extract", nil, htmxSameOrigin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("first extract: Status=%d; body: %s", res.StatusCode, body)
	}
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the model was not called")
	}
	first := app.waitRun(before.ID, store.RunRunning, time.Second)

	// A second click joins the running extraction.
	res, body = app.postForm("/t/"+ex.Thread.ID+"/extract", nil, htmxSameOrigin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("second extract: Status=%d; body: %s", res.StatusCode, body)
	}
	findOne(t, parseHTML(t, body), "div", "data-testid", "extracting")
	if got := app.countRuns(); got != 1 {
		t.Fatalf("%d extraction runs after two clicks, want 1", got)
	}
	if got := model.Calls(); got != 1 {
		t.Fatalf("model calls=%d after two clicks, want 1", got)
	}
	// The server refuses a second run from the API too.
	res, body = app.postJSON("/api/v1/threads/"+ex.Thread.ID+"/handoff", "")
	if got, want := res.StatusCode, http.StatusConflict; got != want {
		t.Fatalf("API extract while running: Status=%d, want %d; body: %s", got, want, body)
	}
	if e := decodeJSON[apiError](t, body); e.Error.Code != "conflict" || e.Error.Message == "" {
		t.Fatalf("API error %+v, want code conflict with a message", e)
	}

	// Cancel aborts it; nothing is merged.
	res, _ = app.postForm("/t/"+ex.Thread.ID+"/extract/cancel", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusNoContent; got != want {
		t.Fatalf("cancel: Status=%d, want %d", got, want)
	}
	run := app.waitRun(before.ID, store.RunCancelled, 5*time.Second)
	if run.ID != first.ID || !strings.Contains(run.Error, "Cancelled") {
		t.Fatalf("cancelled run %+v, want the first run with a message", run)
	}
	after := app.handoff(before.ID)
	if strings.Join(handoffItems(after), "\n") != strings.Join(handoffItems(before), "\n") || after.Summary != before.Summary || after.Version != before.Version {
		t.Fatalf("a cancelled extraction changed the handoff: %v (v%d), was %v (v%d)", handoffItems(after), after.Version, handoffItems(before), before.Version)
	}

	// The page then learns how it ended. The run is recorded as cancelled
	// a moment before its job ends: a page that connects in between
	// follows the ending job, which replays its progress first.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	evs := app.openEvents(ctx, ex.Thread.ID).all(t)
	last := len(evs) - 1
	if last < 0 || evs[last].Event != "done" {
		t.Fatalf("events after the cancel: %+v, want them to end with done", evs)
	}
	for _, ev := range evs[:last] {
		if ev.Event != "progress" {
			t.Fatalf("events after the cancel: %+v, want progress before one done", evs)
		}
	}
	done := findOne(t, parseHTML(t, evs[last].Data), "div", "id", "ready")
	if attr(done, "data-redirect") != "" {
		t.Fatal("a cancelled extraction redirects to the review")
	}
	if got := textOf(findOne(t, done, "span", "data-testid", "extract-notice")); !strings.Contains(got, "Cancelled") {
		t.Fatalf("notice=%q, want it to say the extraction was cancelled", got)
	}
	findOne(t, done, "button", "data-testid", "ready-to-plan")
}

func TestExtractCancelledWhenPageCloses(t *testing.T) {
	model := extractionModel(extractionJSON(t, "S", "x"), nil, nil)
	model.Block = true
	// A short grace after the tab closes; the page still has long to connect.
	app := newAppWith(t, web.Config{Provider: model, ModelRate: 100, JobGrace: 20 * time.Millisecond})
	ex := app.seedExchange("Auth", "Q?", "A.")
	res, body := app.postForm("/t/"+ex.Thread.ID+"/extract", nil, htmxSameOrigin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("extract: Status=%d; body: %s", res.StatusCode, body)
	}
	h, err := app.DB.FindHandoffByThread(context.Background(), ex.Thread.ID)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stream := app.openEvents(ctx, ex.Thread.ID)
	if ev, err := stream.next(); err != nil || ev.Event != "progress" {
		t.Fatalf("first event %+v err=%v, want progress", ev, err)
	}
	cancel() // the tab closes

	// The job ends after a short grace period for reconnects.
	run := app.waitRun(h.ID, store.RunCancelled, 5*time.Second)
	if !strings.Contains(run.Error, "closed") {
		t.Fatalf("run error %q, want it to say the page was closed", run.Error)
	}
	if got := app.handoff(h.ID); len(got.Decisions)+len(got.Files)+len(got.Risks) != 0 {
		t.Fatalf("a cancelled extraction merged %v", handoffItems(got))
	}
}

// TestExtractFormOutlastsGrace checks that a plain form post, which waits
// for the whole extraction, is not taken for a closed page: the orphan
// timer must not cancel a job whose requester is still waiting, however
// long past the grace periods the model takes.
func TestExtractFormOutlastsGrace(t *testing.T) {
	t.Parallel()
	const grace = 20 * time.Millisecond
	model := newFakeModel(extractionJSON(t, "Slow but fine.", "Use JWT."))
	model.OnStream = func(ctx context.Context, _ agent.Request) {
		select {
		case <-time.After(10 * grace):
		case <-ctx.Done():
		}
	}
	app := newAppWith(t, web.Config{Provider: model, ModelRate: 100, JobGrace: grace, JobConnectGrace: grace})
	ex := app.seedExchange("Slow", "Q?", "A.")
	res, _ := app.postForm("/t/"+ex.Thread.ID+"/extract", nil, sameOrigin)
	h, err := app.DB.FindHandoffByThread(context.Background(), ex.Thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	run, _ := app.DB.FindLatestExtractionRun(context.Background(), h.ID)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want || res.Header.Get("Location") != "/h/"+h.ID {
		t.Fatalf("Status=%d Location=%q (run %+v), want %d to /h/%s", got, res.Header.Get("Location"), run, want, h.ID)
	}
}

func TestExtractFormFailure(t *testing.T) {
	// The reply has no summary: it does not match the schema.
	model := newFakeModel(`{"decisions":[{"content":"x","confidence":0.9,"sources":[1]}],"filesReferenced":[],"risks":[]}`)
	app := newApp(t, model)
	ex := app.seedExchange("Auth", "Q?", "A.")
	res, _ := app.postForm("/t/"+ex.Thread.ID+"/extract", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("Status=%d, want %d", got, want)
	}
	if got, want := res.Header.Get("Location"), "/t/"+ex.Thread.ID; got != want {
		t.Fatalf("Location=%q, want %q (back to the brainstorm)", got, want)
	}
	_, page := app.get("/t/" + ex.Thread.ID)
	if flash := textOf(byID(parseHTML(t, page), "flash")); !strings.Contains(flash, "did not match the extraction format") {
		t.Fatalf("flash=%q, want the schema failure", flash)
	}
	h, _ := app.DB.FindHandoffByThread(context.Background(), ex.Thread.ID)
	if got := app.handoff(h.ID); len(handoffItems(got)) != 0 || got.Summary != "" {
		t.Fatalf("a failed extraction merged %v", handoffItems(got))
	}
	// The bar offers to try again.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	evs := app.openEvents(ctx, ex.Thread.ID).all(t)
	done := parseHTML(t, evs[len(evs)-1].Data)
	if got := textOf(findOne(t, done, "span", "data-testid", "extract-error")); !strings.Contains(got, "did not match") {
		t.Fatalf("extract-error=%q, want the failure", got)
	}
	if got := textOf(findOne(t, done, "button", "data-testid", "ready-to-plan")); !strings.Contains(got, "Try again") {
		t.Fatalf("button=%q, want Try again", got)
	}
}

// reviewFixture is a handoff with one item of every source.
type reviewFixture struct {
	ex                 exchange
	h                  *store.Handoff
	pinned, ai, edited *store.Decision
	fileID, riskID     string
}

func newReviewFixture(t *testing.T, app *testApp) reviewFixture {
	t.Helper()
	ctx := context.Background()
	f := reviewFixture{ex: app.seedExchange("Auth rewrite", "Sessions?", "Use JWT in an HttpOnly cookie.")}
	var err error
	if f.pinned, _, err = app.DB.PinMessage(ctx, f.ex.Thread.ID, f.ex.Reply.ID); err != nil {
		t.Fatal(err)
	}
	hid := f.pinned.HandoffID
	conf := 0.8
	if f.ai, _, err = app.DB.CreateDecision(ctx, hid, store.DecisionCreate{Content: "Rotate keys monthly", Source: store.SourceAI,
		Confidence: &conf, MessageIDs: []string{f.ex.Reply.ID}}, 0); err != nil {
		t.Fatal(err)
	}
	d, _, err := app.DB.CreateDecision(ctx, hid, store.DecisionCreate{Content: "Postgres", Source: store.SourceAI}, 0)
	if err != nil {
		t.Fatal(err)
	}
	edit := "Use Postgres 16"
	if f.edited, _, err = app.DB.UpdateDecision(ctx, hid, d.ID, store.DecisionUpdate{Content: &edit, Version: app.handoff(hid).Version}); err != nil {
		t.Fatal(err)
	}
	fch, err := app.DB.CreateFileRef(ctx, hid, store.FileRefInput{Path: "src/auth.go", Relevance: store.LevelHigh, Context: "changes",
		Source: store.SourceAI, MessageIDs: []string{f.ex.Reply.ID}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rch, err := app.DB.CreateRisk(ctx, hid, store.RiskInput{Description: "Token theft", Severity: store.LevelMedium, Source: store.SourceAI}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.fileID, f.riskID = fch.ID, rch.ID
	f.h = app.handoff(hid)
	return f
}

func (f reviewFixture) path(rest string) string { return "/h/" + f.h.ID + rest }

func TestReviewShow(t *testing.T) {
	app := newApp(t, offline.New())
	f := newReviewFixture(t, app)

	res, page := app.get(f.path(""))
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("Status=%d, want %d", got, want)
	}
	doc := parseHTML(t, page)
	for kind, want := range map[string]string{"decisions": "3", "files": "1", "risks": "1"} {
		if got := textOf(findOne(t, doc, "span", "data-testid", "count-"+kind)); got != want {
			t.Fatalf("count-%s=%q, want %q", kind, got, want)
		}
	}
	var got []string
	for _, li := range findAll(doc, "li", "data-testid", "decision") {
		got = append(got, textOf(findOne(t, li, "span", "data-testid", "label"))+" "+
			textOf(findOne(t, li, "span", "data-testid", "source"))+" "+
			textOf(findOne(t, li, "span", "data-testid", "content")))
	}
	want := []string{"D1 PINNED Use JWT in an HttpOnly cookie.", "D2 AI Rotate keys monthly", "D3 EDITED Use Postgres 16"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("decisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ai := findOne(t, doc, "li", "id", "item-"+f.ai.ID)
	if got, want := attr(findOne(t, ai, "a", "data-testid", "source-link"), "href"), "/t/"+f.ex.Thread.ID+"#msg-"+f.ex.Reply.ID; got != want {
		t.Fatalf("source link=%q, want %q", got, want)
	}
	if got := textOf(findOne(t, ai, "span", "data-testid", "confidence")); got != "confidence 80%" {
		t.Fatalf("confidence=%q, want %q", got, "confidence 80%")
	}
	file := findOne(t, doc, "li", "id", "item-"+f.fileID)
	if textOf(findOne(t, file, "code", "data-testid", "path")) != "src/auth.go" || textOf(findOne(t, file, "span", "data-testid", "relevance")) != "high" ||
		textOf(findOne(t, file, "span", "data-testid", "source")) != "AI" {
		t.Fatalf("file item %s, want src/auth.go, high, AI", render(file))
	}
	risk := findOne(t, doc, "li", "id", "item-"+f.riskID)
	if textOf(findOne(t, risk, "span", "data-testid", "severity")) != "medium" {
		t.Fatalf("risk item %s, want severity medium", render(risk))
	}
	if n := len(findAll(doc, "", "data-testid", "review-empty")); n != 0 {
		t.Fatal("a handoff with items shows the empty state")
	}
	findOne(t, doc, "button", "data-testid", "start-planning")
	if got := attr(findOne(t, doc, "input", "id", "handoff-version"), "value"); got != fmt.Sprint(f.h.Version) {
		t.Fatalf("version field=%q, want %d", got, f.h.Version)
	}

	// Plain-form editing: ?edit= shows the item as a form.
	_, page = app.get(f.path("?edit=" + f.ai.ID))
	edit := findOne(t, parseHTML(t, page), "li", "data-testid", "decision-edit")
	if got := textOf(findOne(t, edit, "textarea", "name", "content")); got != "Rotate keys monthly" {
		t.Fatalf("edit textarea=%q, want the content", got)
	}

	res, _ = app.get("/h/nope")
	if got, want := res.StatusCode, http.StatusNotFound; got != want {
		t.Fatalf("unknown handoff: Status=%d, want %d", got, want)
	}
}

func TestReviewEmpty(t *testing.T) {
	app := newApp(t, offline.New())
	ex := app.seedExchange("Empty", "Q?", "A.")
	h, err := app.DB.EnsureHandoff(context.Background(), ex.Thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, page := app.get("/h/" + h.ID)
	doc := parseHTML(t, page)
	empty := findOne(t, doc, "div", "data-testid", "review-empty")
	if !strings.Contains(textOf(empty), "Nothing to hand off yet") {
		t.Fatalf("empty state %q, want it to say there is nothing to hand off yet", textOf(empty))
	}
	back := findOne(t, empty, "a", "href", "/t/"+ex.Thread.ID)
	if got := textOf(back); got != "Back to brainstorm" {
		t.Fatalf("link text=%q, want Back to brainstorm", got)
	}
	if n := len(findAll(doc, "", "data-testid", "start-planning")); n != 0 {
		t.Fatal("Start planning shows with nothing to plan")
	}

	// A risk alone is not enough to plan.
	if _, err := app.DB.CreateRisk(context.Background(), h.ID, store.RiskInput{Description: "r", Severity: store.LevelLow}, 0); err != nil {
		t.Fatal(err)
	}
	_, page = app.get("/h/" + h.ID)
	doc = parseHTML(t, page)
	if n := len(findAll(doc, "", "data-testid", "start-planning")); n != 0 {
		t.Fatal("Start planning shows without decisions")
	}
	if n := len(findAll(doc, "", "data-testid", "review-empty")); n != 0 {
		t.Fatal("a handoff with a risk shows the empty state")
	}
}

func TestReviewItemEditHTMX(t *testing.T) {
	app := newApp(t, offline.New())
	f := newReviewFixture(t, app)
	item := f.path("/decisions/" + f.ai.ID)

	// Edit mode, then cancel back to view mode.
	res, body := app.do(app.newRequest(http.MethodGet, item+"/edit", nil, htmxSameOrigin))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("edit: Status=%d", res.StatusCode)
	}
	if got := textOf(findOne(t, parseHTML(t, body), "textarea", "data-testid", "edit-input")); got != "Rotate keys monthly" {
		t.Fatalf("edit textarea=%q", got)
	}
	res, body = app.do(app.newRequest(http.MethodGet, item, nil, htmxSameOrigin))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("show: Status=%d", res.StatusCode)
	}
	findOne(t, parseHTML(t, body), "li", "id", "item-"+f.ai.ID)

	v := f.h.Version
	res, body = app.postForm(item, url.Values{"content": {"Rotate keys weekly"}, "version": {fmt.Sprint(v)}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("save: Status=%d, want %d; body: %s", got, want, body)
	}
	doc := parseHTML(t, body)
	li := findOne(t, doc, "li", "id", "item-"+f.ai.ID)
	if got := textOf(findOne(t, li, "span", "data-testid", "source")); got != "EDITED" {
		t.Fatalf("source=%q after an edit, want EDITED", got)
	}
	if got := textOf(findOne(t, li, "span", "data-testid", "content")); got != "Rotate keys weekly" {
		t.Fatalf("content=%q, want the edit", got)
	}
	if got := oobCount(t, doc, "decisions"); got != "3" {
		t.Fatalf("count=%q, want 3", got)
	}
	if got, want := oobVersion(t, doc), fmt.Sprint(v+1); got != want {
		t.Fatalf("version=%q, want %q", got, want)
	}
	findOne(t, doc, "div", "id", "review-footer", "hx-swap-oob", "true")

	// Someone with the old version gets 409 and keeps their draft.
	res, body = app.postForm(item, url.Values{"content": {"My stale draft"}, "version": {fmt.Sprint(v)}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusConflict; got != want {
		t.Fatalf("stale save: Status=%d, want %d; body: %s", got, want, body)
	}
	doc = parseHTML(t, body)
	findOne(t, doc, "p", "data-testid", "conflict")
	// … and sees what the other person saved.
	if got := textOf(findOne(t, doc, "p", "data-testid", "conflict-current")); !strings.Contains(got, "Rotate keys weekly") {
		t.Fatalf("conflict notice shows %q, want the other person's text", got)
	}
	if got := textOf(findOne(t, doc, "textarea", "data-testid", "edit-input")); got != "My stale draft" {
		t.Fatalf("draft=%q after a conflict, want it kept", got)
	}
	reload := findOne(t, doc, "a", "data-testid", "cancel")
	if got, want := attr(reload, "hx-get"), item; got != want {
		t.Fatalf("reload hx-get=%q, want %q", got, want)
	}
	if !strings.Contains(textOf(reload), "reload") {
		t.Fatalf("reload link %q, want it to offer a reload", textOf(reload))
	}
	// The form now carries the current version itself, kept by app.js, so
	// saving again replaces; the page's version is not touched out of band,
	// or every other stale item on the page would pass the check too.
	base := findOne(t, doc, "input", "data-base-version", "")
	if got, want := attr(base, "value"), fmt.Sprint(v+1); got != want {
		t.Fatalf("form version after conflict=%q, want %q", got, want)
	}
	if n := len(findAll(doc, "input", "id", "handoff-version")); n != 0 {
		t.Fatalf("conflict response updates the page version (%d fields), want it left alone", n)
	}
	if got := app.handoff(f.h.ID).Decisions[1].Content; got != "Rotate keys weekly" {
		t.Fatalf("stored content=%q, want the first edit kept", got)
	}

	// Plain forms get the whole page, with the draft kept in the item.
	res, body = app.postForm(item, url.Values{"content": {"stale again"}, "version": {fmt.Sprint(v)}}, sameOrigin)
	if got, want := res.StatusCode, http.StatusConflict; got != want {
		t.Fatalf("plain stale save: Status=%d, want %d", got, want)
	}
	doc = parseHTML(t, body)
	findOne(t, doc, "p", "data-testid", "conflict")
	if got := textOf(findOne(t, doc, "textarea", "data-testid", "edit-input")); got != "stale again" {
		t.Fatalf("plain stale save: draft=%q, want it kept", got)
	}
	if got := app.handoff(f.h.ID).Decisions[1].Content; got != "Rotate keys weekly" {
		t.Fatalf("stored content=%q after a plain stale save, want it unchanged", got)
	}

	// Bad input is refused with a message and changes nothing.
	before := app.handoff(f.h.ID)
	for name, content := range map[string]string{"empty": "  ", "too long": strings.Repeat("x", 2001), "control": "a\x00b"} {
		res, body = app.postForm(item, url.Values{"content": {content}}, htmxSameOrigin)
		if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
			t.Fatalf("%s: Status=%d, want %d", name, got, want)
		}
		if strings.TrimSpace(textOf(parseHTML(t, body))) == "" {
			t.Fatalf("%s: no message in %q", name, body)
		}
	}
	if after := app.handoff(f.h.ID); after.Version != before.Version {
		t.Fatalf("refused edits changed the version %d→%d", before.Version, after.Version)
	}
	res, _ = app.postForm(f.path("/decisions/nope"), url.Values{"content": {"x"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusNotFound; got != want {
		t.Fatalf("unknown item: Status=%d, want %d", got, want)
	}
}

func TestReviewItemOfAnotherKind(t *testing.T) {
	app := newApp(t, offline.New())
	f := newReviewFixture(t, app)
	for _, path := range []string{
		f.path("/files/" + f.ai.ID + "/edit"),
		f.path("/files/" + f.ai.ID),
		f.path("/risks/" + f.fileID + "/edit"),
		f.path("/decisions/" + f.riskID),
	} {
		res, _ := app.do(app.newRequest(http.MethodGet, path, nil, htmxSameOrigin))
		if got, want := res.StatusCode, http.StatusNotFound; got != want {
			t.Fatalf("GET %s: Status=%d, want %d", path, got, want)
		}
	}
	res, _ := app.postForm(f.path("/widgets"), url.Values{"content": {"x"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusNotFound; got != want {
		t.Fatalf("unknown kind: Status=%d, want %d", got, want)
	}
}

func TestReviewItemDeleteAndAdd(t *testing.T) {
	app := newApp(t, offline.New())
	f := newReviewFixture(t, app)

	res, body := app.postForm(f.path("/decisions/"+f.edited.ID+"/delete"), url.Values{"version": {fmt.Sprint(f.h.Version)}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("delete: Status=%d, want %d; body: %s", got, want, body)
	}
	doc := parseHTML(t, body)
	if got := oobCount(t, doc, "decisions"); got != "2" {
		t.Fatalf("count after delete=%q, want 2", got)
	}
	if byID(doc, "item-"+f.edited.ID) != nil {
		t.Fatal("the deleted item is still in the response")
	}
	if got := len(app.handoff(f.h.ID).Decisions); got != 2 {
		t.Fatalf("stored decisions=%d, want 2 (hard delete)", got)
	}
	// Stale delete.
	res, _ = app.postForm(f.path("/decisions/"+f.ai.ID+"/delete"), url.Values{"version": {fmt.Sprint(f.h.Version)}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusConflict; got != want {
		t.Fatalf("stale delete: Status=%d, want %d", got, want)
	}
	if got := len(app.handoff(f.h.ID).Decisions); got != 2 {
		t.Fatalf("a stale delete removed a decision: %d left", got)
	}

	// Add a decision: a person's, so PINNED.
	res, body = app.postForm(f.path("/decisions"), url.Values{"content": {"Log every login"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("add: Status=%d, want %d; body: %s", got, want, body)
	}
	doc = parseHTML(t, body)
	li := findOne(t, doc, "li", "data-testid", "decision")
	if textOf(findOne(t, li, "span", "data-testid", "source")) != "PINNED" || textOf(findOne(t, li, "span", "data-testid", "label")) != "D3" {
		t.Fatalf("added item %s, want D3 PINNED", render(li))
	}
	if got := oobCount(t, doc, "decisions"); got != "3" {
		t.Fatalf("count after add=%q, want 3", got)
	}
	h := app.handoff(f.h.ID)
	if d := h.Decisions[2]; d.Content != "Log every login" || d.Source != store.SourcePinned {
		t.Fatalf("stored %+v, want the added decision, user-pinned", d)
	}
	// Empty is refused.
	res, _ = app.postForm(f.path("/decisions"), url.Values{"content": {""}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
		t.Fatalf("add empty: Status=%d, want %d", got, want)
	}
	// Plain form: Post/Redirect/Get.
	res, _ = app.postForm(f.path("/decisions"), url.Values{"content": {"Another"}}, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("plain add: Status=%d, want %d", got, want)
	}
	if got := len(app.handoff(f.h.ID).Decisions); got != 4 {
		t.Fatalf("decisions=%d after the plain add, want 4", got)
	}
}

func TestReviewFilesAndRisks(t *testing.T) {
	app := newApp(t, offline.New())
	f := newReviewFixture(t, app)
	before := app.handoff(f.h.ID)

	for _, bad := range []string{"/etc/passwd", "../x", "src/../../etc/passwd", "https://evil.example/x.go", `C:\win.ini`, "~/x", "src/a b.go"} {
		res, body := app.postForm(f.path("/files"), url.Values{"path": {bad}, "relevance": {"high"}}, htmxSameOrigin)
		if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
			t.Fatalf("path %q: Status=%d, want %d", bad, got, want)
		}
		if !strings.Contains(textOf(parseHTML(t, body)), "relative path") {
			t.Fatalf("path %q: body %q, want a message about relative paths", bad, body)
		}
	}
	res, _ := app.postForm(f.path("/files"), url.Values{"path": {"src/x.go"}, "relevance": {"critical"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
		t.Fatalf("relevance critical: Status=%d, want %d", got, want)
	}
	res, _ = app.postForm(f.path("/risks"), url.Values{"description": {"x"}, "severity": {"catastrophic"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
		t.Fatalf("severity catastrophic: Status=%d, want %d", got, want)
	}
	res, _ = app.postForm(f.path("/files/"+f.fileID), url.Values{"path": {"../outside.go"}, "relevance": {"low"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
		t.Fatalf("edit to a bad path: Status=%d, want %d", got, want)
	}
	after := app.handoff(f.h.ID)
	if strings.Join(handoffItems(after), "\n") != strings.Join(handoffItems(before), "\n") || after.Version != before.Version {
		t.Fatalf("refused changes changed the handoff: %v", handoffItems(after))
	}

	// A good path is cleaned; editing sets relevance and EDITED.
	res, body := app.postForm(f.path("/files"), url.Values{"path": {"./src/new.go"}, "relevance": {"low"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("add file: Status=%d, want %d; body: %s", got, want, body)
	}
	if got := textOf(findOne(t, parseHTML(t, body), "code", "data-testid", "path")); got != "src/new.go" {
		t.Fatalf("added path=%q, want src/new.go", got)
	}
	res, body = app.postForm(f.path("/files/"+f.fileID), url.Values{"path": {"src/auth.go"}, "relevance": {"low"}, "context": {"only read now"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("edit file: Status=%d, want %d; body: %s", got, want, body)
	}
	li := findOne(t, parseHTML(t, body), "li", "id", "item-"+f.fileID)
	if textOf(findOne(t, li, "span", "data-testid", "relevance")) != "low" || textOf(findOne(t, li, "span", "data-testid", "source")) != "EDITED" {
		t.Fatalf("edited file %s, want relevance low, EDITED", render(li))
	}
	res, body = app.postForm(f.path("/risks/"+f.riskID), url.Values{"description": {"Token theft"}, "severity": {"high"}, "mitigation": {"rotate"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("edit risk: Status=%d, want %d; body: %s", got, want, body)
	}
	li = findOne(t, parseHTML(t, body), "li", "id", "item-"+f.riskID)
	if textOf(findOne(t, li, "span", "data-testid", "severity")) != "high" || textOf(findOne(t, li, "span", "data-testid", "source")) != "EDITED" {
		t.Fatalf("edited risk %s, want severity high, EDITED", render(li))
	}
	res, body = app.postForm(f.path("/risks/"+f.riskID+"/delete"), nil, htmxSameOrigin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("delete risk: Status=%d", res.StatusCode)
	}
	if got := oobCount(t, parseHTML(t, body), "risks"); got != "0" {
		t.Fatalf("risk count=%q, want 0", got)
	}
	// File edit conflicts keep the draft too.
	res, body = app.postForm(f.path("/files/"+f.fileID), url.Values{"path": {"src/draft.go"}, "relevance": {"high"}, "version": {"1"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusConflict; got != want {
		t.Fatalf("stale file edit: Status=%d, want %d", got, want)
	}
	doc := parseHTML(t, body)
	findOne(t, doc, "p", "data-testid", "conflict")
	findOne(t, doc, "input", "name", "path", "value", "src/draft.go")
}

// TestFreezeForm checks "Start planning": it freezes a snapshot, which the
// review screen lists, and (since plans exist) goes on to the plan page.
func TestFreezeForm(t *testing.T) {
	app := newApp(t, offline.New())
	f := newReviewFixture(t, app)

	res, _ := app.postForm(f.path("/freeze"), url.Values{"version": {fmt.Sprint(f.h.Version)}}, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("freeze: Status=%d, want %d", got, want)
	}
	if got := res.Header.Get("Location"); !strings.HasPrefix(got, "/p/") && got != f.path("") {
		t.Fatalf("Location=%q, want the plan page or the review", got)
	}
	snaps, err := app.DB.FindSnapshots(context.Background(), f.h.ID)
	if err != nil || len(snaps) != 1 {
		t.Fatalf("snapshots=%d err=%v, want 1", len(snaps), err)
	}
	_, page := app.get(f.path(""))
	doc := parseHTML(t, page)
	list := findOne(t, doc, "ul", "data-testid", "snapshots")
	if items := findAll(list, "li"); len(items) != 1 || !strings.Contains(textOf(items[0]), snaps[0].SHA256[:12]) || !strings.Contains(textOf(items[0]), "3 decisions") {
		t.Fatalf("snapshot list %s, want one entry with its sha256 and 3 decisions", render(list))
	}
	if got := strings.TrimSpace(textOf(findOne(t, doc, "span", "data-testid", "handoff-status"))); got != "Frozen" {
		t.Fatalf("status=%q, want Frozen", got)
	}

	// An edit makes it a draft again; the snapshot stays as it was.
	edit := "Rotate keys weekly"
	if _, _, err := app.DB.UpdateDecision(context.Background(), f.h.ID, f.ai.ID, store.DecisionUpdate{Content: &edit, Version: app.handoff(f.h.ID).Version}); err != nil {
		t.Fatal(err)
	}
	_, page = app.get(f.path(""))
	if got := strings.TrimSpace(textOf(findOne(t, parseHTML(t, page), "span", "data-testid", "handoff-status"))); got != "Draft" {
		t.Fatalf("status after an edit=%q, want Draft", got)
	}
	if sn, _ := app.DB.FindSnapshotByID(context.Background(), snaps[0].ID); string(sn.JSON) != string(snaps[0].JSON) {
		t.Fatal("an edit changed the snapshot")
	}

	// With htmx: HX-Redirect, and a new snapshot.
	res, _ = app.postForm(f.path("/freeze"), nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("htmx freeze: Status=%d, want %d", got, want)
	}
	if got := res.Header.Get("HX-Redirect"); !strings.HasPrefix(got, "/p/") && got != f.path("") {
		t.Fatalf("HX-Redirect=%q, want the plan page or the review", got)
	}
	if snaps, _ := app.DB.FindSnapshots(context.Background(), f.h.ID); len(snaps) != 2 {
		t.Fatalf("snapshots=%d after freezing again, want 2", len(snaps))
	}
}

func TestFreezeWithoutDecisions(t *testing.T) {
	app := newApp(t, offline.New())
	ex := app.seedExchange("Empty", "Q?", "A.")
	h, _ := app.DB.EnsureHandoff(context.Background(), ex.Thread.ID)

	res, _ := app.postForm("/h/"+h.ID+"/freeze", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("plain freeze: Status=%d, want %d", got, want)
	}
	_, page := app.get("/h/" + h.ID)
	if flash := textOf(byID(parseHTML(t, page), "flash")); !strings.Contains(flash, "Nothing to plan yet") {
		t.Fatalf("flash=%q, want it to say there is nothing to plan", flash)
	}
	res, body := app.postForm("/h/"+h.ID+"/freeze", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
		t.Fatalf("htmx freeze: Status=%d, want %d", got, want)
	}
	if !strings.Contains(body, "Nothing to plan yet") {
		t.Fatalf("body %q, want the reason", body)
	}
	if snaps, _ := app.DB.FindSnapshots(context.Background(), h.ID); len(snaps) != 0 {
		t.Fatalf("a refused freeze stored %d snapshots", len(snaps))
	}
}
