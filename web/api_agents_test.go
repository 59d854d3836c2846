package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

type entryJSON struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Summary   string    `json:"summary"`
	Detail    string    `json:"detail"`
	Scope     string    `json:"scope"`
	Tags      []string  `json:"tags"`
	AgentID   string    `json:"agentId"`
	CreatedAt time.Time `json:"createdAt"`
}

type agentHandoffJSON struct {
	ID              string `json:"id"`
	SourceAgent     string `json:"sourceAgent"`
	TargetAgent     string `json:"targetAgent"`
	Scope           string `json:"scope"`
	Summary         string `json:"summary"`
	Results         []any  `json:"results"`
	ContextSnapshot struct {
		DecisionIDs []string `json:"decisionIds"`
		WarningIDs  []string `json:"warningIds"`
		FindingIDs  []string `json:"findingIds"`
		Summaries   []string `json:"summaries"`
	} `json:"contextSnapshot"`
	Status         string     `json:"status"`
	AcknowledgedBy string     `json:"acknowledgedBy"`
	AcknowledgedAt *time.Time `json:"acknowledgedAt"`
	ClaimedBy      string     `json:"claimedBy"`
	StatusEntryID  string     `json:"statusEntryId"`
}

type apiErrorJSON struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestAPIAgents drives the coordination API as two agents would: post to
// the blackboard, hand off with an assembled snapshot, find it in the
// inbox, claim and acknowledge it once.
func TestAPIAgents(t *testing.T) {
	app := newApp(t, offline.New())
	ids := storetest.SeedDecisionRecords(t, app.DB, []store.DecisionRecordSeed{
		{Content: "Tokens are opaque", Scope: "src/auth"},
		{Content: "Invoices in cents", Scope: "src/billing"},
	})

	res, body := app.postJSON("/api/v1/blackboard",
		`{"type":"warning","summary":"Session cookie is not Secure","detail":"See **login.go**","scope":"src/auth/","tags":["security"],"agentId":"claude-code"}`)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("post entry: Status=%d, want 201; body: %s", res.StatusCode, body)
	}
	warn := decodeJSON[entryJSON](t, body)
	if warn.ID == "" || warn.Type != "warning" || warn.AgentID != "claude-code" || warn.Scope != "src/auth/" ||
		!cmp.Equal(warn.Tags, []string{"security"}) || warn.CreatedAt.IsZero() {
		t.Fatalf("posted entry = %+v", warn)
	}

	res, body = app.get("/api/v1/blackboard?type=warning&scope=src/auth/login.go")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("list entries: Status=%d; body: %s", res.StatusCode, body)
	}
	list := decodeJSON[struct{ Entries []entryJSON }](t, body)
	if len(list.Entries) != 1 || list.Entries[0].ID != warn.ID {
		t.Fatalf("entries in src/auth/login.go = %+v, want the warning", list.Entries)
	}
	_, body = app.get("/api/v1/blackboard?tag=nope")
	if list := decodeJSON[struct{ Entries []entryJSON }](t, body); len(list.Entries) != 0 {
		t.Fatalf("entries tagged nope = %+v, want none", list.Entries)
	}

	res, body = app.postJSON("/api/v1/agent-handoffs",
		`{"sourceAgent":"claude-code","scope":"src/auth/","summary":"Login refactored","results":["tests pass",{"file":"src/auth/login.go"}]}`)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create handoff: Status=%d, want 201; body: %s", res.StatusCode, body)
	}
	h := decodeJSON[agentHandoffJSON](t, body)
	if !cmp.Equal(h.ContextSnapshot.DecisionIDs, []string{ids[0]}) || !cmp.Equal(h.ContextSnapshot.WarningIDs, []string{warn.ID}) ||
		h.ContextSnapshot.FindingIDs == nil || h.Status != "pending" || len(h.Results) != 2 || h.StatusEntryID == "" {
		t.Fatalf("created handoff = %+v", h)
	}
	if !strings.Contains(body, `"findingIds":[]`) {
		t.Fatalf("body %s: want empty lists as [], not null", body)
	}
	if want := []string{"Decision: Tokens are opaque", "Warning: Session cookie is not Secure"}; !cmp.Equal(h.ContextSnapshot.Summaries, want) {
		t.Fatalf("summaries = %q, want %q", h.ContextSnapshot.Summaries, want)
	}

	res, body = app.get("/api/v1/agent-handoffs/inbox?agent=codex&scope=src/auth/")
	if inbox := decodeJSON[struct{ Handoffs []agentHandoffJSON }](t, body); res.StatusCode != http.StatusOK || len(inbox.Handoffs) != 1 || inbox.Handoffs[0].ID != h.ID {
		t.Fatalf("inbox: Status=%d, body %s, want the handoff", res.StatusCode, body)
	}

	res, body = app.postJSON("/api/v1/agent-handoffs/"+h.ID+"/claim", `{"by":"codex"}`)
	if got := decodeJSON[agentHandoffJSON](t, body); res.StatusCode != http.StatusOK || got.ClaimedBy != "codex" {
		t.Fatalf("claim: Status=%d, body %s", res.StatusCode, body)
	}
	res, body = app.postJSON("/api/v1/agent-handoffs/"+h.ID+"/claim", `{"by":"cursor"}`)
	if e := decodeJSON[apiErrorJSON](t, body); res.StatusCode != http.StatusConflict || e.Error.Code != "conflict" || !strings.Contains(e.Error.Message, "codex") {
		t.Fatalf("second claim: Status=%d, body %s, want 409 naming codex", res.StatusCode, body)
	}

	res, body = app.postJSON("/api/v1/agent-handoffs/"+h.ID+"/acknowledge", `{"by":"codex"}`)
	if got := decodeJSON[agentHandoffJSON](t, body); res.StatusCode != http.StatusOK || got.Status != "acknowledged" || got.AcknowledgedBy != "codex" || got.AcknowledgedAt == nil {
		t.Fatalf("acknowledge: Status=%d, body %s", res.StatusCode, body)
	}
	res, body = app.postJSON("/api/v1/agent-handoffs/"+h.ID+"/acknowledge", `{"by":"cursor"}`)
	if res.StatusCode != http.StatusConflict {
		t.Fatalf("second acknowledgement: Status=%d, want 409; body %s", res.StatusCode, body)
	}
	res, body = app.get("/api/v1/agent-handoffs/" + h.ID)
	if got := decodeJSON[agentHandoffJSON](t, body); res.StatusCode != http.StatusOK || got.AcknowledgedBy != "codex" {
		t.Fatalf("after a second acknowledgement: %s, want the first kept", body)
	}
	res, body = app.postJSON("/api/v1/agent-handoffs/nope/acknowledge", `{"by":"codex"}`)
	if e := decodeJSON[apiErrorJSON](t, body); res.StatusCode != http.StatusNotFound || e.Error.Code != "not_found" {
		t.Fatalf("acknowledge unknown: Status=%d, body %s, want 404 not_found", res.StatusCode, body)
	}

	for _, tt := range []struct{ query, want string }{
		{"status=acknowledged", h.ID},
		{"status=pending", ""},
		{"agent=codex", h.ID},
		{"agent=cursor", ""},
	} {
		_, body := app.get("/api/v1/agent-handoffs?" + tt.query)
		var got []string
		for _, x := range decodeJSON[struct{ Handoffs []agentHandoffJSON }](t, body).Handoffs {
			got = append(got, x.ID)
		}
		if want := strings.Fields(tt.want); !cmp.Equal(got, want, cmp.Comparer(func(a, b []string) bool { return strings.Join(a, " ") == strings.Join(b, " ") })) {
			t.Errorf("GET ?%s = %v, want %v", tt.query, got, want)
		}
	}

	t.Run("targeted and manual snapshot", func(t *testing.T) {
		res, body := app.postJSON("/api/v1/agent-handoffs", fmt.Sprintf(
			`{"sourceAgent":"codex","targetAgent":"cursor","summary":"Review billing","results":[],"contextSnapshot":{"decisionIds":[%q],"summaries":["Look at D2"]}}`, ids[1]))
		h := decodeJSON[agentHandoffJSON](t, body)
		if res.StatusCode != http.StatusCreated || h.TargetAgent != "cursor" || !cmp.Equal(h.ContextSnapshot.DecisionIDs, []string{ids[1]}) ||
			!cmp.Equal(h.ContextSnapshot.Summaries, []string{"Look at D2"}) {
			t.Fatalf("Status=%d, handoff %s", res.StatusCode, body)
		}
		res, body = app.postJSON("/api/v1/agent-handoffs", `{"sourceAgent":"codex","summary":"x","autoSnapshot":false}`)
		if h := decodeJSON[agentHandoffJSON](t, body); res.StatusCode != http.StatusCreated || len(h.ContextSnapshot.DecisionIDs) != 0 {
			t.Fatalf("autoSnapshot false: Status=%d, body %s", res.StatusCode, body)
		}
	})
}

