package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

func TestReverses(t *testing.T) {
	tests := []struct {
		old, new string
		want     bool
	}{
		{"Use JWT for sessions", "Use server sessions instead of JWT", true},
		{"Sign tokens with JWT", "We no longer use JWT; sessions live in Redis", true},
		{"Store uploads on local disk", "Replace local disk with S3 for uploads", true},
		{"Use MySQL for billing", "Switch from MySQL to Postgres for billing", true},
		{"Cache pages in Redis", "Drop Redis, cache in memory", true},
		{"Use cookies for sessions", "Keep JWT, not cookies", true},
		{"Use Redis for the job queue", "Redis is no longer needed", true},
		{"Log with logrus", "Do not use logrus; use slog", true},
		// Not reversals.
		{"Use JWT for sessions", "Use JWT for sessions", false},
		{"Use JWT for sessions", "Rotate the JWT signing keys monthly", false},          // no cue
		{"Use JWT for sessions", "Use server sessions, not cookies", false},             // cue about something else
		{"Cache pages in Redis", "Drop the nightly cron job", false},                    // different subject
		{"Do not use cookies", "Never use cookies for auth", false},                     // both turn away from cookies
		{"Use Postgres for storage", "Use Postgres instead of SQLite for tests", false}, // keeps Postgres
		{"", "Drop everything", false},
	}
	for _, tt := range tests {
		t.Run(tt.old+" → "+tt.new, func(t *testing.T) {
			if got := agent.Reverses(tt.old, tt.new); got != tt.want {
				t.Fatalf("Reverses(%q, %q) = %v, want %v", tt.old, tt.new, got, tt.want)
			}
		})
	}
}

