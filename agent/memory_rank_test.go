package agent

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

func TestRankMemory(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	db.SetClock(func() time.Time { now = now.Add(time.Second); return now })
	sn := storetest.FrozenSnapshot(t, db, storetest.Items{
		Decisions: storetest.Decisions(
			"Rate limit the login endpoint in src/auth/login.go",
			"Use Redis for the job queue in src/jobs/queue.go",
			"Throttle login by IP and by account in src/auth/login.go",
		),
		Files: []store.FileRefInput{{Path: "src/auth/login.go", Context: "Login handler"}, {Path: "src/jobs/queue.go", Context: "Queue"}},
		Risks: []store.RiskInput{
			{Description: "Lockout abuse on login.go", Severity: store.LevelHigh, Mitigation: "Per-account backoff"},
			{Description: "Redis memory", Severity: store.LevelLow},
		},
	})
	res, err := CaptureSnapshot(ctx, db, sn, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	limit, redis, throttle := res.Records[0], res.Records[1], res.Records[2]
	if err := db.SupersedeDecisionRecord(ctx, limit.ID, throttle.ID); err != nil {
		t.Fatal(err)
	}

	m, err := rankMemory(ctx, db, "", "how should login throttling work in src/auth/login.go?", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range m.decisions {
		ids = append(ids, d.ID)
	}
	if diff := cmp.Diff([]string{throttle.ID, redis.ID}, ids); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if len(m.risks) != 2 || m.risks[0].Content != "Lockout abuse on login.go" {
		t.Errorf("risks = %+v, want lockout first", m.risks)
	}
	if len(m.files) != 2 || m.files[0].Path != "src/auth/login.go" {
		t.Errorf("files = %+v, want login.go (in play) first", m.files)
	}
	if len(m.fileLinks) != 1 || m.fileLinks[0].Path != "src/auth/login.go" {
		t.Fatalf("file links = %+v, want login.go's", m.fileLinks)
	}
	for _, d := range m.fileLinks[0].Decisions {
		if d.Record.Status != store.DecisionActive {
			t.Errorf("file links hold superseded %q", d.Record.Content)
		}
	}

	// Whichever file the conversation names comes first.
	m, err = rankMemory(ctx, db, "", "what about queue.go", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.files) != 2 || m.files[0].Path != "src/jobs/queue.go" || len(m.fileLinks) != 1 || m.fileLinks[0].Path != "src/jobs/queue.go" {
		t.Errorf("files = %+v, links = %+v: want queue.go in play first", m.files, m.fileLinks)
	}
}
