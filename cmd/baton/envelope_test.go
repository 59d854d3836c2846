package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
	"github.com/baton-dev/baton/store/storetest"
)

// TestEnvelopeCommands exports a handoff and a plan with baton envelope
// export, validates the files, imports the handoff twice, and validates
// broken copies: one line per problem and exit code 1.
func TestEnvelopeCommands(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "baton.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	sn := storetest.FrozenSnapshot(t, db, storetest.Items{Title: "Checkout v2", Decisions: storetest.Decisions("Use v2.", "Flag it."),
		Files: []store.FileRefInput{{Path: "src/pay.go"}}})
	p, _ := db.CreatePlan(ctx, sn.ID)
	if _, err := db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanComplete, Markdown: "# Plan (D1, D2)",
		Coverage: store.Coverage{Covered: []string{"D1", "D2"}}}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	envDB := env("BATON_DB", dbPath)
	baton := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		err := run(ctx, args, envDB, strings.NewReader(""), &stdout, &stderr)
		return exitCode(err), stdout.String(), stderr.String()
	}

	out := t.TempDir()
	code, stdout, stderr := baton("envelope", "export", "--handoff", sn.HandoffID, "-o", out)
	if code != 0 || !strings.Contains(stdout, filepath.Join(out, "documents", "handoffs", "handoff_")) {
		t.Fatalf("export --handoff: %d %q %q", code, stdout, stderr)
	}
	handoffFile := strings.TrimSpace(stdout)
	code, stdout, stderr = baton("envelope", "export", "--plan", p.ID, "-o", out)
	lines := strings.Fields(stdout)
	if code != 0 || len(lines) != 2 || !strings.Contains(stdout, filepath.Join(out, "documents", "PLAN_Checkout_v2_")) {
		t.Fatalf("export --plan: %d %q %q, want the envelope and the plan's markdown", code, stdout, stderr)
	}
	planFile := lines[0]
	if !strings.Contains(planFile, "_planner_to_coder_") {
		planFile = lines[1]
	}

	// Without the database, the plan's markdown is found beside it in the export.
	code, stdout, stderr = baton("envelope", "validate", "--db", filepath.Join(t.TempDir(), "none.db"), handoffFile, planFile)
	if code != 0 || stdout != "" {
		t.Fatalf("validate: %d %q %q, want exit 0 and no problems", code, stdout, stderr)
	}

	code, stdout, stderr = baton("envelope", "import", handoffFile)
	if code != 0 || !strings.Contains(stdout, "imported as draft handoff") {
		t.Fatalf("import: %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = baton("envelope", "import", handoffFile)
	if code != 0 || !strings.Contains(stdout, "already imported") {
		t.Fatalf("import again: %d %q, want nothing new", code, stdout)
	}

	data, _ := os.ReadFile(handoffFile)
	broken := filepath.Join(t.TempDir(), "broken.json")
	os.WriteFile(broken, bytes.Replace(bytes.Replace(data, []byte(`"Checkout_v2"`), []byte(`"checkout"`), 1),
		[]byte(`"src/pay.go"`), []byte(`"../pay.go"`), 1), 0o644)
	truncated := filepath.Join(t.TempDir(), "truncated.json")
	os.WriteFile(truncated, data[:len(data)/3], 0o644)
	code, stdout, _ = baton("envelope", "validate", handoffFile, broken, truncated)
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 1 || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], broken+": product_name_slug: ") ||
		!strings.HasPrefix(lines[1], broken+": artifacts.referenced[0]: ") ||
		!strings.HasPrefix(lines[2], truncated+": not valid JSON at line") {
		t.Fatalf("validate broken: exit %d, stdout\n%s\nwant exit 1 and one line per problem", code, stdout)
	}

	// An export zip is validated with its own files as the bundle.
	db, err = store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	b, err := envelope.ExportPlan(ctx, db, p.ID)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	zipData, err := b.Zip()
	if err != nil {
		t.Fatal(err)
	}
	zipFile := filepath.Join(t.TempDir(), b.ZipName())
	os.WriteFile(zipFile, zipData, 0o644)
	if code, stdout, stderr := baton("envelope", "validate", "--db", filepath.Join(t.TempDir(), "none.db"), zipFile); code != 0 {
		t.Fatalf("validate zip: %d %q %q", code, stdout, stderr)
	}
	delete(b.Files, string(b.Envelope.Artifacts.Created[0].Path))
	zipData, _ = b.Zip()
	os.WriteFile(zipFile, zipData, 0o644)
	if code, stdout, _ := baton("envelope", "validate", "--db", filepath.Join(t.TempDir(), "none.db"), zipFile); code != 1 ||
		!strings.Contains(stdout, ": artifacts.created[0].path: documents/PLAN_Checkout_v2_") {
		t.Fatalf("validate zip without its markdown: %d %q, want the artifact named", code, stdout)
	}

	if code, _, _ := baton("envelope", "export", "--handoff", "x", "--plan", "y"); code != 2 {
		t.Fatalf("export with both IDs: exit %d, want 2", code)
	}
	if code, _, _ := baton("envelope", "export", "--handoff", "nope"); code != 1 {
		t.Fatalf("export of an unknown handoff: exit %d, want 1", code)
	}
}
