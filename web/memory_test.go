package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/web"
)

// The brainstorm of thread A, as the offline rules extract it: one
// decision about memJWTPath and one risk that names the file.
const (
	memJWTPath     = "src/auth/jwt.ts"
	memJWTDecision = "Sign JWTs in src/auth/jwt.ts with RS256 keys from the KMS"
	memJWTRisk     = "A leaked signing key in src/auth/jwt.ts lets anyone forge tokens for every user"
	// memoryHeading is the heading agent.MemoryPrompt opens its section with.
	memoryHeading = "## Workspace memory"
)

// memoryModel is the offline provider that records the requests it
// receives, so a test sees which memory reached the model. It extracts and
// plans as the offline provider does.
type memoryModel struct {
	*offline.Provider

	mu   sync.Mutex
	reqs []agent.Request
}

func newMemoryModel() *memoryModel { return &memoryModel{Provider: offline.New()} }

func (m *memoryModel) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.Provider.Stream(ctx, req, emit)
}

// systems returns the system prompts of the calls so far that had tools
// (plan calls) or not (brainstorm replies).
func (m *memoryModel) systems(tools bool) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, r := range m.reqs {
		if (len(r.Tools) > 0) == tools && r.Schema == nil {
			out = append(out, r.System)
		}
	}
	return out
}

// lastBrainstormSystem is the system prompt of the latest brainstorm reply.
func (m *memoryModel) lastBrainstormSystem(t *testing.T) string {
	t.Helper()
	s := m.systems(false)
	if len(s) == 0 {
		t.Fatal("the model received no brainstorm request")
	}
	return s[len(s)-1]
}

var _ agent.Provider = (*memoryModel)(nil)

// memorySection is the workspace memory part of a system prompt, "" when
// there is none.
func memorySection(system string) string {
	i := strings.Index(system, memoryHeading)
	if i < 0 {
		return ""
	}
	return system[i:]
}

// memRecord is a decision record in the JSON API.
type memRecord struct {
	ID           string   `json:"id"`
	Content      string   `json:"content"`
	Scope        string   `json:"scope"`
	Status       string   `json:"status"`
	SupersededBy string   `json:"supersededBy"`
	HandoffID    string   `json:"handoffId"`
	ThreadID     string   `json:"threadId"`
	SnapshotID   string   `json:"snapshotId"`
	Label        string   `json:"label"`
	MessageIDs   []string `json:"messageIds"`
	Snippet      string   `json:"snippet"`
	Files        []string `json:"files"`
	Risks        []string `json:"risks"`
	Chain        []string `json:"chain"`
}

type memRecordList struct {
	Decisions []memRecord `json:"decisions"`
}

// memCaptureJWT stores thread A's brainstorm, extracts it with the offline
// rules through the API and freezes it through the API, which keeps it in
// memory before answering. It returns A's decision record.
func (a *testApp) memCaptureJWT() memRecord {
	a.t.Helper()
	t := a.t
	ex := a.seedExchange("JWT signing", "How should we sign tokens in `src/auth/jwt.ts`?",
		"Sign JWTs in `src/auth/jwt.ts` with RS256 keys from the KMS. One risk is that a leaked signing key in src/auth/jwt.ts lets anyone forge tokens for every user.")
	if _, err := a.DB.CreateMessage(context.Background(), store.MessageCreate{ThreadID: ex.Thread.ID, Role: store.RoleUser,
		Content: "Let's go with RS256 signing in src/auth/jwt.ts."}); err != nil {
		t.Fatal(err)
	}
	res, body := a.postJSON("/api/v1/threads/"+ex.Thread.ID+"/handoff", "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("extract A: Status=%d, want %d; body: %s", got, want, body)
	}
	h := decodeJSON[apiHandoff](t, body)
	if len(h.Decisions) != 1 || h.Decisions[0].Content != memJWTDecision || len(h.FilesReferenced) != 1 || h.FilesReferenced[0].Path != memJWTPath ||
		len(h.Risks) != 1 || h.Risks[0].Description != memJWTRisk || h.Risks[0].Severity != "high" {
		t.Fatalf("extracted %s, want one decision, %s and one high risk", body, memJWTPath)
	}
	a.memFreeze(h.ID)
	return a.memRecordOf(memJWTDecision)
}

// memFreeze freezes a handoff through the API.
func (a *testApp) memFreeze(handoffID string) apiSnapshot {
	a.t.Helper()
	res, body := a.postJSON("/api/v1/handoffs/"+handoffID+"/freeze", "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		a.t.Fatalf("freeze %s: Status=%d, want %d; body: %s", handoffID, got, want, body)
	}
	return decodeJSON[apiSnapshot](a.t, body)
}