func TestScope(t *testing.T) {
	tests := []struct {
		paths []string
		want  string
	}{
		{nil, "project"},
		{[]string{"src/auth/jwt.ts"}, "src/auth"},
		{[]string{"src/auth/jwt.ts", "src/auth/session.ts"}, "src/auth"},
		{[]string{"src/auth/jwt.ts", "src/api/routes.ts"}, "src"},
		{[]string{"src/auth/jwt.ts", "web/app.go"}, "project"},
		{[]string{"README.md"}, "project"},
		{[]string{"src/authz/a.go", "src/auth/b.go"}, "src"},
	}
	for _, tt := range tests {
		if got := agent.DecisionScope(tt.paths); got != tt.want {
			t.Errorf("DecisionScope(%q) = %q, want %q", tt.paths, got, tt.want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abcd", 2},                   // one word: 1.3 → 2 beats 4/4 = 1
		{"a b c d", 6},                // four words: 5.2 → 6
		{strings.Repeat("x", 40), 10}, // one long word: 40/4
	}
	for _, tt := range tests {
		if got := agent.EstimateTokens(tt.s); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

// memSnapshot makes a frozen handoff in db and returns its snapshot. Files
// are {path, reason} pairs (high relevance), risks {description,
// mitigation} pairs (high severity).
func memSnapshot(t *testing.T, db *store.DB, decisions []string, files [][2]string, risks [][2]string) *store.Snapshot {
	t.Helper()
	in := storetest.Items{Title: "Memory", Decisions: storetest.Decisions(decisions...)}
	for _, f := range files {
		in.Files = append(in.Files, store.FileRefInput{Path: f[0], Relevance: store.LevelHigh, Context: f[1]})
	}
	for _, r := range risks {
		in.Risks = append(in.Risks, store.RiskInput{Description: r[0], Severity: store.LevelHigh, Mitigation: r[1]})
	}
	return storetest.FrozenSnapshot(t, db, in)
}

func ticking() func() time.Time {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		now = now.Add(time.Second)
		return now
	}
}

// TestCaptureWithOfflineJudge supersedes through the offline rule, end to end.
func TestCaptureWithOfflineJudge(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	db.SetClock(ticking())
	judge := agent.Judge(agent.RuleJudge)
	first, err := agent.CaptureSnapshot(ctx, db, memSnapshot(t, db,
		[]string{"Use JWT for sessions in src/auth/jwt.ts"}, [][2]string{{"src/auth/jwt.ts", "Token code"}}, nil), "", judge)
	if err != nil {
		t.Fatal(err)
	}
	second, err := agent.CaptureSnapshot(ctx, db, memSnapshot(t, db,
		[]string{"Switch from JWT to server sessions in src/auth/session.ts"}, [][2]string{{"src/auth/session.ts", "Sessions"}}, nil), "", judge)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Superseded) != 1 || second.Superseded[0].OldID != first.Records[0].ID {
		t.Fatalf("Superseded = %+v, want the JWT decision", second.Superseded)
	}
	old, err := db.FindDecisionRecordByID(ctx, first.Records[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if old.Status != store.DecisionSuperseded || old.SupersededBy != second.Records[0].ID {
		t.Errorf("old = %s by %q, want superseded by the sessions decision", old.Status, old.SupersededBy)
	}
}

// judgeProvider answers every call with reply, or fails with err.
type judgeProvider struct {
	reply string
	err   error
	calls int
}

func (p *judgeProvider) Name() string  { return "anthropic" }
func (p *judgeProvider) Model() string { return "test" }
func (p *judgeProvider) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	p.calls++
	if req.Schema == nil || !strings.Contains(req.Messages[0].Parts[0].(agent.TextPart).Text, "<older>") {
		return nil, errors.New("judge request without schema or data tags")
	}
	if p.err != nil {
		return nil, p.err
	}
	return &agent.Reply{Parts: []agent.Part{agent.TextPart{Text: p.reply}}, StopReason: agent.StopEnd}, nil
}

func TestReversalJudgeModel(t *testing.T) {
	old := store.DecisionRecord{Content: "Use JWT for sessions"}
	reversal := store.DecisionRecord{Content: "Use server sessions instead of JWT"}
	unrelated := store.DecisionRecord{Content: "Paginate the audit log"}
	tests := []struct {
		name string
		p    *judgeProvider
		new  store.DecisionRecord
		want bool
	}{
		{"model says yes where the rule says no", &judgeProvider{reply: `{"reverses":true,"reason":"x"}`}, unrelated, true},
		{"model says no where the rule says yes", &judgeProvider{reply: `{"reverses":false,"reason":"x"}`}, reversal, false},
		{"model error falls back to the rule", &judgeProvider{err: errors.New("down")}, reversal, true},
		{"bad reply falls back to the rule", &judgeProvider{reply: `maybe`}, unrelated, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := agent.ReversalJudge(tt.p)(context.Background(), old, tt.new); err != nil || got != tt.want {
				t.Fatalf("judge = %v, %v; want %v", got, err, tt.want)
			}
			if tt.p.calls != 1 {
				t.Errorf("%d model calls, want 1", tt.p.calls)
			}
		})
	}
}

func memoryDB(t *testing.T) (*store.DB, store.CaptureResult) {
	t.Helper()
	ctx := context.Background()
	db := storetest.MustOpen(t)
	db.SetClock(ticking())
	res, err := agent.CaptureSnapshot(ctx, db, memSnapshot(t, db,
		[]string{
			"Rate limit logins per account in src/auth/login.go",
			"Deploy with blue-green releases in infra/deploy.tf",
			"Cache product pages for five minutes in src/shop/cache.go",
			"Keep the billing ledger append-only in src/billing/ledger.go",
		},
		[][2]string{
			{"src/auth/login.go", "Login handler gets the limiter"},
			{"infra/deploy.tf", "Deployment pipeline"},
			{"src/shop/cache.go", "Page cache"},
			{"src/billing/ledger.go", "Ledger writes"},
		},
		[][2]string{
			{"Lockout abuse through login.go", "Back off per account, not per IP"},
			{"Stale prices from cache.go", "Purge on price change"},
		}), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return db, res
}

func TestMemoryPromptRanking(t *testing.T) {
	ctx := context.Background()
	db, _ := memoryDB(t)
	tests := []struct {
		query, first string
	}{
		{"How do we stop brute force on logins?", "Rate limit logins per account"},
		{"The billing ledger needs a reversal entry", "Keep the billing ledger append-only"},
		{"Should cached product pages expire faster?", "Cache product pages for five minutes"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := agent.MemoryPrompt(ctx, db, "", tt.query, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, rest, ok := strings.Cut(got, "### Key decisions (active)\n")
			if !ok {
				t.Fatalf("no key decisions section in:\n%s", got)
			}
			if first, _, _ := strings.Cut(rest, "\n"); !strings.HasPrefix(first, "- "+tt.first) {
				t.Errorf("first decision = %q, want %q", first, tt.first)
			}
			for _, s := range []string{"## Workspace memory", "### Known risks", "### Frequently touched files", "<workspace_memory>", "</workspace_memory>"} {
				if !strings.Contains(got, s) {
					t.Errorf("prompt lacks %q", s)
				}
			}
		})
	}
	got, err := agent.MemoryPrompt(ctx, db, "", "what about src/auth/login.go?", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "### Relationships for files in play\n- src/auth/login.go ← decision: Rate limit logins per account") ||
		!strings.Contains(got, "- src/auth/login.go → risk: Lockout abuse through login.go") {
		t.Errorf("relationships of login.go missing:\n%s", got)
	}
	if i, j := strings.Index(got, "### Known risks\n- (high) Lockout abuse"), strings.Index(got, "Stale prices"); i < 0 || j < i {
		t.Errorf("the login risk should come first:\n%s", got)
	}
}

func TestMemoryPromptBudget(t *testing.T) {
	ctx := context.Background()
	db, _ := memoryDB(t)
	full, err := agent.MemoryPrompt(ctx, db, "", "logins", 10_000)
	if err != nil {
		t.Fatal(err)
	}
	fullTokens := agent.EstimateTokens(full)
	for _, budget := range []int{1, 60, 90, 120, 200, fullTokens - 1, fullTokens, 1500} {
		got, err := agent.MemoryPrompt(ctx, db, "", "logins", budget)
		if err != nil {
			t.Fatal(err)
		}
		if n := agent.EstimateTokens(got); n > budget {
			t.Errorf("budget %d: estimated %d tokens:\n%s", budget, n, got)
		}
		if budget >= fullTokens && got != full {
			t.Errorf("budget %d ≥ %d: want everything", budget, fullTokens)
		}
		if budget == 120 && !strings.Contains(got, "Rate limit logins") {
			t.Errorf("budget 120 dropped the best decision:\n%s", got)
		}
	}
	if got, _ := agent.MemoryPrompt(ctx, db, "", "logins", 1); got != "" {
		t.Errorf("budget 1 = %q, want nothing", got)
	}
}

func TestMemoryPromptNeverShowsSuperseded(t *testing.T) {
	ctx := context.Background()
	db, res := memoryDB(t)
	login := res.Records[0]
	next, err := agent.CaptureSnapshot(ctx, db, memSnapshot(t, db,
		[]string{"Throttle logins with a token bucket in src/auth/login.go"}, [][2]string{{"src/auth/login.go", "Limiter"}}, nil), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SupersedeDecisionRecord(ctx, login.ID, next.Records[0].ID); err != nil {
		t.Fatal(err)
	}
	// The query matches the superseded text best, and names its file.
	got, err := agent.MemoryPrompt(ctx, db, "", "Rate limit logins per account in src/auth/login.go", 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "Rate limit logins per account") {
		t.Errorf("superseded decision appears:\n%s", got)
	}
	if !strings.Contains(got, "Throttle logins with a token bucket") {
		t.Errorf("the decision that replaced it is missing:\n%s", got)
	}
	empty := storetest.MustOpen(t)
	if got, err := agent.MemoryPrompt(ctx, empty, "", "anything", 0); err != nil || got != "" {
		t.Errorf("empty workspace = %q, %v; want nothing", got, err)
	}
}
