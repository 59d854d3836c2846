package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

// mcpConnect connects the official SDK's client to the app's /mcp with the
// owner's write token.
func mcpConnect(t *testing.T, app *testApp) *mcp.ClientSession {
	t.Helper()
	return mcpConnectWith(t, app, app.Token)
}

// mcpConnectWith connects the official SDK's client to the app's /mcp,
// sending token as a static Authorization header, as agents are set up to.
func mcpConnectWith(t *testing.T, app *testApp, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "baton-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: app.TS.URL + "/mcp", HTTPClient: bearerClient(app, token), DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// bearerClient is a client of the app that sends token with every request.
func bearerClient(app *testApp, token string) *http.Client {
	c := *app.TS.Client()
	c.Transport = bearerTransport{token: token, next: c.Transport}
	return &c
}

// bearerTransport adds Authorization: Bearer <token> to every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// callTool calls a tool and decodes its structured result into T. It fails
// the test on a protocol error; a tool error is returned as its message.
func callTool[T any](t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (T, string) {
	t.Helper()
	var out T
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v, want a result", name, err)
	}
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				msg = append(msg, tc.Text)
			}
		}
		return out, strings.Join(msg, " ")
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, b, err)
	}
	return out, ""
}

type mcpHandoff struct {
	ID              string `json:"id"`
	SourceAgent     string `json:"source_agent"`
	TargetAgent     string `json:"target_agent"`
	Scope           string `json:"scope"`
	Results         []any  `json:"results"`
	Status          string `json:"status"`
	AcknowledgedBy  string `json:"acknowledged_by"`
	ClaimedBy       string `json:"claimed_by"`
	URL             string `json:"url"`
	ContextSnapshot struct {
		DecisionIDs []string `json:"decision_ids"`
		WarningIDs  []string `json:"warning_ids"`
		FindingIDs  []string `json:"finding_ids"`
		Summaries   []string `json:"summaries"`
	} `json:"context_snapshot"`
}