// memHandoff stores a thread that decides nothing by itself, extracts it
// and adds decisions (and file references, when given) through the API.
// It returns the handoff's ID, not yet frozen.
func (a *testApp) memHandoff(title string, decisions []string, files ...string) string {
	a.t.Helper()
	ex := a.seedExchange(title, "Notes for later?", "Noted.")
	res, body := a.postJSON("/api/v1/threads/"+ex.Thread.ID+"/handoff", "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		a.t.Fatalf("extract %q: Status=%d, want %d; body: %s", title, got, want, body)
	}
	h := decodeJSON[apiHandoff](a.t, body)
	if len(h.Decisions) != 0 {
		a.t.Fatalf("extract %q found decisions %+v, want none", title, h.Decisions)
	}
	for _, d := range decisions {
		if res, body := a.postJSON("/api/v1/handoffs/"+h.ID+"/decisions", `{"content":`+strconv.Quote(d)+`}`); res.StatusCode != http.StatusCreated {
			a.t.Fatalf("add decision %q: Status=%d; body: %s", d, res.StatusCode, body)
		}
	}
	for _, f := range files {
		if res, body := a.postJSON("/api/v1/handoffs/"+h.ID+"/files", `{"path":`+strconv.Quote(f)+`,"relevance":"high","context":"touched by the change"}`); res.StatusCode != http.StatusCreated {
			a.t.Fatalf("add file %q: Status=%d; body: %s", f, res.StatusCode, body)
		}
	}
	return h.ID
}

// memCapture is memHandoff frozen through the API: its decisions are in
// memory when it returns, and their records are returned in order.
func (a *testApp) memCapture(title string, decisions []string, files ...string) []memRecord {
	a.t.Helper()
	a.memFreeze(a.memHandoff(title, decisions, files...))
	var out []memRecord
	for _, d := range decisions {
		out = append(out, a.memRecordOf(d))
	}
	return out
}

// memRecords lists decision records through the API.
func (a *testApp) memRecords(query string) []memRecord {
	a.t.Helper()
	res, body := a.get("/api/v1/decisions" + query)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		a.t.Fatalf("GET /api/v1/decisions%s: Status=%d, want %d; body: %s", query, got, want, body)
	}
	return decodeJSON[memRecordList](a.t, body).Decisions
}

// memRecordOf returns the one decision record with content, with its
// files, risks and chain.
func (a *testApp) memRecordOf(content string) memRecord {
	a.t.Helper()
	var found []memRecord
	for _, r := range a.memRecords("?" + url.Values{"q": {content}}.Encode()) {
		if r.Content == content {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		a.t.Fatalf("%d decision records read %q, want 1", len(found), content)
	}
	return a.memRecordByID(found[0].ID)
}

func (a *testApp) memRecordByID(id string) memRecord {
	a.t.Helper()
	res, body := a.get("/api/v1/decisions/" + id)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		a.t.Fatalf("GET decision %s: Status=%d, want %d; body: %s", id, got, want, body)
	}
	return decodeJSON[memRecord](a.t, body)
}

// memSupersede supersedes record id by record by through the API.
func (a *testApp) memSupersede(id, by string) memRecord {
	a.t.Helper()
	res, body := a.postJSON("/api/v1/decisions/"+id+"/supersede", `{"by":`+strconv.Quote(by)+`}`)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		a.t.Fatalf("supersede: Status=%d, want %d; body: %s", got, want, body)
	}
	return decodeJSON[memRecord](a.t, body)
}

