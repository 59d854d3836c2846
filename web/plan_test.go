package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	xhtml "golang.org/x/net/html"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// planMarkdown is what the scripted plan agent writes: every construct the
// plan page must render (a table, a task list, a code block) and two it must
// defuse (a script, a remote image). It cites D1 and D2, not the third decision.
const planMarkdown = "# Billing export\n\n" +
	"## Steps\n\n" +
	"1. Add the CSV exporter (D1).\n" +
	"2. Stream rows from the invoices table (D2).\n\n" +
	"## Files\n\n" +
	"| File | Relevance | Change |\n" +
	"| --- | --- | --- |\n" +
	"| billing/export.go | high | new exporter |\n\n" +
	"## Checklist\n\n" +
	"- [x] Agree on the columns\n" +
	"- [ ] Write the exporter\n\n" +
	"```go\n" +
	"func Export(w io.Writer) error {\n\treturn nil\n}\n" +
	"```\n\n" +
	"<script>alert(1)</script>\n\n" +
	"![x](https://evil.example/x.png)\n"

const planSummary = "Exports invoices as CSV, streamed."

// planTurn is one scripted reply of the plan agent.
type planTurn struct {
	text  string
	calls []agent.ToolCallPart
}

// planModel is a scripted plan agent behind agent.Provider. A request's
// turn is how many replies its conversation already holds, so every run
// (a rerun too) follows the script from its start; turns past the end
// repeat the last one. Before, when set, runs first with the call number
// over all runs (1, 2, …) and the turn; an error it returns fails the call.
type planModel struct {
	turns  []planTurn
	before func(ctx context.Context, call, turn int) error

	mu   sync.Mutex
	reqs []agent.Request
}

// newPlanModel scripts a run that reads the handoff context, then writes
// planMarkdown and completes.
func newPlanModel() *planModel {
	return &planModel{turns: []planTurn{
		{calls: []agent.ToolCallPart{{ID: "call_ctx", Name: agent.ToolGetHandoffContext, Input: json.RawMessage(`{}`)}}},
		{text: planMarkdown, calls: []agent.ToolCallPart{{ID: "call_done", Name: agent.ToolCompletePlanning,
			Input: json.RawMessage(`{"summary":"` + planSummary + `"}`)}}},
	}}
}

func (m *planModel) Name() string  { return "fake" }
func (m *planModel) Model() string { return "plan-fake-1" }

// requests returns the requests received so far.
func (m *planModel) requests() []agent.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agent.Request(nil), m.reqs...)
}

func (m *planModel) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	call := len(m.reqs)
	m.mu.Unlock()
	turn := 0
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleAssistant {
			turn++
		}
	}
	if m.before != nil {
		if err := m.before(ctx, call, turn); err != nil {
			return nil, err
		}
	}
	t := m.turns[min(turn, len(m.turns)-1)]
	reply := &agent.Reply{StopReason: agent.StopEnd, Model: m.Model(),
		Usage: agent.Usage{InputTokens: 100, OutputTokens: 10, ResponseID: "resp"}}
	if t.text != "" {
		// Stream in small pieces, cut anywhere, as real providers do.
		for rest := t.text; rest != ""; {
			n := min(len(rest), 17)
			if err := emit(agent.Delta{Text: rest[:n]}); err != nil {
				return nil, err
			}
			rest = rest[n:]
		}
		reply.Parts = append(reply.Parts, agent.TextPart{Text: t.text})
	}
	for _, c := range t.calls {
		reply.Parts = append(reply.Parts, c)
		reply.StopReason = agent.StopToolUse
	}
	return reply, ctx.Err()
}

var _ agent.Provider = (*planModel)(nil)

// planSetup is a thread whose handoff has decisions (D1, D2, …), a file, a
// risk and a summary, not yet frozen.
type planSetup struct {
	thread    *store.Thread
	handoffID string
	decisions []*store.Decision // D1, D2, …
}

// newPlanSetup makes a handoff with three decisions.
func newPlanSetup(t *testing.T, app *testApp) planSetup {
	t.Helper()
	return newPlanSetupOf(t, app, "Export invoices as CSV.", "Stream rows instead of loading every invoice.", "Keep exports for 30 days.")
}

// newPlanSetupOf is newPlanSetup with the given decisions.
func newPlanSetupOf(t *testing.T, app *testApp, decisions ...string) planSetup {
	t.Helper()
	ctx := context.Background()
	s := planSetup{thread: app.createThread("Billing export")}
	h, err := app.DB.EnsureHandoff(ctx, s.thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.handoffID = h.ID
	for _, c := range decisions {
		d, _, err := app.DB.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: c}, 0)
		if err != nil {
			t.Fatal(err)
		}
		s.decisions = append(s.decisions, d)
	}
	if _, err := app.DB.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "billing/export.go", Relevance: store.LevelHigh, Context: "new exporter"}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Large exports time out", Severity: store.LevelMedium}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.SetSummary(ctx, h.ID, "Finance wants invoices out as CSV.", 0); err != nil {
		t.Fatal(err)
	}
	return s
}

