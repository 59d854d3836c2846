package offline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent"
)

// planTools are the tool definitions the plan agent sends.
var planTools = []agent.Tool{
	{Name: agent.ToolGetHandoffContext}, {Name: agent.ToolAddDecision}, {Name: agent.ToolCompletePlanning},
}

func testContext() agent.HandoffContext {
	conf := 0.5
	return agent.HandoffContext{
		Summary: "Add rate limiting to the API.",
		Decisions: []agent.ContextDecision{
			{Label: "D1", Content: "Limit each token to 100 requests a minute in web/ratelimit.go."},
			{Label: "D2", Content: "Return 429 with a Retry-After header.", Confidence: &conf},
		},
		FilesReferenced: []agent.ContextFile{
			{Path: "web/ratelimit.go", Relevance: "high", Context: "New middleware"},
			{Path: "web/errors.go", Relevance: "medium", Context: "Turn the error into a 429 response with a header"},
		},
		Risks: []agent.ContextRisk{{Description: "Shared NAT users hit the limit", Severity: "high"}},
	}
}

// planReq builds a plan agent request from its messages.
func planReq(msgs ...agent.Message) agent.Request {
	return agent.Request{System: "system", Tools: planTools, Messages: append([]agent.Message{agent.Text(agent.RoleUser, "Plan.")}, msgs...)}
}

// contextTurn is the assistant's call for the context and its result.
func contextTurn(t *testing.T, isError bool) []agent.Message {
	t.Helper()
	b, err := json.Marshal(testContext())
	if err != nil {
		t.Fatal(err)
	}
	content := string(b)
	if isError {
		content = "the handoff context could not be encoded"
	}
	return []agent.Message{
		{Role: agent.RoleAssistant, Parts: []agent.Part{agent.ToolCallPart{ID: "x1", Name: agent.ToolGetHandoffContext, Input: json.RawMessage(`{}`)}}},
		{Role: agent.RoleUser, Parts: []agent.Part{agent.ToolResultPart{CallID: "x1", Content: content, IsError: isError}}},
	}
}

func streamT(t *testing.T, req agent.Request) (*agent.Reply, string) {
	t.Helper()
	var deltas strings.Builder
	reply, err := New().Stream(context.Background(), req, func(d agent.Delta) error {
		deltas.WriteString(d.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reply, deltas.String()
}

func TestPlanPolicy(t *testing.T) {
	ctxTurn := contextTurn(t, false)
	wrote := agent.Message{Role: agent.RoleAssistant, Parts: []agent.Part{agent.TextPart{Text: "# Plan (D1) (D2)"}}}
	nudge := agent.Text(agent.RoleUser, "Call complete_planning.")
	tests := []struct {
		name     string
		req      agent.Request
		wantTool string // "" for none
		wantText bool
	}{
		{"first it reads the context", planReq(), agent.ToolGetHandoffContext, false},
		{"a failed read is tried again", planReq(contextTurn(t, true)...), agent.ToolGetHandoffContext, false},
		{"then it writes the plan and completes", planReq(ctxTurn...), agent.ToolCompletePlanning, true},
		{"a nudged plan completes without writing again", planReq(append(ctxTurn, wrote, nudge)...), agent.ToolCompletePlanning, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, deltas := streamT(t, tt.req)
			calls := reply.ToolCalls()
			if len(calls) != 1 || calls[0].Name != tt.wantTool || reply.StopReason != agent.StopToolUse {
				t.Fatalf("calls=%+v stop=%q, want one %s call", calls, reply.StopReason, tt.wantTool)
			}
			if !json.Valid(calls[0].Input) || calls[0].ID == "" {
				t.Fatalf("call=%+v, want an ID and JSON input", calls[0])
			}
			if got := reply.Text() != ""; got != tt.wantText || deltas != reply.Text() {
				t.Fatalf("text=%q deltas=%q, want text %v, streamed", reply.Text(), deltas, tt.wantText)
			}
			if tt.wantTool == agent.ToolCompletePlanning {
				var in struct{ Summary string }
				if err := json.Unmarshal(calls[0].Input, &in); err != nil || !strings.Contains(in.Summary, "2 steps") {
					t.Fatalf("complete_planning input=%s, want a summary", calls[0].Input)
				}
			}
		})
	}

	t.Run("the plan", func(t *testing.T) {
		reply, _ := streamT(t, planReq(ctxTurn...))
		md := reply.Text()
		for _, want := range []string{
			"Add rate limiting to the API.",
			"### 1. Limit each token to 100 requests a minute in web/ratelimit.go (D1)",
			"### 2. Return 429 with a Retry-After header (D2)",
			"| `web/ratelimit.go` | high | D1 | New middleware |",
			"| `web/errors.go` | medium | D2 | Turn the error into a 429 response with a header |",
			"- **High severity:** Shared NAT users hit the limit",
			"Mitigation: none agreed yet",
			"Is D2 really decided? It was extracted with confidence 0.5.",
			"How will you handle the high risk “Shared NAT users hit the limit”?",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("plan lacks %q:\n%s", want, md)
			}
		}
		if reply.Usage.InputTokens == 0 || reply.Usage.OutputTokens == 0 {
			t.Fatalf("Usage=%+v, want words counted", reply.Usage)
		}
		again, _ := streamT(t, planReq(ctxTurn...))
		if again.Text() != md {
			t.Fatal("the plan is not the same for the same request")
		}
	})

	t.Run("requests without both planning tools get the digest", func(t *testing.T) {
		req := agent.Request{Tools: planTools[:1], Messages: []agent.Message{agent.Text(agent.RoleUser, "Let's use Go.")}}
		reply, _ := streamT(t, req)
		if len(reply.ToolCalls()) != 0 || !strings.HasPrefix(reply.Text(), digestHeader) {
			t.Fatalf("reply=%q with %d calls, want the digest", reply.Text(), len(reply.ToolCalls()))
		}
	})
}

func TestPlanPolicyCancelAndEmitError(t *testing.T) {
	req := planReq(contextTurn(t, false)...)
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		reply, err := New().Stream(ctx, req, func(agent.Delta) error {
			if n++; n == 3 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err=%v, want context.Canceled", err)
		}
		if reply == nil || reply.Text() == "" || len(reply.ToolCalls()) != 0 {
			t.Fatalf("reply=%+v, want the text so far and no tool call", reply)
		}
	})
	t.Run("emit error", func(t *testing.T) {
		boom := errors.New("client gone")
		_, err := New().Stream(context.Background(), req, func(agent.Delta) error { return boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err=%v, want emit's error", err)
		}
	})
}

func TestConcerns(t *testing.T) {
	contexts := []string{"New middleware for the limiter", "Error mapping", "Middleware wiring"}
	sets := make([]tokenSet, len(contexts))
	in := map[string]int{}
	for i, c := range contexts {
		sets[i] = newTokenSet(strings.ToLower(c))
		for w := range sets[i] {
			in[w]++
		}
	}
	tests := []struct {
		name     string
		decision string
		path     string
		context  int
		want     bool
	}{
		{"names the path", "Put it in web/ratelimit.go.", "web/ratelimit.go", 1, true},
		{"names the base name", "Put it in ratelimit.go.", "web/ratelimit.go", 1, true},
		{"case does not matter", "Edit RateLimit.go.", "web/ratelimit.go", 1, true},
		{"not inside a longer name", "Edit myratelimit.go and ratelimit.gox.", "web/ratelimit.go", 1, false},
		{"shares a distinctive context word", "Use a token bucket limiter.", "web/ratelimit.go", 0, true},
		{"a word two contexts share says nothing", "Add middleware.", "web/ratelimit.go", 0, false},
		{"short and generic words say nothing", "Handle the new code.", "web/errors.go", 1, false},
		{"nothing in common", "Use Redis.", "web/errors.go", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := concerns(tt.decision, tt.path, sets[tt.context], in); got != tt.want {
				t.Fatalf("concerns(%q, %q)=%v, want %v", tt.decision, tt.path, got, tt.want)
			}
		})
	}
}