// memBrainstorm sends a message to a thread through the API and returns
// the system prompt its reply was generated with.
func (a *testApp) memBrainstorm(m *memoryModel, threadID, content string) string {
	a.t.Helper()
	before := len(m.systems(false))
	res, body := a.postJSON("/api/v1/threads/"+threadID+"/messages", `{"content":`+strconv.Quote(content)+`}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		a.t.Fatalf("send: Status=%d, want %d; body: %s", got, want, body)
	}
	if sent := decodeJSON[sentJSON](a.t, body); sent.Assistant.Status != "complete" {
		a.t.Fatalf("reply %+v, want a complete reply", sent.Assistant)
	}
	if got := len(m.systems(false)); got != before+1 {
		a.t.Fatalf("%d brainstorm calls for one message, want 1", got-before)
	}
	return m.lastBrainstormSystem(a.t)
}

// TestMemoryInBrainstormPrompt checks that what one thread decided reaches
// the model in a later brainstorm of the same workspace, and that a
// superseded decision no longer does.
func TestMemoryInBrainstormPrompt(t *testing.T) {
	model := newMemoryModel()
	app := newApp(t, model)
	b := app.createThread("Token checks")

	// Nothing captured yet: no memory section.
	if sys := app.memBrainstorm(model, b.ID, "How do we verify jwt tokens at the gateway?"); strings.Contains(sys, memoryHeading) {
		t.Fatalf("system prompt before any capture has memory:\n%s", sys)
	}

	a := app.memCaptureJWT()
	if a.Status != "active" || a.Scope != "src/auth" {
		t.Fatalf("record %+v, want active with scope src/auth", a)
	}
	sys := app.memBrainstorm(model, b.ID, "And where does the jwt signing key live?")
	mem := memorySection(sys)
	for _, want := range []string{memJWTDecision, memJWTRisk, memJWTPath, "<workspace_memory>", "</workspace_memory>"} {
		if !strings.Contains(mem, want) {
			t.Errorf("memory section lacks %q:\n%s", want, mem)
		}
	}
	if !strings.HasSuffix(sys, "</workspace_memory>") {
		t.Errorf("memory is not the end of the system prompt:\n%s", sys)
	}

	// Superseded by a later decision: A's text never reaches the model,
	// while the decision that replaced it does.
	c := app.memCapture("Key rotation", []string{"Rotate the jwt signing key monthly and log each jwt"})[0]
	if got := app.memSupersede(a.ID, c.ID); got.Status != "superseded" {
		t.Fatalf("after supersede: Status=%q, want superseded", got.Status)
	}
	sys = app.memBrainstorm(model, b.ID, "Remind me how src/auth/jwt.ts signs a jwt.")
	if strings.Contains(sys, memJWTDecision) {
		t.Errorf("system prompt carries the superseded decision:\n%s", sys)
	}
	if mem := memorySection(sys); !strings.Contains(mem, c.Content) || !strings.Contains(mem, memJWTRisk) {
		t.Errorf("memory section lacks the active decision or the risk:\n%s", mem)
	}

	// Reactivated, it is back.
	if res, body := app.postJSON("/api/v1/decisions/"+a.ID+"/reactivate", ""); res.StatusCode != http.StatusOK {
		t.Fatalf("reactivate: Status=%d; body: %s", res.StatusCode, body)
	}
	if sys := app.memBrainstorm(model, b.ID, "Any jwt news?"); !strings.Contains(memorySection(sys), memJWTDecision) {
		t.Errorf("memory lacks the reactivated decision:\n%s", sys)
	}
}

// TestMemoryBudget checks that the memory section never estimates above
// the configured budget.
func TestMemoryBudget(t *testing.T) {
	tests := []struct {
		name   string
		budget int
		// wantItems says whether any item fits; the header alone takes
		// about 60 tokens.
		wantItems bool
	}{
		{name: "header does not fit", budget: 60, wantItems: false},
		{name: "some items fit", budget: 150, wantItems: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := newMemoryModel()
			app := newAppWith(t, web.Config{Provider: model, ModelRate: 100, MemoryBudget: tt.budget})
			app.memCaptureJWT()
			app.memCapture("More auth", []string{"Rotate the jwt signing key monthly and log each jwt",
				"Log each failed jwt check in the audit trail"})
			full, err := agent.MemoryPrompt(context.Background(), app.DB, "", "jwt", 0)
			if err != nil {
				t.Fatal(err)
			}
			if n := agent.EstimateTokens(full); n <= tt.budget {
				t.Fatalf("the whole memory estimates %d tokens, want more than the budget %d for the test to mean anything", n, tt.budget)
			}

			th := app.createThread("Budget")
			mem := memorySection(app.memBrainstorm(model, th.ID, "How do we check a jwt?"))
			if n := agent.EstimateTokens(mem); n > tt.budget {
				t.Fatalf("memory section estimates %d tokens, over the budget %d:\n%s", n, tt.budget, mem)
			}
			if !tt.wantItems {
				if mem != "" {
					t.Fatalf("memory section %q, want none when the header does not fit", mem)
				}
				return
			}
			var items []string
			for _, line := range strings.Split(mem, "\n") {
				if strings.HasPrefix(line, "- ") {
					items = append(items, line)
				}
			}
			var fullItems int
			for _, line := range strings.Split(full, "\n") {
				if strings.HasPrefix(line, "- ") {
					fullItems++
				}
			}
			if len(items) == 0 || len(items) >= fullItems || !strings.HasSuffix(mem, "</workspace_memory>") {
				t.Fatalf("memory section has %d of %d items, want some but not all, closed:\n%s", len(items), fullItems, mem)
			}
			for _, it := range items {
				if !strings.Contains(full, it) {
					t.Errorf("item %q is not in the whole memory", it)
				}
			}
		})
	}
}

// TestMemoryInPlanPrompt checks that the plan agent's system prompt carries
// the memory of earlier handoffs.
func TestMemoryInPlanPrompt(t *testing.T) {
	model := newMemoryModel()
	app := newApp(t, model)
	a := app.memCaptureJWT()
	hb := app.memHandoff("Gateway", []string{"Verify jwt tokens at the API gateway with the public key"})

	res, body := app.postJSON("/api/v1/handoffs/"+hb+"/plan", "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("plan: Status=%d, want %d; body: %s", got, want, body)
	}
	plans := model.systems(true)
	if len(plans) == 0 {
		t.Fatal("the plan agent made no model call")
	}
	for i, sys := range plans {
		mem := memorySection(sys)
		if !strings.Contains(mem, a.Content) || !strings.Contains(mem, memJWTRisk) {
			t.Fatalf("plan call %d: memory section lacks A's decision or risk:\n%s", i, sys)
		}
	}
	// Planning froze B and kept it in memory first.
	if got := app.memRecordOf("Verify jwt tokens at the API gateway with the public key"); got.HandoffID != hb || got.Status != "active" {
		t.Fatalf("B's record %+v, want active from handoff %s", got, hb)
	}
}

// TestMemoryCapturedOnBrowserFreeze checks that "Start planning" keeps the
// snapshot in memory in the background.
func TestMemoryCapturedOnBrowserFreeze(t *testing.T) {
	app := newApp(t, offline.New())
	hid := app.memHandoff("Browser", []string{"Cache session lookups in src/auth/session.ts"}, "src/auth/session.ts")

	res, body := app.postForm("/h/"+hid+"/freeze", url.Values{"version": {strconv.Itoa(app.handoff(hid).Version)}}, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("freeze: Status=%d, want %d; body: %s", got, want, body)
	}
	if got := res.Header.Get("Location"); !strings.HasPrefix(got, "/p/") {
		t.Fatalf("Location=%q, want the plan page", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		list := app.memRecords("")
		if len(list) == 1 {
			if r := list[0]; r.Content != "Cache session lookups in src/auth/session.ts" || r.HandoffID != hid || r.Scope != "src/auth" || r.Status != "active" {
				t.Fatalf("record %+v, want the frozen decision, active, scope src/auth", r)
			}
			break
		}
		if len(list) > 1 {
			t.Fatalf("%d records, want 1: %+v", len(list), list)
		}
		if time.Now().After(deadline) {
			t.Fatal("no decision record within 5s of the freeze")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// memLinks returns the decision IDs the memory page lists, in order.
func memLinks(t *testing.T, page string) []string {
	t.Helper()
	list := findOne(t, parseHTML(t, page), "ul", "data-testid", "memory-decisions")
	var ids []string
	for _, li := range findAll(list, "li", "data-testid", "memory-decision") {
		for _, a := range findAll(li, "a") {
			ids = append(ids, strings.TrimPrefix(attr(a, "href"), "/decisions/"))
		}
	}
	return ids
}

func TestMemoryPage(t *testing.T) {
	app := newApp(t, offline.New())

	// Empty state.
	res, page := app.get("/memory")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET /memory: Status=%d, want %d", got, want)
	}
	if ids := memLinks(t, page); len(ids) != 0 || !strings.Contains(textOf(parseHTML(t, page)), "No decisions yet.") {
		t.Fatalf("empty memory lists %v, want none and the empty-state text", ids)
	}

	a := app.memCaptureJWT()
	c := app.memCapture("Rotation", []string{"Rotate the jwt signing key monthly and log each jwt"})[0]
	d := app.memCapture("Audit", []string{"Log each failed jwt check in the audit trail"})[0]
	app.memSupersede(a.ID, c.ID)

	tests := []struct {
		name  string
		query url.Values
		want  []string // record IDs, in order
	}{
		{"everything, newest first", nil, []string{d.ID, c.ID, a.ID}},
		{"query", url.Values{"q": {"audit"}}, []string{d.ID}},
		{"query ranks by relevance", url.Values{"q": {"jwt"}, "scope": {"project"}}, []string{c.ID, d.ID}},
		{"superseded", url.Values{"status": {"superseded"}}, []string{a.ID}},
		{"active", url.Values{"status": {"active"}}, []string{d.ID, c.ID}},
		{"scope and the scopes under it", url.Values{"scope": {"src"}}, []string{a.ID}},
		{"scope is a directory, not a prefix", url.Values{"scope": {"src/au"}}, nil},
		{"all filters", url.Values{"q": {"kms"}, "scope": {"src/auth"}, "status": {"superseded"}}, []string{a.ID}},
		{"no match", url.Values{"q": {"kubernetes"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, page := app.get("/memory?" + tt.query.Encode())
			if got, want := res.StatusCode, http.StatusOK; got != want {
				t.Fatalf("Status=%d, want %d", got, want)
			}
			if got := memLinks(t, page); !slices.Equal(got, tt.want) {
				t.Fatalf("decisions=%v, want %v", got, tt.want)
			}
			doc := parseHTML(t, page)
			if got, want := attr(findOne(t, doc, "input", "name", "q"), "value"), tt.query.Get("q"); got != want {
				t.Errorf("search box value=%q, want %q", got, want)
			}
		})
	}

	// Snippets mark the matching words, escaped by the page.
	_, page = app.get("/memory?q=jwt")
	doc := parseHTML(t, page)
	var marks []string
	for _, m := range findAll(findOne(t, doc, "ul", "data-testid", "memory-decisions"), "mark") {
		marks = append(marks, strings.ToLower(textOf(m)))
	}
	if len(marks) < 3 {
		t.Fatalf("marks %q, want each of the 3 records' matches marked", marks)
	}
	for _, m := range marks {
		if !strings.HasPrefix(m, "jwt") {
			t.Errorf("marked %q, want only jwt words", m)
		}
	}
	risks := findOne(t, doc, "ul", "data-testid", "memory-risks")
	if !strings.Contains(textOf(risks), memJWTRisk) || len(findAll(risks, "mark")) == 0 {
		t.Errorf("risks %s, want A's risk with the match marked", render(risks))
	}
	learnings := findOne(t, doc, "ul", "data-testid", "memory-learnings")
	if len(findAll(learnings, "a", "href", "/files/"+memJWTPath)) == 0 {
		t.Errorf("learnings %s, want the file's learning linked to its page", render(learnings))
	}

	res, page = app.get("/memory?status=retired")
	if got, want := res.StatusCode, http.StatusUnprocessableEntity; got != want {
		t.Fatalf("invalid status: Status=%d, want %d", got, want)
	}
	if !strings.Contains(page, "active or superseded") {
		t.Errorf("invalid status page does not say which statuses exist:\n%s", page)
	}
}

func TestDecisionPage(t *testing.T) {
	app := newApp(t, offline.New())
	a := app.memCaptureJWT()
	e := app.memCapture("Expiry", []string{"Keep JWT expiry at fifteen minutes in src/auth/jwt.ts"}, memJWTPath)[0]
	if e.Scope != "src/auth" || app.memRecordByID(a.ID).Status != "active" {
		t.Fatalf("second record %+v, want scope src/auth beside an active A", e)
	}
	path := "/decisions/" + a.ID

	res, page := app.get(path)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET %s: Status=%d, want %d", path, got, want)
	}
	doc := parseHTML(t, page)
	if got := textOf(findOne(t, doc, "p", "data-testid", "record-content")); got != memJWTDecision {
		t.Errorf("content=%q, want %q", got, memJWTDecision)
	}
	if got := textOf(findOne(t, doc, "span", "data-testid", "record-status")); got != "active" {
		t.Errorf("status=%q, want active", got)
	}
	if !slices.ContainsFunc(findAll(doc, "code"), func(n *html.Node) bool { return textOf(n) == "src/auth" }) {
		t.Errorf("page does not show the scope src/auth")
	}
	findOne(t, doc, "a", "href", "/h/"+a.HandoffID)
	if len(a.MessageIDs) == 0 {
		t.Fatalf("record %+v has no source messages", a)
	}
	for _, mid := range a.MessageIDs {
		findOne(t, doc, "a", "href", "/t/"+a.ThreadID+"#msg-"+mid)
	}
	files := findOne(t, doc, "ul", "data-testid", "record-files")
	findOne(t, files, "a", "href", "/files/"+memJWTPath)
	if got := textOf(findOne(t, doc, "ul", "data-testid", "record-risks")); !strings.Contains(got, memJWTRisk) || !strings.Contains(got, "high") {
		t.Errorf("risks %q, want A's high risk", got)
	}
	if len(findAll(doc, "ol", "data-testid", "record-chain")) != 0 {
		t.Errorf("a record that superseded nothing shows a chain")
	}
	findOne(t, doc, "a", "href", path+"/adr.md")
	form := findOne(t, doc, "form", "action", path+"/supersede")
	if opts := findAll(form, "option"); len(opts) != 1 || attr(opts[0], "value") != e.ID {
		t.Fatalf("supersede candidates %s, want only the other active decision of src/auth", render(form))
	}

	// Superseded with the plain form: Post/Redirect/Get.
	res, body := app.postForm(path+"/supersede", url.Values{"by": {e.ID}}, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("supersede: Status=%d, want %d; body: %s", got, want, body)
	}
	if got := res.Header.Get("Location"); got != path {
		t.Fatalf("Location=%q, want %q", got, path)
	}
	_, page = app.get(path)
	doc = parseHTML(t, page)
	if got := textOf(findOne(t, doc, "span", "data-testid", "record-status")); got != "superseded" {
		t.Errorf("status after supersede=%q, want superseded", got)
	}
	chain := findOne(t, doc, "ol", "data-testid", "record-chain")
	items := findAll(chain, "li")
	if len(items) != 2 || !strings.Contains(textOf(items[0]), memJWTDecision) || !strings.Contains(textOf(items[1]), e.Content) {
		t.Fatalf("chain %s, want A then the decision that superseded it", render(chain))
	}
	findOne(t, chain, "a", "href", "/decisions/"+e.ID)
	if len(findAll(doc, "form", "action", path+"/supersede")) != 0 {
		t.Errorf("a superseded record offers to be superseded again")
	}
	findOne(t, doc, "form", "action", path+"/reactivate")

	// The newer record shows the same chain, from its side.
	_, page = app.get("/decisions/" + e.ID)
	findOne(t, findOne(t, parseHTML(t, page), "ol", "data-testid", "record-chain"), "a", "href", path)

	// Reactivated: active again, no chain.
	res, body = app.postForm(path+"/reactivate", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("reactivate: Status=%d, want %d; body: %s", got, want, body)
	}
	_, page = app.get(path)
	doc = parseHTML(t, page)
	if got := textOf(findOne(t, doc, "span", "data-testid", "record-status")); got != "active" {
		t.Errorf("status after reactivate=%q, want active", got)
	}
	if len(findAll(doc, "ol", "data-testid", "record-chain")) != 0 {
		t.Errorf("a reactivated record still shows a chain")
	}

	errs := []struct {
		name   string
		method string
		path   string
		form   url.Values
		header http.Header
		want   int
	}{
		{"unknown record", http.MethodGet, "/decisions/nope", nil, nil, http.StatusNotFound},
		{"supersede by itself", http.MethodPost, path + "/supersede", url.Values{"by": {a.ID}}, sameOrigin, http.StatusUnprocessableEntity},
		{"supersede by an unknown record", http.MethodPost, path + "/supersede", url.Values{"by": {"nope"}}, sameOrigin, http.StatusNotFound},
		{"supersede from another site", http.MethodPost, path + "/supersede", url.Values{"by": {e.ID}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"reactivate an unknown record", http.MethodPost, "/decisions/nope/reactivate", nil, sameOrigin, http.StatusNotFound},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			var res *http.Response
			if tt.method == http.MethodGet {
				res, _ = app.get(tt.path)
			} else {
				res, _ = app.postForm(tt.path, tt.form, tt.header)
			}
			if got := res.StatusCode; got != tt.want {
				t.Fatalf("Status=%d, want %d", got, tt.want)
			}
		})
	}
	if got := app.memRecordByID(a.ID); got.Status != "active" {
		t.Fatalf("after the refused requests: Status=%q, want active", got.Status)
	}
}

func TestFilePage(t *testing.T) {
	app := newApp(t, offline.New())
	a := app.memCaptureJWT()

	res, page := app.get("/files/" + memJWTPath)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET file: Status=%d, want %d", got, want)
	}
	doc := parseHTML(t, page)
	if got := textOf(findOne(t, doc, "code", "data-testid", "file-path")); got != memJWTPath {
		t.Errorf("path=%q, want %q", got, memJWTPath)
	}
	decisions := findOne(t, doc, "ul", "data-testid", "file-decisions")
	if link := findOne(t, decisions, "a", "href", "/decisions/"+a.ID); textOf(link) != memJWTDecision {
		t.Errorf("decision link text %q, want %q", textOf(link), memJWTDecision)
	}
	if got := textOf(decisions); !strings.Contains(got, "active") {
		t.Errorf("decisions %q, want the record's status", got)
	}
	risks := findOne(t, doc, "ul", "data-testid", "file-risks")
	if items := findAll(risks, "li"); len(items) != 1 || !strings.Contains(textOf(items[0]), memJWTRisk) || !strings.Contains(textOf(items[0]), "high") {
		t.Errorf("risks %s, want A's high risk", render(risks))
	}
	if strings.Contains(textOf(doc), "None recorded.") {
		t.Errorf("a file with decisions and risks says none were recorded")
	}

	// A path sent as one escaped segment, as encodeURIComponent makes it,
	// names the same file.
	_, page = app.get("/files/" + url.PathEscape(memJWTPath))
	findOne(t, findOne(t, parseHTML(t, page), "ul", "data-testid", "file-decisions"), "a", "href", "/decisions/"+a.ID)

	res, page = app.get("/files/src/unknown/file.go")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET unknown file: Status=%d, want %d", got, want)
	}
	if got := strings.Count(textOf(parseHTML(t, page)), "None recorded."); got != 2 {
		t.Errorf("unknown file says %q %d times, want 2 (decisions and risks)", "None recorded.", got)
	}

	for _, bad := range []string{
		"/files/..%2Fetc%2Fpasswd",
		"/files/src/..%2F..%2Fetc%2Fpasswd",
		"/files/%2Fetc%2Fpasswd",
		"/files/https:%2F%2Fevil.example%2Fx.js",
		"/files/",
	} {
		t.Run(bad, func(t *testing.T) {
			res, _ := app.get(bad)
			if res.StatusCode < 400 || res.StatusCode >= 500 {
				t.Fatalf("Status=%d, want 4xx", res.StatusCode)
			}
		})
	}
}

// memFileJSON is the API's answer about a file.
type memFileJSON struct {
	Path      string `json:"path"`
	Decisions []struct {
		ID      string `json:"id"`
		Content string `json:"content"`
		Status  string `json:"status"`
		Count   int    `json:"count"`
	} `json:"decisions"`
	Risks []struct {
		Description string `json:"description"`
		Severity    string `json:"severity"`
		Count       int    `json:"count"`
	} `json:"risks"`
}

func memIDs(rs []memRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestAPIDecisions(t *testing.T) {
	app := newApp(t, offline.New())
	a := app.memCaptureJWT()
	// The record with the word twice is older, so recency alone would
	// rank it second.
	twice := app.memCapture("Rotation", []string{"Rotate the jwt signing key monthly and log each jwt"})[0]
	once := app.memCapture("Audit", []string{"Log each failed jwt check in the audit trail"})[0]

	if a.Scope != "src/auth" || a.Label != "D1" || a.HandoffID == "" || a.ThreadID == "" || a.SnapshotID == "" || len(a.MessageIDs) == 0 {
		t.Fatalf("record %+v, want scope, label, handoff, thread, snapshot and messages", a)
	}
	if !slices.Equal(a.Files, []string{memJWTPath}) || !slices.Equal(a.Risks, []string{memJWTRisk}) || a.Chain != nil {
		t.Fatalf("record files=%q risks=%q chain=%q, want the file, the risk and no chain", a.Files, a.Risks, a.Chain)
	}

	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"all, newest first", "", []string{once.ID, twice.ID, a.ID}},
		{"two matches rank above one", "?q=jwt&scope=project", []string{twice.ID, once.ID}},
		{"every word is required", "?q=jwt+audit", []string{once.ID}},
		{"scope", "?scope=src", []string{a.ID}},
		{"scope with a trailing slash", "?scope=src/auth/", []string{a.ID}},
		{"status", "?status=superseded", nil},
		{"no match", "?q=kubernetes", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := memIDs(app.memRecords(tt.query)); !slices.Equal(got, tt.want) {
				t.Fatalf("GET /api/v1/decisions%s = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
	for _, r := range app.memRecords("?q=jwt") {
		if strings.Count(r.Snippet, "[") == 0 || strings.Count(r.Snippet, "[") != strings.Count(r.Snippet, "]") {
			t.Errorf("snippet %q of %q, want the matches in [brackets]", r.Snippet, r.Content)
		}
	}
	if got := app.memRecords("?q=audit"); len(got) != 1 || got[0].Snippet != "Log each failed jwt check in the [audit] trail" {
		t.Fatalf("search for audit = %+v, want its snippet with [audit] marked", got)
	}

	// Supersede: the record and the chain from both sides.
	sup := app.memSupersede(a.ID, twice.ID)
	if sup.Status != "superseded" || sup.SupersededBy != twice.ID || !slices.Equal(sup.Chain, []string{a.ID, twice.ID}) {
		t.Fatalf("superseded %+v, want status superseded, by %s, chain A→it", sup, twice.ID)
	}
	if got := app.memRecordByID(twice.ID); got.Status != "active" || !slices.Equal(got.Chain, []string{a.ID, twice.ID}) {
		t.Fatalf("the newer record %+v, want active with the same chain", got)
	}
	if got := memIDs(app.memRecords("?status=superseded")); !slices.Equal(got, []string{a.ID}) {
		t.Fatalf("superseded records %v, want A", got)
	}
	if got := memIDs(app.memRecords("?status=active&q=jwt")); slices.Contains(got, a.ID) || len(got) != 2 {
		t.Fatalf("active records for jwt %v, want the two others", got)
	}

	errs := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		code   string
	}{
		{"invalid status", http.MethodGet, "/api/v1/decisions?status=retired", "", http.StatusUnprocessableEntity, "invalid"},
		{"unknown record", http.MethodGet, "/api/v1/decisions/nope", "", http.StatusNotFound, "not_found"},
		{"supersede without by", http.MethodPost, "/api/v1/decisions/" + once.ID + "/supersede", `{}`, http.StatusUnprocessableEntity, "invalid"},
		{"supersede with an empty body", http.MethodPost, "/api/v1/decisions/" + once.ID + "/supersede", "", http.StatusBadRequest, "bad_json"},
		{"supersede an unknown record", http.MethodPost, "/api/v1/decisions/nope/supersede", `{"by":"` + twice.ID + `"}`, http.StatusNotFound, "not_found"},
		{"supersede by an unknown record", http.MethodPost, "/api/v1/decisions/" + once.ID + "/supersede", `{"by":"nope"}`, http.StatusNotFound, "not_found"},
		{"supersede by itself", http.MethodPost, "/api/v1/decisions/" + once.ID + "/supersede", `{"by":"` + once.ID + `"}`, http.StatusUnprocessableEntity, "invalid"},
		{"supersede by a superseded record", http.MethodPost, "/api/v1/decisions/" + once.ID + "/supersede", `{"by":"` + a.ID + `"}`, http.StatusUnprocessableEntity, "invalid"},
		{"reactivate an unknown record", http.MethodPost, "/api/v1/decisions/nope/reactivate", "", http.StatusNotFound, "not_found"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			res, body := app.sendJSON(tt.method, tt.path, tt.body, nil)
			wantAPIError(t, res, body, tt.status, tt.code)
		})
	}
	if got := app.memRecordByID(once.ID); got.Status != "active" {
		t.Fatalf("after the refused requests: %+v, want active", got)
	}

	// Reactivate.
	res, body := app.postJSON("/api/v1/decisions/"+a.ID+"/reactivate", "")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("reactivate: Status=%d, want %d; body: %s", got, want, body)
	}
	if got := decodeJSON[memRecord](t, body); got.Status != "active" || got.SupersededBy != "" || got.Chain != nil {
		t.Fatalf("reactivated %+v, want active with no chain", got)
	}
}

func TestAPIFileRelationships(t *testing.T) {
	app := newApp(t, offline.New())
	a := app.memCaptureJWT()

	res, body := app.get("/api/v1/files/" + memJWTPath + "/relationships")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("Status=%d, want %d; body: %s", got, want, body)
	}
	f := decodeJSON[memFileJSON](t, body)
	if f.Path != memJWTPath || len(f.Decisions) != 1 || len(f.Risks) != 1 {
		t.Fatalf("relationships %s, want one decision and one risk of %s", body, memJWTPath)
	}
	if d := f.Decisions[0]; d.ID != a.ID || d.Content != memJWTDecision || d.Status != "active" || d.Count != 1 {
		t.Errorf("decision %+v, want A, active, seen once", d)
	}
	if r := f.Risks[0]; r.Description != memJWTRisk || r.Severity != "high" || r.Count != 1 {
		t.Errorf("risk %+v, want A's high risk, seen once", r)
	}

	// A path sent as one escaped segment names the same file.
	res, body = app.get("/api/v1/files/" + url.PathEscape(memJWTPath) + "/relationships")
	if got := decodeJSON[memFileJSON](t, body); res.StatusCode != http.StatusOK || got.Path != memJWTPath || len(got.Decisions) != 1 {
		t.Fatalf("escaped path: Status=%d body %s, want %s's relationships", res.StatusCode, body, memJWTPath)
	}

	// Frozen again unchanged, the edges count twice.
	hid := a.HandoffID
	if res, body := app.postJSON("/api/v1/handoffs/"+hid+"/decisions", `{"content":"Document the key rotation runbook"}`); res.StatusCode != http.StatusCreated {
		t.Fatalf("add decision: Status=%d; body: %s", res.StatusCode, body)
	}
	app.memFreeze(hid)
	_, body = app.get("/api/v1/files/" + memJWTPath + "/relationships")
	if f := decodeJSON[memFileJSON](t, body); len(f.Decisions) != 1 || f.Decisions[0].Count != 2 || len(f.Risks) != 1 || f.Risks[0].Count != 2 {
		t.Fatalf("after a second freeze: %s, want the same decision and risk seen twice", body)
	}

	errs := []struct {
		name   string
		path   string
		status int
	}{
		{"unknown file", "/api/v1/files/src/unknown.go/relationships", http.StatusNotFound},
		{"no relationships suffix", "/api/v1/files/" + memJWTPath, http.StatusNotFound},
		{"other suffix", "/api/v1/files/" + memJWTPath + "/history", http.StatusNotFound},
		{"parent directory", "/api/v1/files/..%2Fetc%2Fpasswd/relationships", http.StatusUnprocessableEntity},
		{"absolute path", "/api/v1/files/%2Fetc%2Fpasswd/relationships", http.StatusUnprocessableEntity},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			res, body := app.get(tt.path)
			wantAPIError(t, res, body, tt.status, "")
		})
	}
}

// memADRName is an ADR file name: four digits and a slug.
var memADRName = regexp.MustCompile(`^\d{4}-[a-z0-9]+(-[a-z0-9]+)*\.md$`)

func TestADRExport(t *testing.T) {
	app := newApp(t, offline.New())
	a := app.memCaptureJWT()
	c := app.memCapture("Rotation", []string{"Rotate the jwt signing key monthly and log each jwt"})[0]
	d := app.memCapture("Audit", []string{"Log each failed jwt check in the audit trail"})[0]

	adr := func(id string) (*http.Response, string) {
		t.Helper()
		res, body := app.get("/decisions/" + id + "/adr.md")
		if got, want := res.StatusCode, http.StatusOK; got != want {
			t.Fatalf("GET adr.md: Status=%d, want %d; body: %s", got, want, body)
		}
		return res, body
	}
	res, md := adr(a.ID)
	if got, want := res.Header.Get("Content-Type"), "text/markdown; charset=utf-8"; got != want {
		t.Errorf("Content-Type=%q, want %q", got, want)
	}
	cd := res.Header.Get("Content-Disposition")
	name := strings.TrimSuffix(strings.TrimPrefix(cd, `attachment; filename="`), `"`)
	if !strings.HasPrefix(cd, "attachment;") || !memADRName.MatchString(name) || !strings.HasPrefix(name, "0001-sign-jwts") {
		t.Errorf("Content-Disposition=%q, want an attachment named like 0001-sign-jwts-….md", cd)
	}
	for _, want := range []string{
		"---\nstatus: accepted\n",
		"scope: src/auth\n",
		"# " + memJWTDecision + "\n",
		"## Context and Problem Statement\n",
		"## Decision Outcome\n\n" + memJWTDecision + "\n",
		"### Consequences\n",
		"* Changes `" + memJWTPath + "`",
		"* Risk (high): " + memJWTRisk,
		"* Source handoff: [" + a.HandoffID + "](/h/" + a.HandoffID + ")",
		"(/t/" + a.ThreadID + "#msg-" + a.MessageIDs[0] + ")",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("ADR lacks %q:\n%s", want, md)
		}
	}

	// Superseded: the status and a link to what replaced it.
	app.memSupersede(a.ID, c.ID)
	_, md = adr(a.ID)
	for _, want := range []string{
		"status: superseded by decision " + c.ID + "\n",
		"it was superseded by [" + c.Content + "](/decisions/" + c.ID + ")",
		"* Superseded by: [" + c.Content + "](/decisions/" + c.ID + ")",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("superseded ADR lacks %q:\n%s", want, md)
		}
	}
	if _, md := adr(c.ID); !strings.Contains(md, "* Supersedes: ["+memJWTDecision+"](/decisions/"+a.ID+")") {
		t.Errorf("the newer ADR does not link to the one it superseded:\n%s", md)
	}
	if res, _ := app.get("/decisions/nope/adr.md"); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown record's ADR: Status=%d, want 404", res.StatusCode)
	}

	// The zip holds the active records, oldest first.
	res, body := app.get("/decisions/adr.zip")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET adr.zip: Status=%d, want %d", got, want)
	}
	if got, want := res.Header.Get("Content-Type"), "application/zip"; got != want {
		t.Errorf("Content-Type=%q, want %q", got, want)
	}
	if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") {
		t.Errorf("Content-Disposition=%q, want an attachment", cd)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatalf("read zip: %v", err)
	}
	wantTitles := []string{c.Content, d.Content}
	if len(zr.File) != len(wantTitles) {
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		t.Fatalf("zip holds %q, want one entry per active record (%d)", names, len(wantTitles))
	}
	for i, f := range zr.File {
		if !memADRName.MatchString(f.Name) || !strings.HasPrefix(f.Name, fmt.Sprintf("%04d-", i+1)) {
			t.Errorf("entry %d is named %q, want %04d-….md", i, f.Name, i+1)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if want := "# ADR-" + f.Name[:4] + ": " + wantTitles[i] + "\n"; !strings.Contains(text, want) || !strings.Contains(text, "status: accepted\n") {
			t.Errorf("entry %s lacks %q or the accepted status:\n%s", f.Name, want, text)
		}
		if strings.Contains(text, "# "+memJWTDecision) {
			t.Errorf("entry %s is the superseded record", f.Name)
		}
	}
}
