package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// postEntry posts a blackboard entry to the default workspace and returns its ID.
func postEntry(t testing.TB, db *store.DB, typ store.EntryType, scope, summary string) string {
	t.Helper()
	e := &store.BlackboardEntry{Type: typ, Scope: scope, Summary: summary, AgentID: "tester"}
	if err := db.CreateBlackboardEntry(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

func handoff(t *testing.T, db *store.DB, in agent.HandoffRequest) *store.AgentHandoff {
	t.Helper()
	if in.SourceAgent == "" {
		in.SourceAgent = "claude-code"
	}
	if in.Summary == "" {
		in.Summary = "Auth refactor done"
	}
	h, err := agent.CreateHandoff(context.Background(), db, in)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func TestScopeMatches(t *testing.T) {
	tests := []struct {
		item, query string
		want        bool
	}{
		{"src/auth/login.go", "src/auth/", true}, // item starts with query
		{"src/", "src/auth/", true},              // query starts with item
		{"src/auth", "src/auth/", true},          // a record's scope has no slash
		{"src/billing/", "src/auth/", false},
		{"docs", "src/auth/", false},
		{"project", "src/auth/", true}, // the project matches everything
		{"src/auth/", "project", true},
		{"src/auth/", "", true}, // no scope: everything
	}
	for _, tt := range tests {
		t.Run(tt.item+" ~ "+tt.query, func(t *testing.T) {
			if got := store.ScopeMatches(tt.item, tt.query); got != tt.want {
				t.Fatalf("ScopeMatches(%q, %q) = %v, want %v", tt.item, tt.query, got, tt.want)
			}
		})
	}
}

// TestCreateHandoffAssembly checks the assembled snapshot against
// ScopeMatches: the SQL and the rule must agree, both ways.
func TestCreateHandoffAssembly(t *testing.T) {
	db := storetest.MustOpen(t)
	ids := storetest.SeedDecisionRecords(t, db, []store.DecisionRecordSeed{
		{Content: "Use JWT", Scope: "src/auth/jwt"},                                // 0: under the scope
		{Content: "Everything in Go", Scope: "project"},                            // 1: project
		{Content: "src is the root", Scope: "src"},                                 // 2: a prefix of the scope
		{Content: "Bill monthly", Scope: "src/billing"},                            // 3: elsewhere
		{Content: "Old auth", Scope: "src/auth", Status: store.DecisionSuperseded}, // 4: not active
		{Content: "Auth in one place", Scope: "src/auth"},                          // 5: prefix, no slash
	})
	warnIn := postEntry(t, db, store.EntryWarning, "src/auth/session.go", "Sessions leak")
	warnOut := postEntry(t, db, store.EntryWarning, "src/billing/", "Rounding")
	findIn := postEntry(t, db, store.EntryFinding, "src/", "Tests are slow")
	postEntry(t, db, store.EntryStatus, "src/auth/", "Working on it") // status entries are never cited

	h := handoff(t, db, agent.HandoffRequest{Scope: "src/auth/"})
	want := store.ContextSnapshot{
		DecisionIDs: []string{ids[5], ids[2], ids[1], ids[0]}, // newest first
		WarningIDs:  []string{warnIn},
		FindingIDs:  []string{findIn},
		Summaries: []string{"Decision: Auth in one place", "Decision: src is the root", "Decision: Everything in Go",
			"Decision: Use JWT", "Warning: Sessions leak", "Finding: Tests are slow"},
	}
	if diff := cmp.Diff(want, h.Snapshot); diff != "" {
		t.Fatalf("snapshot (-want +got):\n%s", diff)
	}
	_ = warnOut

	t.Run("no scope takes every active record", func(t *testing.T) {
		h := handoff(t, db, agent.HandoffRequest{})
		if got, want := sorted(h.Snapshot.DecisionIDs), sorted([]string{ids[0], ids[1], ids[2], ids[3], ids[5]}); !slices.Equal(got, want) {
			t.Fatalf("DecisionIDs = %v, want %v", got, want)
		}
		if got := len(h.Snapshot.WarningIDs); got != 2 {
			t.Fatalf("len(WarningIDs) = %d, want 2", got)
		}
	})
	t.Run("project scope takes everything too", func(t *testing.T) {
		h := handoff(t, db, agent.HandoffRequest{Scope: "project"})
		if got := len(h.Snapshot.DecisionIDs); got != 5 {
			t.Fatalf("len(DecisionIDs) = %d, want 5", got)
		}
	})
	t.Run("stored as assembled", func(t *testing.T) {
		got, err := db.FindAgentHandoffByID(context.Background(), "", h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.Snapshot); diff != "" {
			t.Fatalf("stored snapshot (-want +got):\n%s", diff)
		}
	})
}

func TestCreateHandoffCaps(t *testing.T) {
	db := storetest.MustOpen(t)
	var seeds []store.DecisionRecordSeed
	for i := range 8 {
		seeds = append(seeds, store.DecisionRecordSeed{Content: fmt.Sprintf("Decision %d", i), Scope: "src/a"})
	}
	storetest.SeedDecisionRecords(t, db, seeds)
	for i := range 6 {
		postEntry(t, db, store.EntryWarning, "src/a/", fmt.Sprintf("Warning %d", i))
		postEntry(t, db, store.EntryFinding, "src/a/", fmt.Sprintf("Finding %d", i))
	}
	h := handoff(t, db, agent.HandoffRequest{Scope: "src/a/"})
	s := h.Snapshot
	if len(s.DecisionIDs) != 8 || len(s.WarningIDs) != 6 || len(s.FindingIDs) != 6 {
		t.Fatalf("ids = %d/%d/%d, want every match 8/6/6", len(s.DecisionIDs), len(s.WarningIDs), len(s.FindingIDs))
	}
	count := map[string]int{}
	for _, line := range s.Summaries {
		kind, _, _ := strings.Cut(line, ": ")
		count[kind]++
	}
	if diff := cmp.Diff(map[string]int{"Decision": 5, "Warning": 3, "Finding": 3}, count); diff != "" {
		t.Fatalf("summaries per kind (-want +got):\n%s", diff)
	}
	if got, want := s.Summaries[0], "Decision: Decision 7"; got != want {
		t.Fatalf("Summaries[0] = %q, want the newest, %q", got, want)
	}
}

func TestCreateHandoffSnapshotChoice(t *testing.T) {
	db := storetest.MustOpen(t)
	ids := storetest.SeedDecisionRecords(t, db, []store.DecisionRecordSeed{{Content: "Use JWT"}})
	warn := postEntry(t, db, store.EntryWarning, "", "Careful")
	no := false

	t.Run("manual snapshot is used as is", func(t *testing.T) {
		manual := store.ContextSnapshot{DecisionIDs: ids, WarningIDs: []string{warn}, Summaries: []string{"Read D1 first"}}
		h := handoff(t, db, agent.HandoffRequest{ContextSnapshot: &manual, AutoSnapshot: &no})
		want := manual
		want.FindingIDs = []string{}
		if diff := cmp.Diff(want, h.Snapshot); diff != "" {
			t.Fatalf("snapshot (-want +got):\n%s", diff)
		}
	})
	t.Run("auto_snapshot false sends empty lists", func(t *testing.T) {
		h := handoff(t, db, agent.HandoffRequest{AutoSnapshot: &no})
		if diff := cmp.Diff(store.EmptyContextSnapshot(), h.Snapshot); diff != "" {
			t.Fatalf("snapshot (-want +got):\n%s", diff)
		}
		got, _ := db.FindAgentHandoffByID(context.Background(), "", h.ID)
		b, _ := json.Marshal(got.Snapshot)
		if want := `{"decision_ids":[],"warning_ids":[],"finding_ids":[],"summaries":[]}`; string(b) != want {
			t.Fatalf("stored snapshot = %s, want %s", b, want)
		}
	})
	t.Run("ids of another workspace are refused", func(t *testing.T) {
		other := storetest.SeedWorkspace(t, db, "Other")
		e := &store.BlackboardEntry{WorkspaceID: other, Type: store.EntryWarning, Summary: "Theirs", AgentID: "x"}
		if err := db.CreateBlackboardEntry(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		for name, snap := range map[string]store.ContextSnapshot{
			"warning of another workspace":  {WarningIDs: []string{e.ID}},
			"decision that does not exist":  {DecisionIDs: []string{"nope"}},
			"warning listed as a finding":   {FindingIDs: []string{warn}},
			"decision of another workspace": {DecisionIDs: ids},
		} {
			t.Run(name, func(t *testing.T) {
				in := agent.HandoffRequest{SourceAgent: "a", Summary: "s", ContextSnapshot: &snap}
				if name == "decision of another workspace" {
					in.WorkspaceID = other
				}
				before := countHandoffs(t, db, in.WorkspaceID)
				_, err := agent.CreateHandoff(context.Background(), db, in)
				if !errors.Is(err, store.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				if got := countHandoffs(t, db, in.WorkspaceID); got != before {
					t.Fatalf("%d handoffs after a refused one, want %d: nothing stored", got, before)
				}
			})
		}
	})
}

func countHandoffs(t *testing.T, db *store.DB, ws string) int {
	t.Helper()
	hs, err := db.FindAgentHandoffs(context.Background(), store.AgentHandoffFilter{WorkspaceID: ws, Limit: store.MaxSearchLimit})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := db.FindBlackboardEntries(context.Background(), store.BlackboardFilter{WorkspaceID: ws, Types: []store.EntryType{store.EntryStatus}, Limit: store.MaxSearchLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(hs) {
		t.Fatalf("%d status entries for %d handoffs", len(entries), len(hs))
	}
	return len(hs)
}

func TestCreateHandoffStatusEntry(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	long := strings.Repeat("é", 300)
	tests := []struct {
		name                   string
		in                     agent.HandoffRequest
		summary, detail, scope string
	}{
		{"targeted", agent.HandoffRequest{SourceAgent: "claude-code", TargetAgent: "codex", Scope: "src/auth/", Summary: "Auth done",
			Results: json.RawMessage(`["tests pass", {"file": "a.go"}]`)},
			"Handoff created: Auth done", "From claude-code to codex. 2 result(s).", "src/auth/"},
		{"any agent, no scope", agent.HandoffRequest{SourceAgent: "cursor", Summary: "Line one\nline two"},
			"Handoff created: Line one line two", "From cursor to any agent. 0 result(s).", "project"},
		{"long summary is cut at 200", agent.HandoffRequest{SourceAgent: "codex", Summary: long},
			cutAt("Handoff created: "+long, 200), "From codex to any agent. 0 result(s).", "project"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := handoff(t, db, tt.in)
			e, err := db.FindBlackboardEntryByID(ctx, "", h.StatusEntryID)
			if err != nil {
				t.Fatal(err)
			}
			want := &store.BlackboardEntry{ID: e.ID, WorkspaceID: db.DefaultWorkspaceID(), Type: store.EntryStatus,
				Summary: tt.summary, Detail: tt.detail, Scope: tt.scope, Tags: []string{"handoff"},
				AgentID: tt.in.SourceAgent, CreatedAt: h.CreatedAt}
			if diff := cmp.Diff(want, e); diff != "" {
				t.Fatalf("status entry (-want +got):\n%s", diff)
			}
			if n := utf8.RuneCountInString(e.Summary); n > store.MaxEntrySummary {
				t.Fatalf("summary is %d characters, want at most %d", n, store.MaxEntrySummary)
			}
			if tt.in.TargetAgent != "" && h.TargetAgent != tt.in.TargetAgent {
				t.Fatalf("TargetAgent = %q, want %q kept", h.TargetAgent, tt.in.TargetAgent)
			}
		})
	}
	got, _ := db.FindBlackboardEntryByID(ctx, "", handoff(t, db, tests[2].in).StatusEntryID)
	if n := utf8.RuneCountInString(got.Summary); n != 200 {
		t.Fatalf("cut summary is %d characters, want exactly 200", n)
	}
}

func cutAt(s string, n int) string { return string([]rune(s)[:n]) }

func TestCreateHandoffBadInput(t *testing.T) {
	db := storetest.MustOpen(t)
	tests := []struct {
		name string
		in   agent.HandoffRequest
	}{
		{"empty source", agent.HandoffRequest{Summary: "x"}},
		{"blank source", agent.HandoffRequest{SourceAgent: "  ", Summary: "x"}},
		{"empty summary", agent.HandoffRequest{SourceAgent: "a"}},
		{"results not a list", agent.HandoffRequest{SourceAgent: "a", Summary: "x", Results: json.RawMessage(`{"a":1}`)}},
		{"results a string", agent.HandoffRequest{SourceAgent: "a", Summary: "x", Results: json.RawMessage(`"done"`)}},
		{"scope climbs out", agent.HandoffRequest{SourceAgent: "a", Summary: "x", Scope: "../etc"}},
		{"summary too long", agent.HandoffRequest{SourceAgent: "a", Summary: strings.Repeat("x", store.MaxHandoffSummary+1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := agent.CreateHandoff(context.Background(), db, tt.in); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
	if n := countHandoffs(t, db, ""); n != 0 {
		t.Fatalf("%d handoffs stored, want none", n)
	}
}

func TestAcknowledgeHandoff(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	h := handoff(t, db, agent.HandoffRequest{TargetAgent: "codex"})
	if h.Status != store.AgentHandoffPending {
		t.Fatalf("Status = %q, want pending", h.Status)
	}
	got, err := db.AcknowledgeAgentHandoff(ctx, "", h.ID, "codex")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.AgentHandoffAcknowledged || got.AcknowledgedBy != "codex" || got.AcknowledgedAt.IsZero() {
		t.Fatalf("after acknowledging: status %q by %q at %v", got.Status, got.AcknowledgedBy, got.AcknowledgedAt)
	}
	if _, err := db.AcknowledgeAgentHandoff(ctx, "", h.ID, "cursor"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second acknowledgement: err = %v, want ErrConflict", err)
	}
	again, _ := db.FindAgentHandoffByID(ctx, "", h.ID)
	if again.AcknowledgedBy != "codex" || !again.AcknowledgedAt.Equal(got.AcknowledgedAt) {
		t.Fatalf("after a second acknowledgement: by %q at %v, want the first kept", again.AcknowledgedBy, again.AcknowledgedAt)
	}
	if _, err := db.AcknowledgeAgentHandoff(ctx, "", "no-such-id", "codex"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: err = %v, want ErrNotFound", err)
	}
	other := storetest.SeedWorkspace(t, db, "Other")
	if _, err := db.AcknowledgeAgentHandoff(ctx, other, h.ID, "codex"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another workspace's handoff: err = %v, want ErrNotFound", err)
	}
	if _, err := db.AcknowledgeAgentHandoff(ctx, "", h.ID, " "); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("empty by: err = %v, want ErrInvalid", err)
	}
}

func TestClaimHandoffRace(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	for round := range 20 {
		h := handoff(t, db, agent.HandoffRequest{})
		var wg sync.WaitGroup
		errs := make([]error, 2)
		start := make(chan struct{})
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = db.ClaimAgentHandoff(ctx, "", h.ID, fmt.Sprintf("agent-%d", i))
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d: err = %v, want nil or ErrConflict", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d claims won (errs %v), want exactly 1", round, won, errs)
		}
		got, _ := db.FindAgentHandoffByID(ctx, "", h.ID)
		if got.ClaimedBy == "" || got.ClaimedAt.IsZero() {
			t.Fatalf("round %d: claimed by %q at %v", round, got.ClaimedBy, got.ClaimedAt)
		}
	}
}

func TestClaimRules(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	targeted := handoff(t, db, agent.HandoffRequest{TargetAgent: "codex"})
	if _, err := db.ClaimAgentHandoff(ctx, "", targeted.ID, "cursor"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claiming another agent's handoff: err = %v, want ErrConflict", err)
	}
	if _, err := db.ClaimAgentHandoff(ctx, "", targeted.ID, "codex"); err != nil {
		t.Fatalf("the target claiming its own handoff: %v", err)
	}
	done := handoff(t, db, agent.HandoffRequest{})
	if _, err := db.AcknowledgeAgentHandoff(ctx, "", done.ID, "codex"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimAgentHandoff(ctx, "", done.ID, "cursor"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claiming an acknowledged handoff: err = %v, want ErrConflict", err)
	}
	if _, err := db.ClaimAgentHandoff(ctx, "", "no-such-id", "cursor"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: err = %v, want ErrNotFound", err)
	}
}

func TestInbox(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	forCodex := handoff(t, db, agent.HandoffRequest{SourceAgent: "claude-code", TargetAgent: "codex", Scope: "docs/"})
	open := handoff(t, db, agent.HandoffRequest{SourceAgent: "claude-code", Scope: "src/auth/"})
	elsewhere := handoff(t, db, agent.HandoffRequest{SourceAgent: "claude-code", Scope: "src/billing/"})
	handoff(t, db, agent.HandoffRequest{SourceAgent: "claude-code", TargetAgent: "cursor"}) // someone else's
	own := handoff(t, db, agent.HandoffRequest{SourceAgent: "codex"})                       // codex's own
	claimed := handoff(t, db, agent.HandoffRequest{SourceAgent: "claude-code", Scope: "src/"})
	if _, err := db.ClaimAgentHandoff(ctx, "", claimed.ID, "cursor"); err != nil {
		t.Fatal(err)
	}
	ids := func(hs []*store.AgentHandoff) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	got, err := db.FindInbox(ctx, "", "codex", "src/auth/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{open.ID, forCodex.ID}, ids(got)); diff != "" {
		t.Fatalf("inbox in src/auth/ (-want +got):\n%s", diff)
	}
	got, _ = db.FindInbox(ctx, "", "codex", "", 0)
	if diff := cmp.Diff([]string{elsewhere.ID, open.ID, forCodex.ID}, ids(got)); diff != "" {
		t.Fatalf("inbox everywhere (-want +got):\n%s", diff)
	}
	_ = own
	if _, err := db.AcknowledgeAgentHandoff(ctx, "", forCodex.ID, "codex"); err != nil {
		t.Fatal(err)
	}
	got, _ = db.FindInbox(ctx, "", "codex", "src/auth/", 0)
	if diff := cmp.Diff([]string{open.ID}, ids(got)); diff != "" {
		t.Fatalf("inbox after acknowledging (-want +got):\n%s", diff)
	}
	if _, err := db.FindInbox(ctx, "", "", "", 0); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("inbox of nobody: err = %v, want ErrInvalid", err)
	}
}

func TestBlackboardFilters(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := context.Background()
	a := postEntry(t, db, store.EntryWarning, "src/auth/", "A")
	b := &store.BlackboardEntry{Type: store.EntryFinding, Scope: "src/", Summary: "B", AgentID: "x", Tags: []string{"perf", "db"}}
	if err := db.CreateBlackboardEntry(ctx, b); err != nil {
		t.Fatal(err)
	}
	c := postEntry(t, db, store.EntryStatus, "docs/", "C")
	tests := []struct {
		name string
		f    store.BlackboardFilter
		want []string
	}{
		{"all, newest first", store.BlackboardFilter{}, []string{c, b.ID, a}},
		{"type", store.BlackboardFilter{Types: []store.EntryType{store.EntryWarning, store.EntryStatus}}, []string{c, a}},
		{"scope both ways", store.BlackboardFilter{Scope: "src/auth/login.go"}, []string{b.ID, a}},
		{"tag", store.BlackboardFilter{Tags: []string{"perf"}}, []string{b.ID}},
		{"two tags", store.BlackboardFilter{Tags: []string{"perf", "nope"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.FindBlackboardEntries(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Fatalf("entries (-want +got):\n%s", diff)
			}
		})
	}
	bad := []*store.BlackboardEntry{
		{Type: "rumour", Summary: "x", AgentID: "a"},
		{Type: store.EntryWarning, Summary: strings.Repeat("x", 201), AgentID: "a"},
		{Type: store.EntryWarning, Summary: "x", AgentID: ""},
		{Type: store.EntryWarning, Summary: "x", AgentID: "a", Detail: strings.Repeat("x", 10_001)},
		{Type: store.EntryWarning, Summary: "", AgentID: "a"},
	}
	for i, e := range bad {
		if err := db.CreateBlackboardEntry(ctx, e); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("bad entry %d: err = %v, want ErrInvalid", i, err)
		}
	}
}
