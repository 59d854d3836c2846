package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// TestImportHandoff: an import makes a thread and a draft handoff in one
// go; the same session and payload again make nothing; an import with a
// bad item makes nothing at all.
func TestImportHandoff(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	in := store.HandoffImport{SessionID: "s1", PayloadSHA256: "abc", Title: "Imported", Summary: "  Sum.  ",
		Decisions: storetest.Decisions("One.", "Two."),
		Files:     []store.FileRefInput{{Path: "./src/a.go", Relevance: store.LevelHigh}},
		Risks:     []store.RiskInput{{Description: "Risky.", Severity: store.LevelLow}}}
	id, created, err := db.ImportHandoff(ctx, in)
	if err != nil || !created {
		t.Fatalf("ImportHandoff = %q, %v, %v", id, created, err)
	}
	h, err := db.FindHandoffByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != store.HandoffDraft || h.Summary != "Sum." || len(h.Decisions) != 2 || h.Decisions[1].Label != "D2" ||
		h.Decisions[0].Source != store.SourcePinned || len(h.Files) != 1 || h.Files[0].Path != "src/a.go" || len(h.Risks) != 1 {
		t.Fatalf("handoff = %+v", h)
	}
	again, created, err := db.ImportHandoff(ctx, in)
	if err != nil || created || again != id {
		t.Fatalf("again = %q, %v, %v; want %q, not created", again, created, err, id)
	}

	threads := func() int {
		ts, _ := db.FindThreads(ctx, store.ThreadFilter{})
		return len(ts)
	}
	before := threads()
	for name, tt := range map[string]struct {
		edit func(*store.HandoffImport)
		want string
	}{
		"no decisions":   {func(in *store.HandoffImport) { in.Decisions = nil }, "no decisions"},
		"file twice":     {func(in *store.HandoffImport) { in.Files = append(in.Files, in.Files[0]) }, "File 2: src/a.go is listed twice."},
		"bad path":       {func(in *store.HandoffImport) { in.Files[0].Path = "../etc" }, "File 1:"},
		"empty decision": {func(in *store.HandoffImport) { in.Decisions[1].Content = " " }, "Decision 2:"},
		"no session":     {func(in *store.HandoffImport) { in.SessionID = "" }, "session ID"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := in
			bad.PayloadSHA256 = "other-" + name
			bad.Decisions = append([]store.DecisionCreate(nil), in.Decisions...)
			bad.Files = append([]store.FileRefInput(nil), in.Files...)
			tt.edit(&bad)
			_, _, err := db.ImportHandoff(ctx, bad)
			if store.ErrorCode(err) != store.EINVALID || !strings.Contains(store.ErrorMessage(err), tt.want) {
				t.Fatalf("err = %v, want EINVALID containing %q", err, tt.want)
			}
		})
	}
	if got := threads(); got != before {
		t.Fatalf("threads = %d, want %d: nothing imported", got, before)
	}
}
