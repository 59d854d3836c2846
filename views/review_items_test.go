package views_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/static"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// TestReviewItemsCached renders the review page through one item cache
// after each of a series of changes to what the items show, and checks
// every time that the page is exactly the page rendered without a cache:
// no change may be served from an entry of the state before it.
func TestReviewItemsCached(t *testing.T) {
	conf := 0.8
	h := &store.Handoff{ID: "h1", ThreadID: "t1", Version: 3, Status: store.HandoffDraft,
		Decisions: []*store.Decision{
			{ID: "d1", Label: "D1", Content: "Use Redis", Source: store.SourceAI, Confidence: &conf},
			{ID: "d2", Label: "D2", Content: "Answer 429", Source: store.SourcePinned, MessageIDs: []string{"m1"}},
		},
		Files: []*store.FileRef{{ID: "f1", Path: "a.go", Relevance: store.LevelHigh, Context: "the bucket", Source: store.SourceAI}},
		Risks: []*store.Risk{{ID: "r1", Description: "Redis down", Severity: store.LevelMedium, Mitigation: "fail open", Source: store.SourceAI}},
	}
	st := views.RequestState{CSRF: "tok", UserID: "u1", Role: "owner"}
	panel := &views.ReviewPanel{HandoffID: "h1", Base: "/h/h1", Counts: map[string]store.CommentCount{}}
	d1Key := store.Anchor{Kind: store.AnchorDecision, ID: "d1"}.Key()

	cache := views.NewHTMLCache(100)
	render := func(t *testing.T, items *views.HTMLCache) string {
		t.Helper()
		ctx := views.WithReviewPanel(views.WithRequestState(context.Background(), st), panel)
		r := views.Review{Handoff: h, Thread: &store.Thread{ID: "t1", Title: "Limits"}, Items: items}
		var b strings.Builder
		if err := views.ReviewPage(views.Meta{Title: "Review", Assets: static.New()}, r).Render(ctx, &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	steps := []struct {
		name   string
		change func()
		want   string // the page shows it
	}{
		{"first view", func() {}, "Use Redis"},
		{"same again", func() {}, "Use Redis"},
		{"content", func() { h.Decisions[0].Content = "Use Valkey" }, "Use Valkey"},
		{"label", func() { h.Decisions[0].Label = "D7" }, ">D7<"},
		{"confidence", func() { c := 0.5; h.Decisions[0].Confidence = &c }, "confidence 50%"},
		{"source message", func() { h.Decisions[0].MessageIDs = []string{"m9"} }, "#msg-m9"},
		{"during planning", func() { h.Decisions[0].DuringPlanning = true }, "added during planning"},
		{"file path", func() { h.Files[0].Path = "b.go" }, "b.go"},
		{"relevance", func() { h.Files[0].Relevance = store.LevelLow }, "level-low"},
		{"file context", func() { h.Files[0].Context = "the refill" }, "the refill"},
		{"risk", func() { h.Risks[0].Mitigation = "local bucket" }, "local bucket"},
		{"severity", func() { h.Risks[0].Severity = store.LevelHigh }, "level-high"},
		{"version", func() { h.Version = 4 }, `value="4"`},
		{"comment count", func() { panel.Counts[d1Key] = store.CommentCount{Threads: 1, Open: 1, Total: 2} }, "2 comments"},
		{"resolved", func() { panel.Counts[d1Key] = store.CommentCount{Threads: 1, Total: 2} }, "2 ✓"},
		{"csrf token", func() { st.CSRF = "tok2" }, "tok2"},
		{"read-only viewer", func() { st.ReadOnly = true }, "Use Valkey"},
		{"editor again", func() { st.ReadOnly = false }, "Use Valkey"},
		{"frozen", func() { h.Status = store.HandoffFrozen }, "Frozen"},
		{"edited by a person", func() {
			h.Status = store.HandoffDraft
			h.Decisions[0].Source, h.Decisions[0].UpdatedBy, h.Decisions[0].UpdatedAt = store.SourceEdited, "Ana", time.Now().Add(-3*time.Minute)
		}, "edited by Ana, 3 min ago"},
		{"thread", func() { h.ThreadID = "t2" }, "/t/t2#msg-m9"},
	}
	for _, step := range steps {
		step.change()
		got, want := render(t, cache), render(t, nil)
		if got != want {
			t.Fatalf("after %q the cached page differs from the page rendered afresh:\n%s\nwant\n%s", step.name, got, want)
		}
		if !strings.Contains(got, step.want) {
			t.Fatalf("after %q the page does not show %q", step.name, step.want)
		}
	}
}
