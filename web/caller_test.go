package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// bearer is an http.RoundTripper that sends a token with every request,
// as an MCP client configured with a static Authorization header does.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// clientWith returns a client of ts that sends token with every request.
func clientWith(ts *httptest.Server, token string) *http.Client {
	c := *ts.Client()
	c.Transport = bearer{token: token, next: c.Transport}
	return &c
}

// memberToken makes a user with role in workspace ws and a token of theirs
// with scope there, and returns its secret.
func memberToken(t *testing.T, db *store.DB, ws, email string, role store.MemberRole, scope store.TokenScope) string {
	t.Helper()
	ctx := context.Background()
	u, err := db.CreateUser(ctx, store.UserCreate{Email: email, Name: strings.Split(email, "@")[0], Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddMember(ctx, ws, u.ID, role); err != nil {
		t.Fatal(err)
	}
	_, secret, err := db.CreateToken(ctx, store.TokenCreate{UserID: u.ID, WorkspaceID: ws, Name: "t", Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestCallerScopes checks that the caller, which the bearer token
// decides, decides the workspace and what may be written, for the JSON API
// and MCP alike.
func TestCallerScopes(t *testing.T) {
	db := storetest.MustOpen(t)
	s := newTestServer(t, Config{DB: db, Provider: offline.New(), Logger: slog.New(slog.DiscardHandler), SessionKey: make([]byte, 32)})
	other := storetest.SeedWorkspace(t, db, "Other")
	ctx := context.Background()
	mine := &store.BlackboardEntry{Type: store.EntryWarning, Summary: "Default workspace only", AgentID: "a"}
	if err := db.CreateBlackboardEntry(ctx, mine); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	myHandoff := &store.AgentHandoff{SourceAgent: "a", Summary: "Default workspace only"}
	if err := db.CreateAgentHandoff(ctx, myHandoff, &store.BlackboardEntry{Type: store.EntryStatus, Summary: "Handoff", AgentID: "a"}, nil); err != nil {
		t.Fatal(err)
	}

	// Both are editors of the other workspace; the reader's token is read-only.
	reader := clientWith(ts, memberToken(t, db, other, "reader@example.com", store.RoleEditor, store.ScopeRead))
	writer := clientWith(ts, memberToken(t, db, other, "writer@example.com", store.RoleEditor, store.ScopeWrite))
	// A viewer's write token still only reads.
	viewer := clientWith(ts, memberToken(t, db, other, "viewer@example.com", store.RoleViewer, store.ScopeWrite))

	t.Run("API", func(t *testing.T) {
		post := func(client *http.Client) int {
			res, err := client.Post(ts.URL+"/api/v1/blackboard", "application/json",
				strings.NewReader(`{"type":"finding","summary":"x","agentId":"a"}`))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		if got := post(reader); got != http.StatusForbidden {
			t.Fatalf("read token posting: Status=%d, want 403", got)
		}
		if got := post(viewer); got != http.StatusForbidden {
			t.Fatalf("viewer posting: Status=%d, want 403", got)
		}
		if got := post(ts.Client()); got != http.StatusUnauthorized {
			t.Fatalf("no token posting: Status=%d, want 401", got)
		}
		if got := post(writer); got != http.StatusCreated {
			t.Fatalf("write token posting: Status=%d, want 201", got)
		}
		entries, _ := db.FindBlackboardEntries(ctx, store.BlackboardFilter{WorkspaceID: other})
		if len(entries) != 1 {
			t.Fatalf("%d entries in the caller's workspace, want the one posted", len(entries))
		}
		if res, err := reader.Get(ts.URL + "/api/v1/blackboard"); err != nil {
			t.Fatal(err)
		} else if b, _ := io.ReadAll(res.Body); res.Body.Close() != nil || res.StatusCode != http.StatusOK || strings.Contains(string(b), mine.ID) {
			t.Fatalf("reading the blackboard: Status=%d, body %s; want 200 without the default workspace's entry", res.StatusCode, b)
		}
		if res, err := reader.Get(ts.URL + "/api/v1/agent-handoffs/" + mine.ID); err != nil {
			t.Fatal(err)
		} else if res.Body.Close(); res.StatusCode != http.StatusNotFound {
			t.Fatalf("another workspace's id: Status=%d, want 404", res.StatusCode)
		}
		if res, err := reader.Get(ts.URL + "/api/v1/agent-handoffs/" + myHandoff.ID + "/envelope"); err != nil {
			t.Fatal(err)
		} else if res.Body.Close(); res.StatusCode != http.StatusNotFound {
			t.Fatalf("another workspace's agent handoff envelope: Status=%d, want 404", res.StatusCode)
		}
		res, err := reader.Post(ts.URL+"/api/v1/envelopes", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.Body.Close(); res.StatusCode != http.StatusForbidden {
			t.Fatalf("read token importing an envelope: Status=%d, want 403", res.StatusCode)
		}
	})

	t.Run("MCP", func(t *testing.T) {
		tools := func(client *http.Client) ([]string, *mcp.ClientSession) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: client, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			return names, cs
		}
		names, cs := tools(reader)
		want := []string{"decisions_for_files", "get_envelope", "get_handoff_context", "list_inbox", "read_blackboard", "search_decisions"}
		if !slices.Equal(names, want) {
			t.Fatalf("read token's tools = %v, want only %v", names, want)
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "post_blackboard", Arguments: map[string]any{"type": "warning", "summary": "x", "agent_id": "a"}}); err == nil && !res.IsError {
			t.Fatalf("read token calling post_blackboard succeeded")
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_blackboard", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("read_blackboard: %v %+v", err, res)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, mine.ID) {
			t.Fatalf("read_blackboard in another workspace shows the default workspace's entry: %s", text)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_envelope", Arguments: map[string]any{"kind": "agent_handoff", "id": myHandoff.ID}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "not found in this workspace") {
			t.Fatalf("get_envelope of another workspace's agent handoff: %v %+v, want a tool error saying not found", err, res)
		}
		if names, _ := tools(viewer); !slices.Equal(names, want) {
			t.Fatalf("viewer's tools = %v, want only %v", names, want)
		}
		if names, _ := tools(writer); len(names) != 11 {
			t.Fatalf("write token's tools = %v, want all 11", names)
		}
	})
}

// TestCallerWithoutAuthentication checks that a request no authentication
// has marked, or whose principal has no workspace, never acts in the
// default workspace, and that the MCP handler refuses it outright.
func TestCallerWithoutAuthentication(t *testing.T) {
	ctx := context.Background()
	for name, ctx := range map[string]context.Context{
		"no caller":    ctx,
		"no workspace": withCaller(ctx, caller{UserID: "u1", Scope: scopeWrite}),
	} {
		c := callerFrom(ctx)
		if c.WorkspaceID == "" || c.canWrite() {
			t.Errorf("%s: caller = %+v, want read-only and a workspace that is not the default (\"\")", name, c)
		}
	}
	if c := callerFrom(withCaller(ctx, caller{WorkspaceID: "w", UserID: "u1", Scope: scopeWrite})); c != (caller{WorkspaceID: "w", UserID: "u1", Scope: scopeWrite}) {
		t.Errorf("caller = %+v, want the one set", c)
	}

	db := storetest.MustOpen(t)
	s := newTestServer(t, Config{DB: db, Provider: offline.New(), Logger: slog.New(slog.DiscardHandler), SessionKey: make([]byte, 32)})
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	s.mcpHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), "serverInfo") {
		t.Fatalf("MCP handler without a caller: Status=%d, body %s; want 401", rec.Code, rec.Body)
	}
}