// freeze presses "Start planning" as a plain form and returns the ID of the
// plan it started, from the redirect.
func (s planSetup) freeze(t *testing.T, app *testApp) string {
	t.Helper()
	res, body := app.postForm("/h/"+s.handoffID+"/freeze", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("freeze: Status=%d, want %d; body: %s", got, want, body)
	}
	return planIDFrom(t, res.Header.Get("Location"))
}

// planIDFrom returns the plan ID of a /p/{id} location.
func planIDFrom(t *testing.T, loc string) string {
	t.Helper()
	id, ok := strings.CutPrefix(loc, "/p/")
	if !ok || id == "" || strings.Contains(id, "/") {
		t.Fatalf("Location=%q, want /p/{plan id}", loc)
	}
	return id
}

// waitPlan polls the store until the plan has finished and returns it; it
// fails the test unless the plan ended with status.
func (a *testApp) waitPlan(id string, status store.PlanStatus) *store.Plan {
	a.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := a.DB.FindPlanByID(context.Background(), id)
		if err != nil {
			a.t.Fatal(err)
		}
		if p.Status != store.PlanRunning {
			if p.Status != status {
				a.t.Fatalf("plan ended %q (error %q), want %q", p.Status, p.Error, status)
			}
			return p
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("plan %s still running after 10s, want %q", id, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openPlanEvents opens a plan's progress stream as the page's sse extension does.
func (a *testApp) openPlanEvents(ctx context.Context, planID string) *sseStream {
	a.t.Helper()
	req := a.newRequest(http.MethodGet, "/p/"+planID+"/events", nil,
		http.Header{"Accept": {"text/event-stream"}, "Accept-Encoding": {"gzip"}, "Sec-Fetch-Site": {"same-origin"}})
	res, err := a.Client.Do(req.WithContext(ctx))
	if err != nil {
		a.t.Fatalf("open plan events: %v", err)
	}
	a.t.Cleanup(func() { res.Body.Close() })
	if got, want := res.StatusCode, http.StatusOK; got != want {
		a.t.Fatalf("plan events: Status=%d, want %d", got, want)
	}
	if got := res.Header.Get("Content-Encoding"); got != "" {
		a.t.Fatalf("plan events Content-Encoding=%q, want none (a compressed stream is buffered)", got)
	}
	return &sseStream{Res: res, r: bufio.NewReader(res.Body)}
}

// mustNext reads the next event of a stream.
func mustNext(t *testing.T, s *sseStream) sseEvent {
	t.Helper()
	ev, err := s.next()
	if err != nil {
		t.Fatalf("read event: %v", err)
	}
	return ev
}

// stepText is the plain words of a "step" event (its usage note dropped).
func stepText(t *testing.T, ev sseEvent) string {
	t.Helper()
	if ev.Event != "step" {
		t.Fatalf("event %q (%q), want a step", ev.Event, ev.Data)
	}
	li := findOne(t, parseHTML(t, ev.Data), "li", "data-testid", "plan-step")
	var words strings.Builder
	for c := li.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xhtml.TextNode {
			words.WriteString(c.Data)
		}
	}
	return strings.TrimSpace(words.String())
}

// recvWithin receives from ch or fails the test after five seconds.
func recvWithin[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func TestPlanFreezeStartsPlanning(t *testing.T) {
	app := newApp(t, newPlanModel())
	s := newPlanSetup(t, app)

	// A plain form is redirected to the plan page.
	pid := s.freeze(t, app)
	p := app.waitPlan(pid, store.PlanComplete)
	if p.HandoffID != s.handoffID || p.Version != 1 {
		t.Fatalf("plan %+v, want version 1 of handoff %s", p, s.handoffID)
	}
	snaps, err := app.DB.FindSnapshots(context.Background(), s.handoffID)
	if err != nil || len(snaps) != 1 || snaps[0].ID != p.SnapshotID {
		t.Fatalf("snapshots=%v err=%v, want the one the plan is written from", snaps, err)
	}

	// With htmx: HX-Redirect to the new plan, from a new snapshot.
	res, body := app.postForm("/h/"+s.handoffID+"/freeze", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("htmx freeze: Status=%d, want %d; body: %s", got, want, body)
	}
	pid2 := planIDFrom(t, res.Header.Get("HX-Redirect"))
	p2 := app.waitPlan(pid2, store.PlanComplete)
	if pid2 == pid || p2.SnapshotID == p.SnapshotID {
		t.Fatalf("htmx freeze planned %s from snapshot %s, want a new plan of a new snapshot", pid2, p2.SnapshotID)
	}
}

func TestPlanEventsStream(t *testing.T) {
	model := newPlanModel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	model.before = func(ctx context.Context, call, turn int) error {
		if call == 2 { // the call that writes the plan
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	app := newApp(t, model)
	s := newPlanSetup(t, app)
	pid := s.freeze(t, app)
	recvWithin(t, started, "the second model call")

	// While the agent works the page follows it live, with a Cancel button.
	_, page := app.get("/p/" + pid)
	doc := parseHTML(t, page)
	live := findOne(t, doc, "section", "data-testid", "plan-live")
	if got, want := attr(live, "sse-connect"), "/p/"+pid+"/events"; got != want {
		t.Fatalf("sse-connect=%q, want %q", got, want)
	}
	findOne(t, live, "button", "data-testid", "cancel-plan")
	if got := textOf(findOne(t, doc, "span", "data-testid", "plan-status")); got != "running" {
		t.Fatalf("status=%q, want running", got)
	}
	if got := findAll(doc, "section", "data-testid", "plan-body"); len(got) != 0 {
		t.Fatalf("a running plan shows its body")
	}

	// A page that opens late gets the steps so far, replayed.
	stream := app.openPlanEvents(context.Background(), pid)
	var got []string
	for range 2 {
		got = append(got, stepText(t, mustNext(t, stream)))
	}
	if want := []string{"Step 1: asked for get_handoff_context", "Read the handoff context"}; !cmp.Equal(got, want) {
		t.Fatalf("replayed steps=%q, want %q", got, want)
	}

	close(release)
	var deltas strings.Builder
	var done []sseEvent
	for _, ev := range stream.all(t) {
		switch ev.Event {
		case "delta":
			if len(done) > 0 {
				t.Fatalf("delta after done")
			}
			deltas.WriteString(ev.Data)
		case "step":
			got = append(got, stepText(t, ev))
		case "done":
			done = append(done, ev)
		default:
			t.Fatalf("unexpected event %q", ev.Event)
		}
	}
	want := []string{"Step 1: asked for get_handoff_context", "Read the handoff context",
		fmt.Sprintf("Step 2: wrote %d words and asked for complete_planning", len(strings.Fields(planMarkdown))), "Finished planning"}
	if !cmp.Equal(got, want) {
		t.Fatalf("steps=%q, want %q", got, want)
	}
	// Deltas are HTML-escaped text that adds up to the plan.
	if strings.Contains(deltas.String(), "<script") {
		t.Fatalf("a delta carries a raw <script>: %q", deltas.String())
	}
	if got := html.UnescapeString(deltas.String()); got != planMarkdown {
		t.Fatalf("deltas add up to %q, want the plan %q", got, planMarkdown)
	}
	if len(done) != 1 {
		t.Fatalf("%d done events, want 1", len(done))
	}
	checkDone(t, done[0], "complete")

	// Once the plan is finished, a page gets the plan at once.
	evs := app.openPlanEvents(context.Background(), pid).all(t)
	if len(evs) != 1 {
		t.Fatalf("events after the end: %v, want only done", evs)
	}
	checkDone(t, evs[0], "complete")
}

func TestPlanStepsAreText(t *testing.T) {
	// A tool name is the model's to choose: the step that tells people about
	// it shows it as text.
	const bad = `<img src=x onerror=alert(1)>`
	model := newPlanModel()
	model.turns[0].calls = []agent.ToolCallPart{{ID: "call_bad", Name: bad, Input: json.RawMessage(`{}`)}}
	app := newApp(t, model)
	s := newPlanSetup(t, app)
	pid := s.freeze(t, app)
	app.waitPlan(pid, store.PlanComplete)

	_, page := app.get("/p/" + pid)
	doc := parseHTML(t, page)
	if got := findAll(doc, "img"); len(got) != 0 {
		t.Fatalf("a step became markup: %s", render(got[0]))
	}
	steps := findAll(doc, "li", "data-testid", "plan-step")
	if len(steps) != 4 {
		t.Fatalf("%d steps, want 4", len(steps))
	}
	if got, want := strings.TrimSpace(textOf(steps[1])), "Asked for a tool that does not exist ("+bad+")"; got != want {
		t.Fatalf("step=%q, want %q", got, want)
	}
	if got := attr(steps[1], "class"); got != "error" {
		t.Fatalf("failed tool call class=%q, want error", got)
	}
}

// checkDone checks a "done" event: the plan body with its coverage, and the
// status tag swapped out of band.
func checkDone(t *testing.T, ev sseEvent, status string) *xhtml.Node {
	t.Helper()
	if ev.Event != "done" {
		t.Fatalf("event %q, want done", ev.Event)
	}
	doc := parseHTML(t, ev.Data)
	body := findOne(t, doc, "section", "data-testid", "plan-body")
	if got, want := textOf(findOne(t, body, "strong", "data-testid", "coverage-text")), "covers 2 of 3 decisions"; got != want {
		t.Fatalf("coverage=%q, want %q", got, want)
	}
	tag := findOne(t, doc, "span", "data-testid", "plan-status")
	if got := attr(tag, "hx-swap-oob"); got != "true" {
		t.Fatalf("status tag hx-swap-oob=%q, want true", got)
	}
	if got := textOf(tag); got != status {
		t.Fatalf("status=%q, want %q", got, status)
	}
	return body
}

func TestPlanPageRendering(t *testing.T) {
	app := newApp(t, newPlanModel())
	s := newPlanSetup(t, app)
	pid := s.freeze(t, app)
	p := app.waitPlan(pid, store.PlanComplete)
	if p.Markdown != planMarkdown || p.Summary != planSummary {
		t.Fatalf("Markdown=%q Summary=%q, want the model's", p.Markdown, p.Summary)
	}

	res, page := app.get("/p/" + pid)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET plan: Status=%d, want %d", got, want)
	}
	doc := parseHTML(t, page)
	if got := textOf(findAll(doc, "h1")[0]); got != "Plan v1: Billing export" {
		t.Fatalf("h1=%q, want the version and the thread's title", got)
	}
	if got := textOf(findOne(t, doc, "span", "data-testid", "plan-status")); got != "complete" {
		t.Fatalf("status=%q, want complete", got)
	}
	article := findOne(t, doc, "article", "data-testid", "plan-markdown")

	// GFM: a table and a task list.
	table := findOne(t, article, "table")
	if got := len(findAll(table, "th")); got != 3 {
		t.Fatalf("table has %d headers, want 3", got)
	}
	if cells := findAll(table, "td"); len(cells) != 3 || textOf(cells[0]) != "billing/export.go" {
		t.Fatalf("table cells %s, want the file row", render(table))
	}
	boxes := findAll(article, "input", "type", "checkbox")
	if len(boxes) != 2 {
		t.Fatalf("found %d checkboxes, want 2 in:\n%s", len(boxes), render(article))
	}
	if _, checked := attrOf(boxes[0], "checked"); !checked {
		t.Fatalf("the done task is not checked: %s", render(boxes[0]))
	}
	if _, checked := attrOf(boxes[1], "checked"); checked {
		t.Fatalf("the open task is checked: %s", render(boxes[1]))
	}

	// Code is highlighted through CSS classes, never inline styles (the CSP
	// forbids them).
	pre := findOne(t, article, "pre", "class", "chroma")
	if !strings.Contains(textOf(pre), "func Export(w io.Writer) error") {
		t.Fatalf("code block %q, want the code", textOf(pre))
	}
	classed := 0
	for _, sp := range findAll(pre, "span") {
		if c := attr(sp, "class"); c != "" && c != "line" && c != "cl" {
			classed++
		}
	}
	if classed == 0 {
		t.Fatalf("no highlighted tokens in %s", render(pre))
	}
	for n := range doc.Descendants() {
		if _, ok := attrOf(n, "style"); ok {
			t.Fatalf("style attribute on %s", render(n))
		}
	}

	// The script is shown as text, never run; the image is a link, never loaded.
	if got := findAll(article, "script"); len(got) != 0 {
		t.Fatalf("the plan holds a <script>: %s", render(got[0]))
	}
	for _, sc := range findAll(doc, "script") {
		if attr(sc, "src") == "" || strings.TrimSpace(textOf(sc)) != "" {
			t.Fatalf("inline script on the page: %s", render(sc))
		}
	}
	if !strings.Contains(textOf(article), "<script>alert(1)</script>") {
		t.Fatalf("the plan's text %q, want the script shown as text", textOf(article))
	}
	if got := findAll(doc, "img"); len(got) != 0 {
		t.Fatalf("the page has an image: %s", render(got[0]))
	}
	link := findOne(t, article, "a", "href", "https://evil.example/x.png")
	if rel := attr(link, "rel"); !strings.Contains(rel, "nofollow") || !strings.Contains(rel, "noreferrer") {
		t.Fatalf("image link rel=%q, want nofollow noreferrer", rel)
	}

	// Coverage: 2 of 3, the uncovered decision listed and linked to the review.
	if got, want := textOf(findOne(t, doc, "strong", "data-testid", "coverage-text")), "covers 2 of 3 decisions"; got != want {
		t.Fatalf("coverage=%q, want %q", got, want)
	}
	uncovered := findAll(findOne(t, doc, "ul", "data-testid", "uncovered"), "li")
	if len(uncovered) != 1 {
		t.Fatalf("%d uncovered decisions listed, want 1", len(uncovered))
	}
	d3 := s.decisions[2]
	a := findOne(t, uncovered[0], "a")
	if got, want := attr(a, "href"), "/h/"+s.handoffID+"#item-"+d3.ID; got != want {
		t.Fatalf("uncovered link=%q, want %q", got, want)
	}
	if got := textOf(uncovered[0]); !strings.Contains(got, "D3") || !strings.Contains(got, d3.Content) {
		t.Fatalf("uncovered item %q, want D3 and its content", got)
	}

	// Actions: download and copy the markdown as written; plan again.
	if got, want := attr(findOne(t, doc, "a", "data-testid", "download"), "href"), "/p/"+pid+"/plan.md"; got != want {
		t.Fatalf("download href=%q, want %q", got, want)
	}
	if got := textOf(findOne(t, doc, "textarea", "id", "plan-source")); got != planMarkdown {
		t.Fatalf("copy source=%q, want the markdown", got)
	}
	if got := strings.TrimSpace(textOf(findOne(t, doc, "button", "data-testid", "rerun"))); got != "Plan again" {
		t.Fatalf("rerun button=%q, want Plan again", got)
	}
	// The steps that wrote it stay listed.
	if got := len(findAll(doc, "li", "data-testid", "plan-step")); got != 4 {
		t.Fatalf("%d steps listed, want 4", got)
	}
	if got := findAll(doc, "section", "data-testid", "plan-live"); len(got) != 0 {
		t.Fatalf("a finished plan still follows progress")
	}
}

func TestPlanDownload(t *testing.T) {
	app := newApp(t, newPlanModel())
	s := newPlanSetup(t, app)
	pid := s.freeze(t, app)
	app.waitPlan(pid, store.PlanComplete)

	res, body := app.get("/p/" + pid + "/plan.md")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("download: Status=%d, want %d", got, want)
	}
	if got, want := res.Header.Get("Content-Type"), "text/markdown; charset=utf-8"; got != want {
		t.Fatalf("Content-Type=%q, want %q", got, want)
	}
	if got, want := res.Header.Get("Content-Disposition"), `attachment; filename="billing-export-plan-v1.md"`; got != want {
		t.Fatalf("Content-Disposition=%q, want %q", got, want)
	}
	if body != planMarkdown {
		t.Fatalf("body=%q, want the markdown exactly: %q", body, planMarkdown)
	}
}

func TestPlanRerunMakesVersions(t *testing.T) {
	app := newApp(t, newPlanModel())
	s := newPlanSetup(t, app)
	pid := s.freeze(t, app)
	p1 := app.waitPlan(pid, store.PlanComplete)

	res, body := app.postForm("/p/"+pid+"/rerun", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("rerun: Status=%d, want %d; body: %s", got, want, body)
	}
	pid2 := planIDFrom(t, res.Header.Get("Location"))
	p2 := app.waitPlan(pid2, store.PlanComplete)
	if pid2 == pid || p2.Version != 2 || p2.SnapshotID != p1.SnapshotID {
		t.Fatalf("rerun made %s v%d of snapshot %s, want v2 of the same snapshot %s", pid2, p2.Version, p2.SnapshotID, p1.SnapshotID)
	}
	if snaps, _ := app.DB.FindSnapshots(context.Background(), s.handoffID); len(snaps) != 1 {
		t.Fatalf("rerun froze again: %d snapshots, want 1", len(snaps))
	}

	_, page := app.get("/p/" + pid2)
	doc := parseHTML(t, page)
	if got := textOf(findAll(doc, "h1")[0]); !strings.HasPrefix(got, "Plan v2") {
		t.Fatalf("h1=%q, want Plan v2", got)
	}
	items := findAll(findOne(t, doc, "ul", "data-testid", "plan-versions"), "li")
	if len(items) != 2 {
		t.Fatalf("%d versions listed, want 2", len(items))
	}
	// Newest first; the version shown is not a link, the other one is.
	if got := textOf(findOne(t, items[0], "strong")); got != "v2" || len(findAll(items[0], "a")) != 0 {
		t.Fatalf("first version %s, want v2 as the current one", render(items[0]))
	}
	if a := findOne(t, items[1], "a"); textOf(a) != "v1" || attr(a, "href") != "/p/"+pid {
		t.Fatalf("second version %s, want a link to v1", render(items[1]))
	}
	for _, li := range items {
		if got := textOf(li); !strings.Contains(got, "complete") || !strings.Contains(got, "covers 2 of 3") {
			t.Fatalf("version %q, want its status and coverage", got)
		}
	}
	// The first version's page lists both as well, linking to v2.
	_, page = app.get("/p/" + pid)
	if a := findOne(t, findOne(t, parseHTML(t, page), "ul", "data-testid", "plan-versions"), "a"); attr(a, "href") != "/p/"+pid2 {
		t.Fatalf("v1's versions link to %q, want v2", attr(a, "href"))
	}
	res, _ = app.get("/p/" + pid2 + "/plan.md")
	if got, want := res.Header.Get("Content-Disposition"), `attachment; filename="billing-export-plan-v2.md"`; got != want {
		t.Fatalf("Content-Disposition=%q, want %q", got, want)
	}
}

func TestPlanCancel(t *testing.T) {
	model := newPlanModel()
	started := make(chan struct{}, 1)
	model.before = func(ctx context.Context, call, turn int) error {
		if call == 2 { // blocks until cancelled
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	app := newApp(t, model)
	s := newPlanSetup(t, app)
	pid := s.freeze(t, app)
	recvWithin(t, started, "the second model call")
	stream := app.openPlanEvents(context.Background(), pid)

	res, body := app.postForm("/p/"+pid+"/cancel", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusNoContent; got != want {
		t.Fatalf("htmx cancel: Status=%d, want %d; body: %s", got, want, body)
	}
	p := app.waitPlan(pid, store.PlanCancelled)
	if p.Error != "Planning was cancelled." || !strings.HasPrefix(p.Markdown, "> **Unfinished plan.** Planning was cancelled") {
		t.Fatalf("Error=%q Markdown=%q, want the cancellation noted", p.Error, p.Markdown)
	}
	// The open page is told, and its stream ends.
	evs := stream.all(t)
	if len(evs) == 0 {
		t.Fatalf("no events after cancelling")
	}
	if last := evs[len(evs)-1]; last.Event != "done" || textOf(findOne(t, parseHTML(t, last.Data), "span", "data-testid", "plan-status")) != "cancelled" {
		t.Fatalf("last event %v, want done with status cancelled", last)
	}

	_, page := app.get("/p/" + pid)
	doc := parseHTML(t, page)
	if got := textOf(findOne(t, doc, "span", "data-testid", "plan-status")); got != "cancelled" {
		t.Fatalf("status=%q, want cancelled", got)
	}
	if got := textOf(findOne(t, doc, "p", "data-testid", "plan-error")); got != "Planning was cancelled." {
		t.Fatalf("error=%q, want the cancellation", got)
	}
	if got := strings.TrimSpace(textOf(findOne(t, doc, "button", "data-testid", "rerun"))); got != "Retry" {
		t.Fatalf("rerun button=%q, want Retry", got)
	}

	// Retry plans the same snapshot again, to the end.
	res, _ = app.postForm("/p/"+pid+"/rerun", nil, sameOrigin)
	pid2 := planIDFrom(t, res.Header.Get("Location"))
	if p2 := app.waitPlan(pid2, store.PlanComplete); p2.Version != 2 || p2.SnapshotID != p.SnapshotID {
		t.Fatalf("retry made v%d of %s, want v2 of %s", p2.Version, p2.SnapshotID, p.SnapshotID)
	}

	// Cancelling a finished plan changes nothing; a plain form is redirected.
	res, _ = app.postForm("/p/"+pid2+"/cancel", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want || res.Header.Get("Location") != "/p/"+pid2 {
		t.Fatalf("cancel: Status=%d Location=%q, want %d to the plan", got, res.Header.Get("Location"), want)
	}
	app.waitPlan(pid2, store.PlanComplete)
}

func TestPlanFailureAndRetry(t *testing.T) {
	const msg = "The model is overloaded (529). Try again in a minute."
	model := newPlanModel()
	model.before = func(ctx context.Context, call, turn int) error {
		if call == 1 {
			return &agent.Error{Provider: "fake", Kind: agent.ErrUnavailable, Status: 529, Message: msg, Err: errors.New("overloaded_error")}
		}
		return nil
	}
	app := newApp(t, model)
	s := newPlanSetup(t, app)
	pid := s.freeze(t, app)
	p := app.waitPlan(pid, store.PlanFailed)
	if p.Error != msg || !strings.HasPrefix(p.Markdown, "> **Unfinished plan.** Planning failed: "+msg) {
		t.Fatalf("Error=%q Markdown=%q, want the model's failure", p.Error, p.Markdown)
	}

	_, page := app.get("/p/" + pid)
	doc := parseHTML(t, page)
	if got := textOf(findOne(t, doc, "span", "data-testid", "plan-status")); got != "failed" {
		t.Fatalf("status=%q, want failed", got)
	}
	if got := textOf(findOne(t, doc, "p", "data-testid", "plan-error")); got != msg {
		t.Fatalf("error=%q, want %q", got, msg)
	}
	if got := textOf(findOne(t, doc, "li", "data-testid", "plan-step")); !strings.Contains(got, "the model call failed") {
		t.Fatalf("step %q, want the failed call", got)
	}
	if got := strings.TrimSpace(textOf(findOne(t, doc, "button", "data-testid", "rerun"))); got != "Retry" {
		t.Fatalf("rerun button=%q, want Retry", got)
	}

	res, _ := app.postForm("/p/"+pid+"/rerun", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("retry: Status=%d, want %d", got, want)
	}
	p2 := app.waitPlan(planIDFrom(t, res.Header.Get("Location")), store.PlanComplete)
	if p2.Version != 2 || p2.Markdown != planMarkdown || p2.Error != "" {
		t.Fatalf("retry v%d Markdown=%q Error=%q, want v2 with the plan", p2.Version, p2.Markdown, p2.Error)
	}
}

// apiPlan is a plan in the JSON API.
type apiPlan struct {
	ID         string `json:"id"`
	HandoffID  string `json:"handoffId"`
	SnapshotID string `json:"snapshotId"`
	Version    int    `json:"version"`
	Status     string `json:"status"`
	Markdown   string `json:"markdown"`
	Summary    string `json:"summary"`
	Error      string `json:"error"`
	Model      string `json:"model"`
	Coverage   struct {
		Covered   []string `json:"covered"`
		Uncovered []string `json:"uncovered"`
		Total     int      `json:"total"`
		Text      string   `json:"text"`
	} `json:"coverage"`
	Steps []struct {
		N            int             `json:"n"`
		Kind         string          `json:"kind"`
		Tool         string          `json:"tool"`
		Input        json.RawMessage `json:"input"`
		Result       string          `json:"result"`
		IsError      bool            `json:"isError"`
		Description  string          `json:"description"`
		InputTokens  int64           `json:"inputTokens"`
		OutputTokens int64           `json:"outputTokens"`
	} `json:"steps"`
	Usage struct {
		InputTokens  int64 `json:"inputTokens"`
		OutputTokens int64 `json:"outputTokens"`
	} `json:"usage"`
}

// toolSteps lists a plan's tool calls as "name input".
func (p apiPlan) toolSteps() []string {
	var out []string
	for _, s := range p.Steps {
		if s.Kind == "tool_call" {
			out = append(out, s.Tool+" "+string(s.Input))
		}
	}
	return out
}

// postPlan runs the plan agent through the API and returns the plan.
func (a *testApp) postPlan(handoffID string) apiPlan {
	a.t.Helper()
	res, body := a.postJSON("/api/v1/handoffs/"+handoffID+"/plan", "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		a.t.Fatalf("POST plan: Status=%d, want %d; body: %s", got, want, body)
	}
	return decodeJSON[apiPlan](a.t, body)
}

func TestAPIPlan(t *testing.T) {
	model := newPlanModel()
	app := newApp(t, model)
	s := newPlanSetup(t, app)

	p := app.postPlan(s.handoffID)
	if p.Status != "complete" || p.Version != 1 || p.HandoffID != s.handoffID || p.Markdown != planMarkdown ||
		p.Summary != planSummary || p.Model != "plan-fake-1" || p.Error != "" {
		t.Fatalf("plan %+v, want v1 complete with the model's markdown and summary", p)
	}
	if diff := cmp.Diff([]string{agent.ToolGetHandoffContext + " {}", agent.ToolCompletePlanning + ` {"summary":"` + planSummary + `"}`}, p.toolSteps()); diff != "" {
		t.Fatalf("tool steps (-want +got):\n%s", diff)
	}
	if len(p.Steps) != 4 || p.Steps[0].Kind != "model_call" || p.Steps[0].InputTokens != 100 || p.Steps[0].OutputTokens != 10 ||
		p.Steps[1].Description != "Read the handoff context" || !strings.Contains(p.Steps[1].Result, "Export invoices as CSV.") {
		t.Fatalf("steps %+v, want model calls with usage and tool calls with results", p.Steps)
	}
	if p.Usage.InputTokens != 200 || p.Usage.OutputTokens != 20 {
		t.Fatalf("usage %+v, want the sum of two calls: 200 in, 20 out", p.Usage)
	}
	if c := p.Coverage; !cmp.Equal(c.Covered, []string{"D1", "D2"}) || !cmp.Equal(c.Uncovered, []string{"D3"}) || c.Total != 3 || c.Text != "covers 2 of 3" {
		t.Fatalf("coverage %+v, want D1, D2 of 3", c)
	}
	snaps, _ := app.DB.FindSnapshots(context.Background(), s.handoffID)
	if len(snaps) != 1 || snaps[0].ID != p.SnapshotID {
		t.Fatalf("snapshots %v, want the one frozen for the plan", snaps)
	}

	// GET returns the same plan.
	res, body := app.get("/api/v1/plans/" + p.ID)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET plan: Status=%d, want %d", got, want)
	}
	if diff := cmp.Diff(p, decodeJSON[apiPlan](t, body)); diff != "" {
		t.Fatalf("GET plan differs from POST (-post +get):\n%s", diff)
	}

	// Unchanged handoff: the same snapshot, a new version.
	again := app.postPlan(s.handoffID)
	if again.SnapshotID != p.SnapshotID || again.Version != 2 {
		t.Fatalf("second plan v%d of %s, want v2 of %s", again.Version, again.SnapshotID, p.SnapshotID)
	}

	// An edited handoff is a draft again: planning freezes it anew, and the
	// agent reads the new snapshot.
	res, body = app.sendJSON(http.MethodPatch, "/api/v1/handoffs/"+s.handoffID+"/decisions/"+s.decisions[0].ID, `{"content":"Export invoices as CSV and JSON."}`, nil)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("edit decision: Status=%d, want %d; body: %s", got, want, body)
	}
	if h := app.handoff(s.handoffID); h.Status != store.HandoffDraft {
		t.Fatalf("edited handoff is %q, want draft", h.Status)
	}
	edited := app.postPlan(s.handoffID)
	if edited.SnapshotID == p.SnapshotID || edited.Version != 1 || edited.Status != "complete" {
		t.Fatalf("plan of the edited handoff: v%d of %s, want v1 of a new snapshot", edited.Version, edited.SnapshotID)
	}
	if h := app.handoff(s.handoffID); h.Status != store.HandoffFrozen {
		t.Fatalf("handoff is %q after planning, want frozen", h.Status)
	}
	reqs := model.requests()
	var result string
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, part := range m.Parts {
			if r, ok := part.(agent.ToolResultPart); ok && r.CallID == "call_ctx" {
				result = r.Content
			}
		}
	}
	if !strings.Contains(result, "Export invoices as CSV and JSON.") {
		t.Fatalf("get_handoff_context gave %q, want the edited decision", result)
	}
}

func TestAPIPlanStopsAtTheCap(t *testing.T) {
	// A model that writes and never calls complete_planning.
	model := &planModel{turns: []planTurn{{text: "More of the plan (D1)."}}}
	app := newApp(t, model)
	s := newPlanSetup(t, app)

	p := app.postPlan(s.handoffID)
	if p.Status != "stopped" {
		t.Fatalf("Status=%q, want stopped", p.Status)
	}
	if got, want := len(model.requests()), agent.DefaultMaxSteps; got != want {
		t.Fatalf("%d model calls, want %d", got, want)
	}
	if want := "> **Unfinished plan.** The planning agent stopped after 20 steps"; !strings.HasPrefix(p.Markdown, want) {
		t.Fatalf("Markdown=%q, want it to start with %q", p.Markdown, want)
	}
	if !strings.Contains(p.Markdown, "More of the plan (D1).") {
		t.Fatalf("Markdown=%q, want what was written kept", p.Markdown)
	}
	if len(p.Steps) != 20 || p.Coverage.Text != "covers 1 of 3" {
		t.Fatalf("%d steps, coverage %q; want 20 model calls covering 1 of 3", len(p.Steps), p.Coverage.Text)
	}
	_, page := app.get("/p/" + p.ID)
	doc := parseHTML(t, page)
	if got := textOf(findOne(t, doc, "span", "data-testid", "plan-status")); got != "stopped" {
		t.Fatalf("page status=%q, want stopped", got)
	}
	if got := textOf(findOne(t, doc, "article", "data-testid", "plan-markdown")); !strings.Contains(got, "Unfinished plan.") {
		t.Fatalf("page plan %q, want the unfinished note", got)
	}
}

func TestPlanNotFound(t *testing.T) {
	app := newApp(t, newPlanModel())
	s := newPlanSetup(t, app)
	empty, err := app.DB.EnsureHandoff(context.Background(), app.createThread("Nothing yet").ID)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path string
		status             int
		code               string
	}{
		{"page", http.MethodGet, "/p/nope", http.StatusNotFound, ""},
		{"events", http.MethodGet, "/p/nope/events", http.StatusNotFound, ""},
		{"download", http.MethodGet, "/p/nope/plan.md", http.StatusNotFound, ""},
		{"rerun", http.MethodPost, "/p/nope/rerun", http.StatusNotFound, ""},
		{"cancel", http.MethodPost, "/p/nope/cancel", http.StatusNotFound, ""},
		{"api show", http.MethodGet, "/api/v1/plans/nope", http.StatusNotFound, "not_found"},
		{"api create", http.MethodPost, "/api/v1/handoffs/nope/plan", http.StatusNotFound, "not_found"},
		{"api create without decisions", http.MethodPost, "/api/v1/handoffs/" + empty.ID + "/plan", http.StatusUnprocessableEntity, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res *http.Response
			var body string
			switch {
			case strings.HasPrefix(tt.path, "/api/"):
				res, body = app.sendJSON(tt.method, tt.path, "", nil)
				wantAPIError(t, res, body, tt.status, tt.code)
				return
			case tt.method == http.MethodPost:
				res, body = app.postForm(tt.path, url.Values{}, sameOrigin)
			default:
				res, body = app.get(tt.path)
			}
			if got := res.StatusCode; got != tt.status {
				t.Fatalf("Status=%d, want %d; body: %s", got, tt.status, body)
			}
		})
	}
	if plans, _ := app.DB.FindPlans(context.Background(), store.PlanFilter{HandoffID: empty.ID}); len(plans) != 0 {
		t.Fatalf("a handoff without decisions got %d plans", len(plans))
	}
	if plans, _ := app.DB.FindPlans(context.Background(), store.PlanFilter{HandoffID: s.handoffID}); len(plans) != 0 {
		t.Fatalf("404s started %d plans", len(plans))
	}
}
