package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// A SQLite installation copied into PostgreSQL reads back the same: ids,
// hashes (passwords, tokens, snapshots) and times kept, search working,
// new rows getting fresh ids; a second copy into the now full database is
// refused and changes nothing.
func TestCopyDatabase(t *testing.T) {
	ctx := context.Background()
	src, err := store.Open(ctx, filepath.Join(t.TempDir(), "baton.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()

	owner, err := src.SetUp(ctx, store.Setup{Owner: store.UserCreate{Email: "ana@example.com", Name: "Ana", Password: "correct horse battery"}, Workspace: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := src.CreateToken(ctx, store.TokenCreate{UserID: owner.ID, WorkspaceID: src.DefaultWorkspaceID(), Name: "ci", Scope: store.ScopeWrite})
	if err != nil {
		t.Fatal(err)
	}
	sn := storetest.FrozenSnapshot(t, src, storetest.Items{Title: "Billing",
		Decisions: storetest.Decisions("Use Postgres 16 for invoices.", "Send receipts from a queue."),
		Files:     []store.FileRefInput{{Path: "billing/invoice.go", Context: "the invoice model"}},
		Risks:     []store.RiskInput{{Description: "The queue can deliver twice.", Mitigation: "Idempotency keys."}},
		Summary:   "Invoices move to Postgres."})
	draft := storetest.NewHandoff(t, src, storetest.Items{Title: "Draft", Decisions: storetest.Decisions("Keep the old exporter.")})
	storetest.SeedDecisionRecords(t, src, []store.DecisionRecordSeed{
		{Content: "Retry webhooks with exponential backoff", Scope: "billing/"},
		{Content: "Webhooks are signed with HMAC", Scope: "billing/"},
	})
	storetest.SeedBlackboardEntries(t, src, []store.BlackboardEntry{{Type: store.EntryWarning, Summary: "Flaky invoice test", Scope: "billing/", AgentID: "codex"}})

	url := storetest.StartPostgres(t)
	dst, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	report, err := store.CopyDatabase(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, c := range report.Tables {
		if c.Source != c.Dest {
			t.Errorf("%s: %d rows in the source, %d in the target", c.Table, c.Source, c.Dest)
		}
		counts[c.Table] = c.Dest
	}
	for table, want := range map[string]int{"users": 1, "snapshots": 1, "decision_records": 2, "decisions": 4, "handoffs": 3, "blackboard_entries": 1, "api_tokens": 1, "threads": 3} {
		if counts[table] < want {
			t.Errorf("%s: %d rows copied, want at least %d (all: %v)", table, counts[table], want, counts)
		}
	}
	if report.Snapshots != counts["snapshots"] || report.Snapshots < 1 {
		t.Errorf("verified %d snapshots, want all %d", report.Snapshots, counts["snapshots"])
	}

	// Reopened, as an instance would open it.
	dst.Close()
	if dst, err = store.Open(ctx, url); err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if dst.DefaultWorkspaceID() != src.DefaultWorkspaceID() {
		t.Errorf("default workspace %s, want the source's %s", dst.DefaultWorkspaceID(), src.DefaultWorkspaceID())
	}
	if u, err := dst.AuthenticateUser(ctx, "ana@example.com", "correct horse battery"); err != nil || u.ID != owner.ID {
		t.Errorf("sign in after the copy: %v, %v", u, err)
	}
	if tok, err := dst.FindTokenBySecret(ctx, secret); err != nil || tok.UserID != owner.ID {
		t.Errorf("token after the copy: %v, %v", tok, err)
	}
	got, err := dst.FindSnapshotByID(ctx, sn.ID)
	if err != nil || got.SHA256 != sn.SHA256 || !got.CreatedAt.Equal(sn.CreatedAt) || string(got.JSON) != string(sn.JSON) {
		t.Errorf("snapshot after the copy: %+v, %v; want %+v", got, err, sn)
	}
	h, err := dst.FindHandoffByID(ctx, draft.ID)
	if err != nil || len(h.Decisions) != 1 || h.Decisions[0].Content != "Keep the old exporter." {
		t.Fatalf("draft after the copy: %+v, %v", h, err)
	}
	found, err := dst.FindDecisionRecords(ctx, store.DecisionRecordFilter{Terms: []string{"webhooks"}})
	if err != nil || len(found) != 2 {
		t.Errorf("search for webhooks after the copy: %d records, %v; want 2", len(found), err)
	}
	// New rows get ids after the copied ones.
	if _, _, err := dst.CreateDecision(ctx, draft.ID, store.DecisionCreate{Content: "Export nightly."}, h.Version); err != nil {
		t.Errorf("new decision after the copy: %v", err)
	}
	storetest.SeedDecisionRecords(t, dst, []store.DecisionRecordSeed{{Content: "A record made after the copy"}})

	if _, err := store.CopyDatabase(ctx, src, dst); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("copy into a database that holds data: %v, want ECONFLICT", err)
	}
	if h2, err := dst.FindHandoffByID(ctx, draft.ID); err != nil || len(h2.Decisions) != 2 {
		t.Fatalf("the refused copy changed the target: %+v, %v", h2, err)
	}
}
