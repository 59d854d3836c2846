package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// findMCPInspect returns the path of the official MCP Inspector's CLI
// wrapper: $MCP_INSPECT, or shared/tools/mcp-inspect in a folder above the
// module (../shared/tools/mcp-inspect from a checkout beside shared/).
func findMCPInspect() (string, bool) {
	if p := os.Getenv("MCP_INSPECT"); p != "" {
		return p, true
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		p := filepath.Join(dir, "shared", "tools", "mcp-inspect")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// inspectorResult is what mcp-inspect --format json prints.
type inspectorResult struct {
	Result struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	} `json:"result"`
}

// TestMCPInspector talks to a running server with an MCP client Baton did
// not write, the official MCP Inspector in CLI mode: it lists the tools
// (with --strict, so that a schema some clients cannot map fails), creates
// a handoff and reads its context back. It skips when the inspector is not
// installed, except under CI=true, where it must run.
func TestMCPInspector(t *testing.T) {
	inspect, ok := findMCPInspect()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("mcp-inspect not found: set MCP_INSPECT or check out shared/tools beside the repository")
		}
		t.Skip("mcp-inspect not found (set MCP_INSPECT); the independent MCP client test needs it")
	}
	if testing.Short() {
		t.Skip("starts Node; skipped with -short")
	}
	app := newApp(t, offline.New())
	ids := storetest.SeedDecisionRecords(t, app.DB, []store.DecisionRecordSeed{{Content: "Keep sessions server-side", Scope: "src/auth"}})

	run := func(wantExit int, args ...string) inspectorResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the first run installs Node
		defer cancel()
		base := []string{"--format", "json", "-q", "--server-url", app.TS.URL + "/mcp", "--transport", "http",
			"--header", "Authorization: Bearer " + app.Token}
		cmd := exec.CommandContext(ctx, inspect, append(base, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var exit *exec.ExitError
		code := 0
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("mcp-inspect %v: %v", args, err)
		}
		if code != wantExit {
			t.Fatalf("mcp-inspect %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, wantExit, out, stderr.String())
		}
		var res inspectorResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("mcp-inspect %v: decode %q: %v", args, out, err)
		}
		return res
	}

	list := run(0, "--method", "tools/list", "--strict")
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"get_handoff_context", "search_decisions", "decisions_for_files", "add_decision", "post_blackboard",
		"read_blackboard", "create_handoff", "acknowledge_handoff", "claim_handoff", "list_inbox"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s (got %v)", want, names)
		}
	}

	created := run(0, "--method", "tools/call", "--tool-name", "create_handoff", "--tool-args-json",
		`{"source_agent":"claude-code","target_agent":"codex","scope":"src/auth/","summary":"Sessions refactored","results":["tests pass",{"file":"src/auth/session.go"}]}`)
	var h struct {
		ID              string `json:"id"`
		TargetAgent     string `json:"target_agent"`
		ContextSnapshot struct {
			DecisionIDs []string `json:"decision_ids"`
		} `json:"context_snapshot"`
	}
	if err := json.Unmarshal(created.Result.StructuredContent, &h); err != nil || h.ID == "" || h.TargetAgent != "codex" ||
		!slices.Equal(h.ContextSnapshot.DecisionIDs, ids) {
		t.Fatalf("create_handoff = %s (%v), want a handoff to codex citing %v", created.Result.StructuredContent, err, ids)
	}

	got := run(0, "--method", "tools/call", "--tool-name", "get_handoff_context", "--tool-arg", "handoff_id="+h.ID)
	var hc struct {
		Kind         string `json:"kind"`
		AgentHandoff struct {
			ID string `json:"id"`
		} `json:"agent_handoff"`
		Decisions []struct {
			Text string `json:"text"`
		} `json:"decisions"`
	}
	if err := json.Unmarshal(got.Result.StructuredContent, &hc); err != nil || hc.Kind != "agent_handoff" || hc.AgentHandoff.ID != h.ID ||
		len(hc.Decisions) != 1 || hc.Decisions[0].Text != "Keep sessions server-side" {
		t.Fatalf("get_handoff_context = %s (%v)", got.Result.StructuredContent, err)
	}

	// A failure is a tool error (exit 5), not a protocol error.
	if bad := run(5, "--method", "tools/call", "--tool-name", "create_handoff", "--tool-args-json", `{"source_agent":"","summary":"x"}`); !bad.Result.IsError {
		t.Fatalf("create_handoff with no source: isError false")
	}
}