// TestAPIAgentsBadInput sends what the issue lists as bad input: each gets a
// 4xx with a message, and nothing is stored.
func TestAPIAgentsBadInput(t *testing.T) {
	app := newApp(t, offline.New())
	other := storetest.SeedWorkspace(t, app.DB, "Other")
	theirs := &store.BlackboardEntry{WorkspaceID: other, Type: store.EntryWarning, Summary: "Theirs", AgentID: "x"}
	if err := app.DB.CreateBlackboardEntry(context.Background(), theirs); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"unknown type", "/api/v1/blackboard", `{"type":"rumour","summary":"x","agentId":"a"}`, 422, "invalid"},
		{"summary over 200", "/api/v1/blackboard", `{"type":"warning","summary":"` + strings.Repeat("x", 201) + `","agentId":"a"}`, 422, "invalid"},
		{"empty agent id", "/api/v1/blackboard", `{"type":"warning","summary":"x","agentId":""}`, 422, "invalid"},
		{"unknown field", "/api/v1/blackboard", `{"type":"warning","summary":"x","agentId":"a","workspaceId":"w"}`, 400, "bad_json"},
		{"empty source", "/api/v1/agent-handoffs", `{"sourceAgent":" ","summary":"x","results":[]}`, 422, "invalid"},
		{"results not a list", "/api/v1/agent-handoffs", `{"sourceAgent":"a","summary":"x","results":{"ok":true}}`, 422, "invalid"},
		{"snapshot of another workspace", "/api/v1/agent-handoffs",
			`{"sourceAgent":"a","summary":"x","results":[],"contextSnapshot":{"warningIds":["` + theirs.ID + `"]}}`, 422, "invalid"},
		{"oversized body", "/api/v1/agent-handoffs", `{"sourceAgent":"a","summary":"x","results":["` + strings.Repeat("x", 2<<20) + `"]}`, 413, "request_entity_too_large"},
		{"empty by", "/api/v1/agent-handoffs/x/acknowledge", `{"by":""}`, 422, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := app.postJSON(tt.path, tt.body)
			e := decodeJSON[apiErrorJSON](t, body)
			if res.StatusCode != tt.status || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Fatalf("Status=%d code %q, want %d %q; body %s", res.StatusCode, e.Error.Code, tt.status, tt.code, body)
			}
		})
	}
	for _, path := range []string{"/api/v1/blackboard?type=warning,finding,status&limit=500", "/api/v1/agent-handoffs?limit=500"} {
		_, body := app.get(path)
		if strings.Contains(body, `"id"`) {
			t.Errorf("GET %s = %s, want nothing stored", path, body)
		}
	}
	res, body := app.get("/api/v1/blackboard?since=yesterday")
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("since=yesterday: Status=%d, want 400; body %s", res.StatusCode, body)
	}
	res, body = app.get("/api/v1/agent-handoffs?status=done")
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("status=done: Status=%d, want 422; body %s", res.StatusCode, body)
	}
}

