package store_test

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// TestActorRecorded checks authorship: an item a person adds or edits
// names them as its last author; one the model extracted names nobody.
func TestActorRecorded(t *testing.T) {
	db := storetest.MustOpen(t)
	ana, err := db.SetUp(context.Background(), store.Setup{
		Owner: store.UserCreate{Email: "ana@example.com", Name: "Ana", Password: "correct horse battery"}, Workspace: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	h := storetest.NewHandoff(t, db, storetest.Items{Decisions: storetest.Decisions("Use Postgres")})
	ctx := store.WithActor(context.Background(), ana.ID)
	find := func() *store.Handoff {
		t.Helper()
		got, err := db.FindHandoffByID(context.Background(), h.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := find().Decisions[0].UpdatedBy; got != "" {
		t.Fatalf("an item added without an actor names %q, want nobody", got)
	}
	content := "Use Postgres 16"
	if _, _, err := db.UpdateDecision(ctx, h.ID, find().Decisions[0].ID, store.DecisionUpdate{Content: &content, Version: find().Version}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Downtime", Severity: store.LevelHigh, Source: store.SourceEdited}, find().Version); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "db/schema.sql", Relevance: store.LevelHigh, Source: store.SourceEdited}, find().Version); err != nil {
		t.Fatal(err)
	}
	got := find()
	if got.Decisions[0].UpdatedBy != "Ana" || got.Risks[0].UpdatedBy != "Ana" || got.Files[0].UpdatedBy != "Ana" {
		t.Fatalf("last authors: decision %q, risk %q, file %q; want Ana for each",
			got.Decisions[0].UpdatedBy, got.Risks[0].UpdatedBy, got.Files[0].UpdatedBy)
	}
	th, err := db.FindThreadByID(context.Background(), got.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	// A message, a freeze and a plan run take the actor too (and would fail
	// on a user that does not exist: the columns are foreign keys).
	if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "ok"}); err != nil {
		t.Fatal(err)
	}
	sn, err := db.Freeze(ctx, h.ID, find().Version)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreatePlan(ctx, sn.ID); err != nil {
		t.Fatal(err)
	}
}
