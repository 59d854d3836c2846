package adr_test

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/adr"
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
		if got := adr.FileName(tt.n, store.DecisionRecord{Content: tt.content}); got != tt.want {
			t.Errorf("FileName(%d, %q) = %q, want %q", tt.n, tt.content, got, tt.want)
		}
	}
}

func TestADRMarkdown(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 1, 0, time.UTC)
	// Two records as the store returns them from FindDecisionRecordByID: the
	// first superseded by the second.
	old := store.DecisionRecord{ID: "rec-old", HandoffID: "h1", SnapshotID: "s1", ThreadID: "t1", Label: "D1",
		Content: "Use JWT for sessions in src/auth/jwt.ts.", Scope: "src/auth", Status: store.DecisionSuperseded,
		SupersededBy: "rec-new", MessageIDs: []string{}, CreatedAt: at, UpdatedAt: at.Add(time.Minute),
		Files: []store.Relationship{{Type: store.RelDecisionFile, Source: "rec-old", Target: "src/auth/jwt.ts", Count: 1}},
		Risks: []store.RiskLink{{Relationship: store.Relationship{Type: store.RelDecisionRisk, Source: "rec-old", Target: "Key leak from jwt.ts", Count: 1},
			Severity: store.LevelHigh, Mitigation: "Rotate keys"}}}
	neu := store.DecisionRecord{ID: "rec-new", HandoffID: "h2", SnapshotID: "s2", ThreadID: "t2", Label: "D1",
		Content: "Use server sessions in src/auth/session.ts instead of JWT.", Scope: "src/auth", Status: store.DecisionActive,
		MessageIDs: []string{}, CreatedAt: at.Add(time.Minute), UpdatedAt: at.Add(time.Minute)}
	old.Chain = []*store.DecisionRecord{&old, &neu}
	neu.Chain = old.Chain

	md := string(adr.Markdown(old, adr.Options{Number: 1, BaseURL: "https://baton.example/"}))
	for _, want := range []string{
		"---\nstatus: superseded by decision " + neu.ID + "\ndate: 2026-03-01\nscope: src/auth\n---\n",
		"# ADR-0001: Use JWT for sessions in src/auth/jwt.ts\n",
		"## Context and Problem Statement\n",
		"## Decision Outcome\n\nUse JWT for sessions in src/auth/jwt.ts.\n",
		"### Consequences\n\n* Changes `src/auth/jwt.ts` (tied together in 1 handoff).\n* Risk (high): Key leak from jwt.ts Mitigation: Rotate keys\n",
		"* Superseded by: [Use server sessions in src/auth/session.ts instead of JWT](https://baton.example/decisions/" + neu.ID + ")\n",
		"* Source handoff: [" + old.HandoffID + "](https://baton.example/h/" + old.HandoffID + ")\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("ADR lacks %q:\n%s", want, md)
		}
	}

	md = string(adr.Markdown(neu, adr.Options{}))
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
	b, err := adr.Zip(records, adr.Options{})
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
	again, err := adr.Zip(records, adr.Options{})
	if err != nil || !bytes.Equal(b, again) {
		t.Errorf("the same records made a different archive (err %v)", err)
	}
}
