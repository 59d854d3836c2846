package agent_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

func TestADRFileName(t *testing.T) {
	tests := []struct {
		n       int
		content string
		want    string
	}{
		{1, "Use Postgres.", "0001-use-postgres.md"},
		{12, "Sign sessions with JWT (RS256) in src/auth/jwt.ts; rotate monthly", "0012-sign-sessions-with-jwt-rs256-in-src-auth-jwt-ts.md"},
		{3, "Éviter ¿?", "0003-viter.md"},
		{4, "!!!", "0004-decision.md"},
	}
	for _, tt := range tests {
		if got := agent.ADRFileName(tt.n, store.DecisionRecord{Content: tt.content}); got != tt.want {
			t.Errorf("ADRFileName(%d, %q) = %q, want %q", tt.n, tt.content, got, tt.want)
		}
	}
}

func TestADRMarkdown(t *testing.T) {
	ctx := context.Background()
	db := store.MustOpen(t)
	db.SetClock(ticking())
	first, err := db.CaptureSnapshot(ctx, memSnapshot(t, db,
		[]string{"Use JWT for sessions in src/auth/jwt.ts."},
		[][2]string{{"src/auth/jwt.ts", "Token code"}},
		[][2]string{{"Key leak from jwt.ts", "Rotate keys"}}), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := db.CaptureSnapshot(ctx, memSnapshot(t, db,
		[]string{"Use server sessions in src/auth/session.ts instead of JWT."}, [][2]string{{"src/auth/session.ts", "Sessions"}}, nil),
		"", agent.JudgeOrRule(ctx, agent.RuleJudge))
	if err != nil {
		t.Fatal(err)
	}
	old, err := db.FindDecisionRecordByID(ctx, first.Records[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	md := string(agent.ADRMarkdown(*old, agent.ADROptions{Number: 1, BaseURL: "https://baton.example/"}))
	for _, want := range []string{
		"---\nstatus: superseded by decision " + second.Records[0].ID + "\ndate: 2026-03-01\nscope: src/auth\n---\n",
		"# ADR-0001: Use JWT for sessions in src/auth/jwt.ts\n",
		"## Context and Problem Statement\n",
		"## Decision Outcome\n\nUse JWT for sessions in src/auth/jwt.ts.\n",
		"### Consequences\n\n* Changes `src/auth/jwt.ts` (tied together in 1 handoff).\n* Risk (high): Key leak from jwt.ts Mitigation: Rotate keys\n",
		"* Superseded by: [Use server sessions in src/auth/session.ts instead of JWT](https://baton.example/decisions/" + second.Records[0].ID + ")\n",
		"* Source handoff: [" + old.HandoffID + "](https://baton.example/h/" + old.HandoffID + ")\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("ADR lacks %q:\n%s", want, md)
		}
	}

	neu, err := db.FindDecisionRecordByID(ctx, second.Records[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	md = string(agent.ADRMarkdown(*neu, agent.ADROptions{}))
	for _, want := range []string{
		"status: accepted\n",
		"# Use server sessions in src/auth/session.ts instead of JWT\n",
		"* Supersedes: [Use JWT for sessions in src/auth/jwt.ts](/decisions/" + old.ID + ")\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("ADR lacks %q:\n%s", want, md)
		}
	}
}

func TestADRZip(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	records := []*store.DecisionRecord{
		{ID: "b", Content: "Use Redis for the queue", Status: store.DecisionActive, Scope: "project", CreatedAt: at.Add(time.Hour), UpdatedAt: at},
		{ID: "a", Content: "Use Postgres", Status: store.DecisionSuperseded, SupersededBy: "c", Scope: "project", CreatedAt: at, UpdatedAt: at},
		{ID: "c", Content: "Use SQLite", Status: store.DecisionActive, Scope: "project", CreatedAt: at.Add(2 * time.Hour), UpdatedAt: at},
	}
	b, err := agent.ADRZip(records, agent.ADROptions{})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	files := map[string]string{}
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(body)
	}
	if diff := cmp.Diff([]string{"0001-use-postgres.md", "0002-use-redis-for-the-queue.md", "0003-use-sqlite.md"}, names); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if got := files["0001-use-postgres.md"]; !strings.Contains(got, "status: superseded by 0003-use-sqlite\n") ||
		!strings.Contains(got, "# ADR-0001: Use Postgres\n") || !strings.Contains(got, "](0003-use-sqlite.md)") {
		t.Errorf("0001 does not link to 0003:\n%s", got)
	}
	again, err := agent.ADRZip(records, agent.ADROptions{})
	if err != nil || !bytes.Equal(b, again) {
		t.Errorf("the same records made a different archive (err %v)", err)
	}
}