// planOf renders the offline plan of hc.
func planOf(hc agent.HandoffContext) string {
	return newOfflinePlan(hc).markdown()
}

// stepIndex returns where the step citing label starts in md, or -1.
func stepIndex(md, label string) int {
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "### ") && strings.HasSuffix(line, "("+label+")") {
			return strings.Index(md, line)
		}
	}
	return -1
}

func TestPlanOrdersStepsByDependency(t *testing.T) {
	hc := agent.HandoffContext{
		Decisions: []agent.ContextDecision{
			{Label: "D1", Content: "Add integration tests for the export endpoint of api/exports.py in tests/test_export.py."},
			{Label: "D2", Content: "Serve the export from GET /exports/:id in api/exports.py."},
			{Label: "D3", Content: "Rotate the signing key once the key table exists."},
			{Label: "D4", Content: "Create a new key table in db/migrations/0007_keys.sql."},
			{Label: "D5", Content: "Store export jobs in a new table in db/migrations/0008_exports.sql, read by api/exports.py."},
		},
		FilesReferenced: []agent.ContextFile{
			{Path: "tests/test_export.py", Relevance: "medium", Context: "New tests"},
			{Path: "api/exports.py", Relevance: "high", Context: "The export handler"},
			{Path: "db/migrations/0007_keys.sql", Relevance: "high", Context: "New key table"},
			{Path: "db/migrations/0008_exports.sql", Relevance: "high", Context: "New exports table"},
		},
	}
	md := planOf(hc)
	checkStepBefore(t, md, "D5", "D2") // D5 creates what the handler reads
	checkStepBefore(t, md, "D2", "D1") // tests come after what they test
	checkStepBefore(t, md, "D4", "D3") // "once the key table exists"
	if !strings.Contains(md, "- After: step ") {
		t.Errorf("no step says what it waits for:\n%s", md)
	}
}

// checkStepBefore checks that plan md has a step for decision a before
// one for decision b.
func checkStepBefore(t *testing.T, md, a, b string) {
	t.Helper()
	if i, j := stepIndex(md, a), stepIndex(md, b); i < 0 || j < 0 || i > j {
		t.Errorf("step %s does not come before step %s:\n%s", a, b, md)
	}
}