// TestAgentsPages shows the feed, the handoff lists and page, and
// acknowledges from the page with its CSRF-protected form.
func TestAgentsPages(t *testing.T) {
	app := newApp(t, offline.New())
	ids := storetest.SeedDecisionRecords(t, app.DB, []store.DecisionRecordSeed{{Content: "Tokens are opaque", Scope: "src/auth"}})
	_, body := app.postJSON("/api/v1/blackboard", `{"type":"finding","summary":"Login is slow","detail":"Use an <b>index</b>","scope":"src/auth/","agentId":"codex"}`)
	finding := decodeJSON[entryJSON](t, body)
	_, body = app.postJSON("/api/v1/agent-handoffs", `{"sourceAgent":"claude-code","targetAgent":"codex","scope":"src/auth/","summary":"Login refactored","results":["tests pass"]}`)
	h := decodeJSON[agentHandoffJSON](t, body)

	res, page := app.get("/agents")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/agents: Status=%d", res.StatusCode)
	}
	for _, want := range []string{
		`data-testid="feed-entry" data-type="finding"`, "Login is slow", `href="/agents/entries/` + finding.ID + `"`,
		`hx-get="/agents/feed"`, `hx-trigger="every 5s"`,
		`data-testid="pending-handoffs"`, `href="/agents/handoffs/` + h.ID + `"`,
		`claude mcp add --transport http baton ` + app.TS.URL + `/mcp --header &#34;Authorization: Bearer &lt;YOUR_TOKEN&gt;&#34;`,
		`bearer_token_env_var = &#34;BATON_TOKEN&#34;`, `&#34;mcpServers&#34;`, `&#34;Authorization&#34;: &#34;Bearer &lt;YOUR_TOKEN&gt;&#34;`, `href="/settings/tokens"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/agents lacks %s", want)
		}
	}
	_, feed := app.get("/agents/feed?type=warning")
	if strings.Contains(feed, "Login is slow") || !strings.Contains(feed, `hx-get="/agents/feed?type=warning"`) {
		t.Errorf("feed of warnings = %s, want no finding and the filter kept for polling", feed)
	}
	_, feed = app.get("/agents/feed?scope=src/auth/login.go")
	if !strings.Contains(feed, "Login is slow") {
		t.Errorf("feed in src/auth/login.go lacks the finding in src/auth/")
	}

	_, entry := app.get("/agents/entries/" + finding.ID)
	if !strings.Contains(entry, "Login is slow") || strings.Contains(entry, "<b>index</b>") {
		t.Errorf("entry page: want the summary, and the detail's HTML not passed through")
	}

	_, hp := app.get("/agents/handoffs/" + h.ID)
	for _, want := range []string{"Login refactored", `href="/decisions/` + ids[0] + `"`, "tests pass", `data-testid="acknowledge-form"`, `name="_csrf"`} {
		if !strings.Contains(hp, want) {
			t.Errorf("handoff page lacks %s", want)
		}
	}
	// Acknowledge from the page: the token from its form, as a browser posts it.
	token := between(hp, `name="_csrf" value="`, `"`)
	res, _ = app.postForm("/agents/handoffs/"+h.ID+"/acknowledge", url.Values{"_csrf": {token}, "by": {"Ana"}}, sameOrigin)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("acknowledge: Status=%d, want 303", res.StatusCode)
	}
	got, err := app.DB.FindAgentHandoffByID(context.Background(), "", h.ID)
	if err != nil || got.AcknowledgedBy != "Ana" {
		t.Fatalf("after acknowledging from the page: %+v, %v", got, err)
	}
	res, _ = app.postForm("/agents/handoffs/"+h.ID+"/acknowledge", url.Values{"by": {"Mallory"}}, http.Header{"Sec-Fetch-Site": {"cross-site"}})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site acknowledge: Status=%d, want 403", res.StatusCode)
	}
	res, _ = app.get("/agents/handoffs/nope")
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown handoff page: Status=%d, want 404", res.StatusCode)
	}
}

// between returns the text of s between the first start and the next end.
func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return v
}
