package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// Item updates read, validate, write and return in one transaction; one
// that sets no field, names no version or a stale one is refused and
// changes nothing.
func TestItemUpdates(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "x")
	h, _ := db.EnsureHandoff(ctx, b.thread.ID)
	d, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Use JWT", Source: store.SourceAI, Confidence: ptr(0.9)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fch, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/a.go", Relevance: store.LevelHigh, Context: "changes", Source: store.SourceAI}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/b.go", Relevance: store.LevelLow}, 0); err != nil {
		t.Fatal(err)
	}
	rch, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Leak", Severity: store.LevelHigh, Mitigation: "rotate", Source: store.SourceAI}, 0)
	if err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		name string
		do   func(version int) error
		want error
	}{
		{"decision, no field", func(v int) error {
			_, _, err := db.UpdateDecision(ctx, h.ID, d.ID, store.DecisionUpdate{Version: v})
			return err
		}, store.ErrInvalid},
		{"file, no field", func(v int) error {
			_, _, err := db.UpdateFileRef(ctx, h.ID, fch.ID, store.FileRefUpdate{Version: v})
			return err
		}, store.ErrInvalid},
		{"risk, no field", func(v int) error {
			_, _, err := db.UpdateRisk(ctx, h.ID, rch.ID, store.RiskUpdate{Version: v})
			return err
		}, store.ErrInvalid},
		{"decision, no version", func(int) error {
			_, _, err := db.UpdateDecision(ctx, h.ID, d.ID, store.DecisionUpdate{Content: ptr("new")})
			return err
		}, store.ErrInvalid},
		{"file, stale version", func(v int) error {
			_, _, err := db.UpdateFileRef(ctx, h.ID, fch.ID, store.FileRefUpdate{Context: ptr("new"), Version: v - 1})
			return err
		}, store.ErrStaleVersion},
		{"risk, stale version", func(v int) error {
			_, _, err := db.UpdateRisk(ctx, h.ID, rch.ID, store.RiskUpdate{Mitigation: ptr("new"), Version: v - 1})
			return err
		}, store.ErrConflict},
		{"file, a path already listed", func(v int) error {
			_, _, err := db.UpdateFileRef(ctx, h.ID, fch.ID, store.FileRefUpdate{Path: ptr("./src/b.go"), Version: v})
			return err
		}, store.ErrConflict},
		{"file, a path outside the project", func(v int) error {
			_, _, err := db.UpdateFileRef(ctx, h.ID, fch.ID, store.FileRefUpdate{Path: ptr("../etc/passwd"), Version: v})
			return err
		}, store.ErrInvalid},
		{"risk of another kind's id", func(v int) error {
			_, _, err := db.UpdateRisk(ctx, h.ID, d.ID, store.RiskUpdate{Mitigation: ptr("new"), Version: v})
			return err
		}, store.ErrNotFound},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			before := mustHandoff(t, db, h.ID)
			err := tt.do(before.Version)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err=%v, want %v", err, tt.want)
			}
			after := mustHandoff(t, db, h.ID)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Fatalf("a refused update changed the handoff (-before +after):\n%s", diff)
			}
		})
	}

	// Set fields are applied, the others kept; the item comes back as stored.
	v := mustHandoff(t, db, h.ID).Version
	gotD, ch, err := db.UpdateDecision(ctx, h.ID, d.ID, store.DecisionUpdate{Content: ptr("  Use JWT with rotation  "), Version: v})
	if err != nil {
		t.Fatal(err)
	}
	if ch.ID != d.ID || ch.Version != v+1 {
		t.Fatalf("Change=%+v, want ID %s and version %d", ch, d.ID, v+1)
	}
	gotF, ch, err := db.UpdateFileRef(ctx, h.ID, fch.ID, store.FileRefUpdate{Relevance: ptr[store.Level]("Medium"), Version: ch.Version})
	if err != nil {
		t.Fatal(err)
	}
	gotR, ch, err := db.UpdateRisk(ctx, h.ID, rch.ID, store.RiskUpdate{Description: ptr("Token leak"), Version: ch.Version})
	if err != nil {
		t.Fatal(err)
	}
	stored := mustHandoff(t, db, h.ID)
	if stored.Version != ch.Version {
		t.Fatalf("stored version %d, want the last Change's %d", stored.Version, ch.Version)
	}
	if diff := cmp.Diff(stored.Decisions[0], gotD); diff != "" {
		t.Fatalf("returned decision differs from the stored one (-stored +returned):\n%s", diff)
	}
	if diff := cmp.Diff(stored.Files[0], gotF); diff != "" {
		t.Fatalf("returned file differs from the stored one (-stored +returned):\n%s", diff)
	}
	if diff := cmp.Diff(stored.Risks[0], gotR); diff != "" {
		t.Fatalf("returned risk differs from the stored one (-stored +returned):\n%s", diff)
	}
	if gotD.Content != "Use JWT with rotation" || gotD.Source != store.SourceEdited || gotD.Confidence == nil || *gotD.Confidence != 0.9 || gotD.Label != "D1" {
		t.Fatalf("decision %+v, want the trimmed content, user-edited, its confidence and label kept", gotD)
	}
	if gotF.Path != "src/a.go" || gotF.Relevance != store.LevelMedium || gotF.Context != "changes" || gotF.Source != store.SourceEdited {
		t.Fatalf("file %+v, want relevance medium, path and context kept, user-edited", gotF)
	}
	if gotR.Description != "Token leak" || gotR.Severity != store.LevelHigh || gotR.Mitigation != "rotate" || gotR.Source != store.SourceEdited {
		t.Fatalf("risk %+v, want the new description, severity and mitigation kept, user-edited", gotR)
	}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("x", store.MaxItemLen+1)
	tests := []struct {
		name  string
		item  interface{ Validate() error }
		valid bool
	}{
		{"decision", &store.Decision{Content: "Use JWT", Source: store.SourceAI, Confidence: ptr(0.5)}, true},
		{"decision without content", &store.Decision{Content: " \n ", Source: store.SourcePinned}, false},
		{"decision too long", &store.Decision{Content: long, Source: store.SourcePinned}, false},
		{"decision control character", &store.Decision{Content: "a\x07b", Source: store.SourcePinned}, false},
		{"decision unknown source", &store.Decision{Content: "x", Source: "robot"}, false},
		{"decision confidence below 0", &store.Decision{Content: "x", Source: store.SourceAI, Confidence: ptr(-0.1)}, false},
		{"file", &store.FileRef{Path: "`./src/app.go`", Relevance: "HIGH", Source: store.SourcePinned}, true},
		{"file path empty", &store.FileRef{Path: " ", Relevance: store.LevelHigh, Source: store.SourcePinned}, false},
		{"file path absolute", &store.FileRef{Path: "/etc/passwd", Relevance: store.LevelHigh, Source: store.SourcePinned}, false},
		{"file path with ..", &store.FileRef{Path: "a/../../b", Relevance: store.LevelHigh, Source: store.SourcePinned}, false},
		{"file path too long", &store.FileRef{Path: strings.Repeat("é", store.MaxPathLen+1), Relevance: store.LevelHigh, Source: store.SourcePinned}, false},
		{"file path at the limit in characters", &store.FileRef{Path: strings.Repeat("é", store.MaxPathLen), Relevance: store.LevelHigh, Source: store.SourcePinned}, true},
		{"file unknown relevance", &store.FileRef{Path: "a.go", Relevance: "critical", Source: store.SourcePinned}, false},
		{"file context too long", &store.FileRef{Path: "a.go", Relevance: store.LevelLow, Context: long, Source: store.SourcePinned}, false},
		{"risk", &store.Risk{Description: "Leak", Severity: " low ", Source: store.SourceEdited}, true},
		{"risk without description", &store.Risk{Severity: store.LevelLow, Source: store.SourceEdited}, false},
		{"risk unknown severity", &store.Risk{Description: "Leak", Severity: "severe", Source: store.SourceEdited}, false},
		{"risk mitigation too long", &store.Risk{Description: "Leak", Severity: store.LevelLow, Mitigation: long, Source: store.SourceEdited}, false},
		{"thread", &store.Thread{Title: "  Auth   rework "}, true},
		{"thread without title", &store.Thread{}, true},
		{"thread title too long", &store.Thread{Title: strings.Repeat("t", store.MaxTitleLen+1)}, false},
		{"user message", &store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusComplete}, true},
		{"user message blank", &store.Message{Role: store.RoleUser, Content: "  ", Status: store.StatusComplete}, false},
		{"user message too long", &store.Message{Role: store.RoleUser, Content: strings.Repeat("x", store.MaxUserMessageBytes+1), Status: store.StatusComplete}, false},
		{"user message failed", &store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFailed}, false},
		{"assistant message failed", &store.Message{Role: store.RoleAssistant, Status: store.StatusFailed}, true},
		{"assistant message unknown status", &store.Message{Role: store.RoleAssistant, Content: "x", Status: "late"}, false},
		{"message unknown role", &store.Message{Role: "system", Content: "x", Status: store.StatusComplete}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.item.Validate()
			if tt.valid {
				if err != nil {
					t.Fatalf("Validate()=%v, want nil", err)
				}
				return
			}
			if !errors.Is(err, store.ErrInvalid) || store.ErrorMessage(err) == store.ErrInvalid.Message {
				t.Fatalf("Validate()=%v, want an EINVALID *store.Error saying what to fix", err)
			}
		})
	}

	// Validate normalises what it accepts.
	f := &store.FileRef{Path: "`./src/app.go`", Relevance: "HIGH", Context: " why ", Source: store.SourcePinned}
	if err := f.Validate(); err != nil || f.Path != "src/app.go" || f.Relevance != store.LevelHigh || f.Context != "why" {
		t.Fatalf("FileRef.Validate: %v, %+v, want path src/app.go, relevance high, context trimmed", err, f)
	}
	th := &store.Thread{Title: "  Auth   rework "}
	if err := th.Validate(); err != nil || th.Title != "Auth rework" {
		t.Fatalf("Thread.Validate: %v, title %q, want %q", err, th.Title, "Auth rework")
	}
	if th := (&store.Thread{}); th.Validate() != nil || th.Title != store.DefaultThreadTitle {
		t.Fatalf("an empty title became %q, want %q", th.Title, store.DefaultThreadTitle)
	}
}