type mcpContext struct {
	Kind       string `json:"kind"`
	Brainstorm *struct {
		HandoffID string `json:"handoff_id"`
		Summary   string `json:"summary"`
		Decisions []struct {
			Label   string `json:"label"`
			Content string `json:"content"`
		} `json:"decisions"`
		Files []struct {
			Path string `json:"path"`
		} `json:"files"`
		Risks []struct {
			Description string `json:"description"`
		} `json:"risks"`
		URL string `json:"url"`
	} `json:"brainstorm"`
	AgentHandoff *mcpHandoff `json:"agent_handoff"`
	Decisions    []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"decisions"`
	Warnings []struct {
		ID string `json:"id"`
	} `json:"warnings"`
}

// frozenHandoff makes a brainstorm handoff with a decision, a file and a
// risk, freezes it and keeps it in memory, as "Start planning" does.
func frozenHandoff(t *testing.T, app *testApp) (*store.Handoff, *store.Snapshot) {
	t.Helper()
	ctx := context.Background()
	th := app.createThread("Sessions")
	h, err := app.DB.EnsureHandoff(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := app.DB.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Keep sessions server-side in src/auth/session.go"}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/auth/session.go", Relevance: store.LevelHigh, Context: "sessions live here"}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Session fixation in src/auth/session.go", Severity: store.LevelHigh}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.SetSummary(ctx, h.ID, "Sessions stay on the server.", 0); err != nil {
		t.Fatal(err)
	}
	sn, err := app.DB.Freeze(ctx, h.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.CaptureSnapshot(ctx, app.DB, sn, h.WorkspaceID, nil); err != nil {
		t.Fatal(err)
	}
	return h, sn
}

var (
	readTools  = []string{"decisions_for_files", "get_envelope", "get_handoff_context", "list_inbox", "read_blackboard", "search_decisions"}
	writeTools = []string{"acknowledge_handoff", "add_decision", "claim_handoff", "create_handoff", "post_blackboard"}
)

// TestMCPTools drives every tool through the official SDK's client.
func TestMCPTools(t *testing.T) {
	app := newApp(t, offline.New())
	brainstorm, _ := frozenHandoff(t, app)
	cs := mcpConnect(t, app)
	ctx := context.Background()

	t.Run("tools/list", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if tool.Description == "" {
				t.Errorf("%s has no description", tool.Name)
			}
			schema, _ := json.Marshal(tool.InputSchema)
			if strings.Contains(string(schema), "Agent\"") || strings.Contains(string(schema), "Id\"") {
				t.Errorf("%s input schema %s: want snake_case argument names", tool.Name, schema)
			}
		}
		slices.Sort(names)
		if want := slices.Sorted(slices.Values(append(slices.Clone(readTools), writeTools...))); !cmp.Equal(names, want) {
			t.Fatalf("tools = %v, want %v", names, want)
		}
		i := slices.IndexFunc(res.Tools, func(x *mcp.Tool) bool { return x.Name == "create_handoff" })
		schema, _ := json.Marshal(res.Tools[i].InputSchema)
		for _, want := range []string{`"source_agent"`, `"target_agent"`, `"auto_snapshot"`, `"context_snapshot"`, `"results"`, `"description"`} {
			if !strings.Contains(string(schema), want) {
				t.Errorf("create_handoff schema %s lacks %s", schema, want)
			}
		}
	})

	entry, msg := callTool[struct{ ID string }](t, cs, "post_blackboard", map[string]any{
		"type": "warning", "summary": "Do not log session ids", "scope": "src/auth/", "agent_id": "claude-code", "tags": []string{"security"}})
	if msg != "" || entry.ID == "" {
		t.Fatalf("post_blackboard: %q", msg)
	}
	entries, msg := callTool[struct {
		Entries []struct{ ID, Summary string }
	}](t, cs, "read_blackboard", map[string]any{"types": []string{"warning"}, "scope": "src/auth/session.go"})
	if msg != "" || len(entries.Entries) != 1 || entries.Entries[0].ID != entry.ID {
		t.Fatalf("read_blackboard: %+v %q", entries, msg)
	}

	h, msg := callTool[mcpHandoff](t, cs, "create_handoff", map[string]any{
		"source_agent": "claude-code", "scope": "src/auth/", "summary": "Sessions refactored",
		"results": []any{"tests pass", map[string]any{"file": "src/auth/session.go"}}})
	if msg != "" {
		t.Fatalf("create_handoff: %s", msg)
	}
	if len(h.ContextSnapshot.DecisionIDs) != 1 || !cmp.Equal(h.ContextSnapshot.WarningIDs, []string{entry.ID}) || len(h.Results) != 2 ||
		h.Status != "pending" || !strings.HasSuffix(h.URL, "/agents/handoffs/"+h.ID) {
		t.Fatalf("create_handoff = %+v", h)
	}

	t.Run("get_handoff_context of an agent handoff", func(t *testing.T) {
		got, msg := callTool[mcpContext](t, cs, "get_handoff_context", map[string]any{"handoff_id": h.ID})
		if msg != "" || got.Kind != "agent_handoff" || got.AgentHandoff == nil || got.AgentHandoff.ID != h.ID ||
			len(got.Decisions) != 1 || got.Decisions[0].Text != "Keep sessions server-side in src/auth/session.go" || len(got.Warnings) != 1 {
			t.Fatalf("context = %+v, %q", got, msg)
		}
	})
	t.Run("get_handoff_context latest brainstorm", func(t *testing.T) {
		for _, args := range []map[string]any{{}, {"handoff_id": brainstorm.ID}} {
			got, msg := callTool[mcpContext](t, cs, "get_handoff_context", args)
			if msg != "" || got.Kind != "brainstorm_handoff" || got.Brainstorm == nil {
				t.Fatalf("args %v: %+v, %q", args, got, msg)
			}
			b := got.Brainstorm
			if b.HandoffID != brainstorm.ID || b.Summary != "Sessions stay on the server." || len(b.Decisions) != 1 || b.Decisions[0].Label != "D1" ||
				len(b.Files) != 1 || len(b.Risks) != 1 || !strings.HasSuffix(b.URL, "/h/"+brainstorm.ID) {
				t.Fatalf("args %v: brainstorm = %+v", args, b)
			}
		}
		if _, msg := callTool[mcpContext](t, cs, "get_handoff_context", map[string]any{"handoff_id": "nope"}); !strings.Contains(msg, "nope") {
			t.Fatalf("unknown handoff: tool error %q, want one naming the id", msg)
		}
	})
	t.Run("decisions_for_files and search_decisions", func(t *testing.T) {
		files, msg := callTool[struct {
			Files []struct {
				Path      string
				Decisions []struct{ Content string }
				Risks     []struct{ Description string }
			}
		}](t, cs, "decisions_for_files", map[string]any{"paths": []string{"src/auth/session.go", "README.md"}})
		if msg != "" || len(files.Files) != 2 || len(files.Files[0].Decisions) != 1 || len(files.Files[0].Risks) != 1 || len(files.Files[1].Decisions) != 0 {
			t.Fatalf("decisions_for_files = %+v, %q", files, msg)
		}
		found, msg := callTool[struct {
			Decisions []struct{ Content, URL string }
		}](t, cs, "search_decisions", map[string]any{"query": "sessions", "status": "active"})
		if msg != "" || len(found.Decisions) != 1 || !strings.Contains(found.Decisions[0].URL, "/decisions/") {
			t.Fatalf("search_decisions = %+v, %q", found, msg)
		}
	})
	t.Run("add_decision", func(t *testing.T) {
		got, msg := callTool[struct {
			DecisionID string `json:"decision_id"`
			Label      string
		}](t, cs, "add_decision", map[string]any{"handoff_id": brainstorm.ID, "content": "Rotate session ids on login"})
		if msg != "" || got.DecisionID == "" {
			t.Fatalf("add_decision = %+v, %q", got, msg)
		}
		live, _ := app.DB.FindHandoffByID(ctx, brainstorm.ID)
		last := live.Decisions[len(live.Decisions)-1]
		if last.Content != "Rotate session ids on login" || !last.DuringPlanning {
			t.Fatalf("added decision = %+v, want it marked as an agent's", last)
		}
	})
	t.Run("inbox, claim and acknowledge once", func(t *testing.T) {
		inbox, msg := callTool[struct{ Handoffs []mcpHandoff }](t, cs, "list_inbox", map[string]any{"agent": "codex", "scope": "src/auth/"})
		if msg != "" || len(inbox.Handoffs) != 1 || inbox.Handoffs[0].ID != h.ID {
			t.Fatalf("list_inbox = %+v, %q", inbox, msg)
		}
		if got, msg := callTool[mcpHandoff](t, cs, "claim_handoff", map[string]any{"handoff_id": h.ID, "by": "codex"}); msg != "" || got.ClaimedBy != "codex" {
			t.Fatalf("claim = %+v, %q", got, msg)
		}
		if _, msg := callTool[mcpHandoff](t, cs, "claim_handoff", map[string]any{"handoff_id": h.ID, "by": "cursor"}); !strings.Contains(msg, "already claimed by codex") {
			t.Fatalf("second claim: tool error %q", msg)
		}
		if got, msg := callTool[mcpHandoff](t, cs, "acknowledge_handoff", map[string]any{"handoff_id": h.ID, "by": "codex"}); msg != "" || got.AcknowledgedBy != "codex" {
			t.Fatalf("acknowledge = %+v, %q", got, msg)
		}
		if _, msg := callTool[mcpHandoff](t, cs, "acknowledge_handoff", map[string]any{"handoff_id": h.ID, "by": "cursor"}); !strings.Contains(msg, "already acknowledged by codex") {
			t.Fatalf("second acknowledgement: tool error %q", msg)
		}
		if _, msg := callTool[mcpHandoff](t, cs, "acknowledge_handoff", map[string]any{"handoff_id": "nope", "by": "codex"}); !strings.Contains(msg, "not found") {
			t.Fatalf("unknown handoff: tool error %q", msg)
		}
	})
	t.Run("bad input is a tool error", func(t *testing.T) {
		before, _ := app.DB.FindAgentHandoffs(ctx, store.AgentHandoffFilter{Limit: 500})
		for _, tt := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"create_handoff", map[string]any{"source_agent": "a", "summary": "x", "results": map[string]any{"ok": true}}, "results"},
			{"create_handoff", map[string]any{"source_agent": "", "summary": "x"}, "Source agent"},
			{"create_handoff", map[string]any{"sourceAgent": "a", "summary": "x"}, "additional properties"},
			{"create_handoff", map[string]any{"source_agent": "a", "summary": "x", "context_snapshot": map[string]any{"decision_ids": []string{"elsewhere"}}}, "does not have"},
			{"post_blackboard", map[string]any{"type": "rumour", "summary": "x", "agent_id": "a"}, "warning, finding or status"},
			{"post_blackboard", map[string]any{"type": "warning", "summary": strings.Repeat("x", 201), "agent_id": "a"}, "200"},
			{"decisions_for_files", map[string]any{"paths": []string{}}, "paths"},
			{"list_inbox", map[string]any{"agent": ""}, "Agent"},
		} {
			if _, msg := callTool[map[string]any](t, cs, tt.tool, tt.args); !strings.Contains(msg, tt.want) {
				t.Errorf("%s %v: tool error %q, want one mentioning %q", tt.tool, tt.args, msg, tt.want)
			}
		}
		after, _ := app.DB.FindAgentHandoffs(ctx, store.AgentHandoffFilter{Limit: 500})
		if len(after) != len(before) {
			t.Fatalf("%d handoffs after bad input, want %d", len(after), len(before))
		}
	})
}

// TestMCPTokens checks that the token decides what an MCP client sees: a
// read token is offered the read tools only, and a member of another
// workspace finds none of this workspace's handoffs or entries.
func TestMCPTokens(t *testing.T) {
	app := newApp(t, offline.New())
	brainstorm, _ := frozenHandoff(t, app)
	ctx := context.Background()
	owner := mcpConnect(t, app)
	entry, msg := callTool[struct{ ID string }](t, owner, "post_blackboard", map[string]any{"type": "warning", "summary": "Do not log session ids", "agent_id": "a"})
	if msg != "" {
		t.Fatalf("post_blackboard: %s", msg)
	}
	h, msg := callTool[mcpHandoff](t, owner, "create_handoff", map[string]any{"source_agent": "a", "target_agent": "codex", "summary": "Sessions refactored"})
	if msg != "" {
		t.Fatalf("create_handoff: %s", msg)
	}

	toolNames := func(cs *mcp.ClientSession) []string {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}

	t.Run("read token", func(t *testing.T) {
		cs := mcpConnectWith(t, app, app.newToken(app.Owner, app.DB.DefaultWorkspaceID(), store.ScopeRead))
		if names := toolNames(cs); !cmp.Equal(names, readTools) {
			t.Fatalf("read token's tools = %v, want only %v", names, readTools)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "post_blackboard", Arguments: map[string]any{"type": "warning", "summary": "x", "agent_id": "a"}})
		if err == nil && !res.IsError {
			t.Fatal("read token called post_blackboard")
		}
		if got, msg := callTool[mcpContext](t, cs, "get_handoff_context", map[string]any{"handoff_id": brainstorm.ID}); msg != "" || got.Brainstorm == nil {
			t.Fatalf("read token's get_handoff_context = %+v, %q", got, msg)
		}
	})

	t.Run("another workspace", func(t *testing.T) {
		other, err := app.DB.CreateWorkspace(ctx, "Other")
		if err != nil {
			t.Fatal(err)
		}
		u, err := app.DB.CreateUser(ctx, store.UserCreate{Email: "bo@example.com", Name: "Bo", Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		if err := app.DB.AddMember(ctx, other.ID, u.ID, store.RoleOwner); err != nil {
			t.Fatal(err)
		}
		cs := mcpConnectWith(t, app, app.newToken(u, other.ID, store.ScopeWrite))
		if names := toolNames(cs); len(names) != len(readTools)+len(writeTools) {
			t.Fatalf("write token's tools = %v, want all", names)
		}
		// Another workspace's id is answered as a missing one.
		notFound := func(msg string) bool {
			return strings.Contains(msg, "not found") || strings.Contains(msg, "in this workspace")
		}
		for _, id := range []string{brainstorm.ID, h.ID} {
			if _, msg := callTool[mcpContext](t, cs, "get_handoff_context", map[string]any{"handoff_id": id}); !notFound(msg) {
				t.Errorf("get_handoff_context of another workspace's %s: tool error %q, want not found", id, msg)
			}
		}
		if got, msg := callTool[mcpContext](t, cs, "get_handoff_context", map[string]any{}); msg == "" {
			t.Errorf("latest handoff of an empty workspace = %+v, want a tool error", got)
		}
		for _, tool := range []string{"claim_handoff", "acknowledge_handoff"} {
			if _, msg := callTool[mcpHandoff](t, cs, tool, map[string]any{"handoff_id": h.ID, "by": "codex"}); !notFound(msg) {
				t.Errorf("%s of another workspace's handoff: tool error %q, want not found", tool, msg)
			}
		}
		if _, msg := callTool[map[string]any](t, cs, "add_decision", map[string]any{"handoff_id": brainstorm.ID, "content": "x"}); !notFound(msg) {
			t.Errorf("add_decision to another workspace's handoff: tool error %q, want not found", msg)
		}
		board, msg := callTool[struct{ Entries []struct{ ID string } }](t, cs, "read_blackboard", map[string]any{})
		if msg != "" || len(board.Entries) != 0 {
			t.Errorf("read_blackboard in another workspace = %+v, %q; want none of %s", board, msg, entry.ID)
		}
		inbox, msg := callTool[struct{ Handoffs []mcpHandoff }](t, cs, "list_inbox", map[string]any{"agent": "codex"})
		if msg != "" || len(inbox.Handoffs) != 0 {
			t.Errorf("list_inbox in another workspace = %+v, %q; want empty", inbox, msg)
		}
		found, msg := callTool[struct{ Decisions []any }](t, cs, "search_decisions", map[string]any{"query": "sessions"})
		if msg != "" || len(found.Decisions) != 0 {
			t.Errorf("search_decisions in another workspace = %+v, %q; want none", found, msg)
		}
		if live, _ := app.DB.FindHandoffByID(ctx, brainstorm.ID); len(live.Decisions) != 1 {
			t.Errorf("brainstorm has %d decisions after another workspace's add_decision, want 1", len(live.Decisions))
		}
	})
}

// TestMCPGetEnvelope: get_envelope returns the envelope the API serves for
// a brainstorm handoff, a plan and an agent handoff; a bad kind or an
// unknown id is a tool error with a message.
func TestMCPGetEnvelope(t *testing.T) {
	app := newApp(t, offline.New())
	ctx := context.Background()
	brainstorm, sn := frozenHandoff(t, app)
	plan, err := app.DB.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.FinishPlan(ctx, plan.ID, store.PlanFinish{Status: store.PlanComplete, Markdown: "# Plan\n\n1. Keep sessions server-side (D1).", Coverage: store.Coverage{Covered: []string{"D1"}, Uncovered: []string{}}}); err != nil {
		t.Fatal(err)
	}
	ah := &store.AgentHandoff{SourceAgent: "claude-code", Summary: "Sessions moved.", Results: json.RawMessage(`["done"]`), Snapshot: store.EmptyContextSnapshot()}
	if err := app.DB.CreateAgentHandoff(ctx, ah, &store.BlackboardEntry{Type: store.EntryStatus, Summary: "Handoff", AgentID: "claude-code"}, nil); err != nil {
		t.Fatal(err)
	}
	cs := mcpConnect(t, app)

	type envelopeOut struct {
		FileName string         `json:"file_name"`
		Envelope map[string]any `json:"envelope"`
	}
	for _, tt := range []struct {
		kind, id, api, payloadType string
	}{
		{"handoff", brainstorm.ID, "/api/v1/handoffs/" + brainstorm.ID + "/envelope", "brainstorm_handoff"},
		{"plan", plan.ID, "/api/v1/plans/" + plan.ID + "/envelope", "plan"},
		{"agent_handoff", ah.ID, "/api/v1/agent-handoffs/" + ah.ID + "/envelope", "agent_handoff"},
	} {
		got, msg := callTool[envelopeOut](t, cs, "get_envelope", map[string]any{"kind": tt.kind, "id": tt.id})
		if msg != "" {
			t.Fatalf("get_envelope %s: tool error %q", tt.kind, msg)
		}
		res, body := app.get(tt.api)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", tt.api, res.StatusCode, body)
		}
		want := decodeJSON[map[string]any](t, body)
		if diff := cmp.Diff(want, got.Envelope); diff != "" {
			t.Fatalf("get_envelope %s differs from the API's envelope (-api +tool):\n%s", tt.kind, diff)
		}
		if p, _ := got.Envelope["payload"].(map[string]any); p["type"] != tt.payloadType {
			t.Fatalf("get_envelope %s: payload type %v, want %s", tt.kind, p["type"], tt.payloadType)
		}
		if !strings.Contains(res.Header.Get("Content-Disposition"), got.FileName) || !strings.HasSuffix(got.FileName, ".json") {
			t.Fatalf("file_name %q, want the API's %q", got.FileName, res.Header.Get("Content-Disposition"))
		}
	}
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"kind": "thread", "id": brainstorm.ID}, "handoff, plan or agent_handoff"},
		{map[string]any{"kind": "plan", "id": "nope"}, "not found in this workspace"},
		{map[string]any{"kind": "agent_handoff", "id": ""}, "give the id"},
	} {
		if _, msg := callTool[map[string]any](t, cs, "get_envelope", tt.args); !strings.Contains(msg, tt.want) {
			t.Errorf("get_envelope %v: tool error %q, want one mentioning %q", tt.args, msg, tt.want)
		}
	}
}

// TestMCPHTTP checks what the endpoint tells browsers and OAuth-aware
// clients: a request without a valid token answers 401 with no
// WWW-Authenticate challenge (which some clients take as an invitation to
// OAuth), a cross-origin browser request is refused, and no OAuth metadata
// is advertised.
func TestMCPHTTP(t *testing.T) {
	app := newApp(t, offline.New())
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	postAs := func(token string, header http.Header) (*http.Response, string) {
		req := app.newRequest(http.MethodPost, "/mcp", strings.NewReader(initialize), header)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return app.do(req)
	}
	post := func(header http.Header) (*http.Response, string) { return postAs(app.Token, header) }
	res, body := post(nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("initialize: Status=%d, body %s", res.StatusCode, body)
	}
	if h := res.Header.Get("WWW-Authenticate"); h != "" {
		t.Errorf("WWW-Authenticate = %q, want none", h)
	}

	t.Run("without a valid token", func(t *testing.T) {
		for name, token := range map[string]string{"no token": "", "unknown token": "baton_not-a-token"} {
			res, body := postAs(token, nil)
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: Status=%d, want 401; body %s", name, res.StatusCode, body)
			}
			if h := res.Header.Get("WWW-Authenticate"); h != "" {
				t.Errorf("%s: WWW-Authenticate = %q, want none", name, h)
			}
			if strings.Contains(body, `"serverInfo"`) {
				t.Errorf("%s: initialized anyway: %s", name, body)
			}
		}
		// The session cookie is not a credential for MCP: app.Client has one.
		req := app.newRequest(http.MethodPost, "/mcp", strings.NewReader(initialize), sameOrigin)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if res, body := app.do(req); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("session cookie only: Status=%d, want 401; body %s", res.StatusCode, body)
		}
	})

	for name, h := range map[string]http.Header{
		"cross-site fetch":  {"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}},
		"other origin only": {"Origin": {"https://evil.example"}},
	} {
		if res, body := post(h); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: Status=%d, want 403; body %s", name, res.StatusCode, body)
		}
	}
	if res, _ := post(http.Header{"Origin": {app.TS.URL}, "Sec-Fetch-Site": {"same-origin"}}); res.StatusCode != http.StatusOK {
		t.Errorf("same origin: Status=%d, want 200", res.StatusCode)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"} {
		if res, _ := app.get(path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: Status=%d, want 404 (no OAuth metadata)", path, res.StatusCode)
		}
	}
}