func TestPlanDoneWhenIsSpecificToEachStep(t *testing.T) {
	md := planOf(testContext())
	seen := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "- Done when: ") {
			continue
		}
		if seen[line] {
			t.Errorf("two steps share %q", line)
		}
		seen[line] = true
	}
	if len(seen) != len(testContext().Decisions) {
		t.Fatalf("got %d done-when lines, want one per step:\n%s", len(seen), md)
	}
	if !strings.Contains(md, "Done when: an integration test sends a request") {
		t.Errorf("the 429 step is not checked by a request:\n%s", md)
	}
}

func TestPlanUsesTheAgreedMitigation(t *testing.T) {
	hc := testContext()
	hc.Risks = []agent.ContextRisk{
		{Description: "Shared NAT users hit the request limit together", Severity: "high", Mitigation: "Key the limit by API token, not by IP"},
		{Description: "Clients ignore the Retry-After header", Severity: "low"},
	}
	md := planOf(hc)
	for _, want := range []string{
		"Mitigation: Key the limit by API token, not by IP",
		"Agreed mitigation: Key the limit by API token, not by IP",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("plan lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "How will you handle the high risk") {
		t.Errorf("a risk with an agreed mitigation is asked about again:\n%s", md)
	}
	if strings.Contains(md, "Which files does") {
		t.Errorf("a decision with files is asked about:\n%s", md)
	}
}

func TestPlanFirstOrdersOnlyAWholeStep(t *testing.T) {
	hc := agent.HandoffContext{
		Decisions: []agent.ContextDecision{
			{Label: "D1", Content: "Retry the loader assets three times with exponential backoff."},
			{Label: "D2", Content: "Migrate gradually, loaders first, one script at a time."},
			{Label: "D3", Content: "Make load_stripe upsert on the charge id first."},
		},
	}
	md := planOf(hc)
	checkStepBefore(t, md, "D3", "D1") // D3 ends with "first"
	checkStepBefore(t, md, "D3", "D2")
	if n := strings.Count(md, "(it comes first)"); n != 2 {
		t.Errorf("%d steps wait for one that comes first, want 2 (D1 and D2 wait for D3, nothing waits for D2):\n%s", n, md)
	}
}

func TestPlanAsksOnceAboutFilesNoDecisionNeeds(t *testing.T) {
	hc := agent.HandoffContext{
		Decisions: []agent.ContextDecision{{Label: "D1", Content: "Rate-limit logins in auth/login.go."}},
		FilesReferenced: []agent.ContextFile{
			{Path: "auth/login.go", Relevance: "high", Context: "The login handler"},
			{Path: "run.sh", Relevance: "low", Context: "Starts the server"},
			{Path: "deploy/app.yaml", Relevance: "low", Context: "Deployment"},
			{Path: "docs/ops.md", Relevance: "low", Context: "Runbook"},
		},
	}
	md := planOf(hc)
	want := "- Are `run.sh`, `deploy/app.yaml` and `docs/ops.md` in scope? No decision mentions them."
	if !strings.Contains(md, want) || strings.Contains(md, "Is `run.sh` in scope") {
		t.Errorf("plan does not ask once about the three unused files (want %q):\n%s", want, md)
	}
}

func TestPlanDoneWhenForAKeepDecision(t *testing.T) {
	md := planOf(agent.HandoffContext{Decisions: []agent.ContextDecision{
		{Label: "D1", Content: "Keep generating PDFs with wkhtmltopdf for now."},
		{Label: "D2", Content: "Render invoices from the existing template in Go."},
	}})
	if want := "- Done when: the other steps are in and “Keep generating PDFs with wkhtmltopdf for now” still holds: nothing in the diff replaces it."; !strings.Contains(md, want) {
		t.Errorf("a decision to keep something is not done when it still holds (want %q):\n%s", want, md)
	}
	if strings.Contains(md, "a test exercises “Keep") {
		t.Errorf("a decision to keep something asks for a test of the change:\n%s", md)
	}
}

// TestPlanChecksOnScreenOnlyWhatHasAScreen checks that a step whose files
// draw nothing (a SQL view) is not checked by a browser test, while a step
// with a page, or with no file yet, is.
func TestPlanChecksOnScreenOnlyWhatHasAScreen(t *testing.T) {
	const browser = "a component or browser test shows"
	for _, tt := range []struct {
		decision string
		files    []string
		screen   bool
	}{
		{"Deduplicate events in a view with the date filter applied first", []string{"sql/events_clean.sql"}, false},
		{"Show a banner on the settings page while the export runs", []string{"web/src/Settings.tsx", "web/api/export.go"}, true},
		{"Show a banner on the settings page while the export runs", nil, true},
	} {
		got := doneWhen(tt.decision, tt.files)
		if strings.Contains(got, browser) != tt.screen {
			t.Errorf("doneWhen(%q, %q) = %q, want on screen: %v", tt.decision, tt.files, got, tt.screen)
		}
	}
}
