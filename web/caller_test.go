package web

import (
	"context"
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

// serveAs serves s with every request made by c, as authentication will.
func serveAs(t *testing.T, s *Server, c caller) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r.WithContext(withCaller(r.Context(), c)))
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestCallerScopes checks that the caller decides the workspace and what
// may be written, for the JSON API and MCP alike.
func TestCallerScopes(t *testing.T) {
	db := storetest.MustOpen(t)
	s := New(Config{DB: db, Provider: offline.New(), Logger: slog.New(slog.DiscardHandler), SessionKey: make([]byte, 32)})
	other := storetest.SeedWorkspace(t, db, "Other")
	ctx := context.Background()
	mine := &store.BlackboardEntry{Type: store.EntryWarning, Summary: "Default workspace only", AgentID: "a"}
	if err := db.CreateBlackboardEntry(ctx, mine); err != nil {
		t.Fatal(err)
	}
	myHandoff := &store.AgentHandoff{SourceAgent: "a", Summary: "Default workspace only"}
	if err := db.CreateAgentHandoff(ctx, myHandoff, &store.BlackboardEntry{Type: store.EntryStatus, Summary: "Handoff", AgentID: "a"}, nil); err != nil {
		t.Fatal(err)
	}

	reader := serveAs(t, s, caller{WorkspaceID: other, UserID: "u1", Scope: scopeRead})
	writer := serveAs(t, s, caller{WorkspaceID: other, UserID: "u2", Scope: scopeWrite})

	t.Run("API", func(t *testing.T) {
		post := func(ts *httptest.Server) int {
			res, err := ts.Client().Post(ts.URL+"/api/v1/blackboard", "application/json",
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
		if got := post(writer); got != http.StatusCreated {
			t.Fatalf("write token posting: Status=%d, want 201", got)
		}
		entries, _ := db.FindBlackboardEntries(ctx, store.BlackboardFilter{WorkspaceID: other})
		if len(entries) != 1 {
			t.Fatalf("%d entries in the caller's workspace, want the one posted", len(entries))
		}
		if res, err := reader.Client().Get(reader.URL + "/api/v1/agent-handoffs/" + mine.ID); err != nil {
			t.Fatal(err)
		} else if res.Body.Close(); res.StatusCode != http.StatusNotFound {
			t.Fatalf("another workspace's id: Status=%d, want 404", res.StatusCode)
		}
		if res, err := reader.Client().Get(reader.URL + "/api/v1/agent-handoffs/" + myHandoff.ID + "/envelope"); err != nil {
			t.Fatal(err)
		} else if res.Body.Close(); res.StatusCode != http.StatusNotFound {
			t.Fatalf("another workspace's agent handoff envelope: Status=%d, want 404", res.StatusCode)
		}
		res, err := reader.Client().Post(reader.URL+"/api/v1/envelopes", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.Body.Close(); res.StatusCode != http.StatusForbidden {
			t.Fatalf("read token importing an envelope: Status=%d, want 403", res.StatusCode)
		}
	})

	t.Run("MCP", func(t *testing.T) {
		tools := func(ts *httptest.Server) ([]string, *mcp.ClientSession) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: ts.Client(), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
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
		if want := []string{"decisions_for_files", "get_envelope", "get_handoff_context", "list_inbox", "read_blackboard", "search_decisions"}; !slices.Equal(names, want) {
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
		if names, _ := tools(writer); len(names) != 11 {
			t.Fatalf("write token's tools = %v, want all 11", names)
		}
	})
}
