package envelope_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
	"github.com/baton-dev/baton/store/storetest"
)

func items() storetest.Items {
	return storetest.Items{
		Title: "Checkout v2: payments",
		Decisions: []store.DecisionCreate{
			{Content: "Use the v2 payments API.", Source: store.SourceAI, Confidence: conf(0.8)},
			{Content: "Ship behind the checkout_v2 flag."},
			{Content: "Keep refunds on v1 for now.", Source: store.SourceEdited},
		},
		Files:   []store.FileRefInput{{Path: "src/checkout/pay.go", Context: "the call"}, {Path: "config/flags.yaml", Relevance: store.LevelLow}},
		Risks:   []store.RiskInput{{Description: "Double charges on retry.", Severity: store.LevelHigh, Mitigation: "Idempotency keys."}},
		Summary: "Move checkout to the new payments API behind a flag.",
	}
}

func threadCount(t *testing.T, db *store.DB) int {
	ts, err := db.FindThreads(context.Background(), store.ThreadFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(ts)
}

// contentOf is a brainstorm payload without what differs between two
// Baton databases holding the same handoff: IDs, times, hashes, message IDs.
func contentOf(b *envelope.BrainstormHandoff) *envelope.BrainstormHandoff {
	c := *b
	c.SnapshotID, c.SHA256, c.HandoffID, c.ThreadID = "", "", "", ""
	c.FrozenAt = c.FrozenAt.AddDate(-100, 0, 0).Truncate(1 << 62)
	c.Decisions = append([]envelope.Decision(nil), b.Decisions...)
	for i := range c.Decisions {
		c.Decisions[i].ID, c.Decisions[i].MessageIDs = "", nil
	}
	c.FilesReferenced = append([]envelope.File(nil), b.FilesReferenced...)
	for i := range c.FilesReferenced {
		c.FilesReferenced[i].ID = ""
	}
	c.Risks = append([]envelope.Risk(nil), b.Risks...)
	for i := range c.Risks {
		c.Risks[i].ID = ""
	}
	return &c
}

// TestRoundTrip exports a frozen handoff, imports it, freezes the import
// and exports it again: the payload is the same but for IDs, times and
// hashes. Importing it a second time creates nothing.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	sn := storetest.FrozenSnapshot(t, db, items())

	first, err := envelope.ExportHandoff(ctx, db, sn.HandoffID)
	if err != nil {
		t.Fatal(err)
	}
	if got := first.Envelope.Payload.BrainstormHandoff; got.SnapshotID != sn.ID || got.SHA256 != sn.SHA256 || len(got.Decisions) != 3 {
		t.Fatalf("payload = %+v, want snapshot %s with 3 decisions", got, sn.ID)
	}
	if ok, _ := regexp.MatchString(`^documents/handoffs/handoff_[0-9a-f-]{36}_brainstorm_to_planner_\d{8}T\d{6}Z\.json$`, envelope.FileName(first.Envelope)); !ok {
		t.Fatalf("FileName = %q, want the documented layout", envelope.FileName(first.Envelope))
	}

	threads := threadCount(t, db)
	imp, ps, err := envelope.Import(ctx, db, "", first.JSON, envelope.Options{})
	if err != nil || len(ps) > 0 || !imp.Created {
		t.Fatalf("Import = %+v, %v, %v; want a new handoff", imp, ps, err)
	}
	h, err := db.FindHandoffByID(ctx, imp.HandoffID)
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != store.HandoffDraft || h.ThreadID == sn.Payload.ThreadID {
		t.Fatalf("imported handoff: status %s, thread %s; want a draft in a new thread", h.Status, h.ThreadID)
	}
	if _, err := db.Freeze(ctx, h.ID, 0); err != nil {
		t.Fatal(err)
	}
	second, err := envelope.ExportHandoff(ctx, db, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(contentOf(first.Envelope.Payload.BrainstormHandoff), contentOf(second.Envelope.Payload.BrainstormHandoff),
		cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("payload after the round trip (-first +second):\n%s", diff)
	}
	if first.Envelope.ProductName != second.Envelope.ProductName {
		t.Fatalf("product %q, then %q", first.Envelope.ProductName, second.Envelope.ProductName)
	}

	again, ps, err := envelope.Import(ctx, db, "", first.JSON, envelope.Options{})
	if err != nil || len(ps) > 0 || again.Created || again.HandoffID != imp.HandoffID {
		t.Fatalf("second Import = %+v, %v, %v; want the first import's handoff, not created", again, ps, err)
	}
	// Spacing does not make it another envelope.
	var compact bytes.Buffer
	json.Compact(&compact, first.JSON)
	if again, _, _ := envelope.Import(ctx, db, "", compact.Bytes(), envelope.Options{}); again == nil || again.Created {
		t.Fatalf("compact re-import = %+v, want nothing new", again)
	}
	if got := threadCount(t, db); got != threads+1 {
		t.Fatalf("threads = %d, want %d: one import", got, threads+1)
	}
}

// TestImportInvalid: an envelope with a problem imports nothing and says
// why; other kinds are refused with a message.
func TestImportInvalid(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	sn := storetest.FrozenSnapshot(t, db, items())
	b, err := envelope.ExportHandoff(ctx, db, sn.HandoffID)
	if err != nil {
		t.Fatal(err)
	}
	before := threadCount(t, db)
	tampered := bytes.Replace(b.JSON, []byte("Use the v2 payments API."), []byte("Use the v1 payments API."), 1)
	imp, ps, err := envelope.Import(ctx, db, "", tampered, envelope.Options{})
	if imp != nil || err != nil || !strings.Contains(ps.Error(), "payload.sha256: does not match the snapshot's content") {
		t.Fatalf("Import(tampered) = %v, %v, %v; want the sha256 refused", imp, ps, err)
	}
	for name, data := range map[string][]byte{
		"truncated": b.JSON[:len(b.JSON)/2],
		"10 MB":     bytes.Repeat([]byte(" "), 10<<20),
	} {
		if imp, ps, _ := envelope.Import(ctx, db, "", data, envelope.Options{}); imp != nil || len(ps) == 0 {
			t.Fatalf("Import(%s) = %v, %v; want problems", name, imp, ps)
		}
	}
	plan, _ := envelope.FromPlan(fixturePlan(store.PlanComplete), fixtureSession())
	data, _ := envelope.Encode(plan)
	opts := envelope.Options{Bundle: func(string) bool { return true }}
	if _, _, err := envelope.Import(ctx, db, "", data, opts); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "not plan ones") {
		t.Fatalf("Import(plan) err = %v, want EINVALID saying plans are not imported", err)
	}
	data, _ = envelope.Encode(fixtureAgentHandoff())
	if _, _, err := envelope.Import(ctx, db, "", data, opts); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "which this workspace does not have") {
		t.Fatalf("Import(agent_handoff naming unknown IDs) err = %v, want EINVALID", err)
	}
	if got := threadCount(t, db); got != before {
		t.Fatalf("threads = %d, want %d: nothing imported", got, before)
	}
}

// TestConsistencyWithStore: an envelope naming a snapshot Baton has must
// agree with it.
func TestConsistencyWithStore(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	sn := storetest.FrozenSnapshot(t, db, items())
	opts := envelope.StoreOptions(ctx, db)

	b, _ := envelope.ExportHandoff(ctx, db, sn.HandoffID)
	e := b.Envelope
	bh := e.Payload.BrainstormHandoff
	bh.Decisions = bh.Decisions[:2]
	bh.SHA256 = bh.ComputeSHA256() // consistent in itself, not with the snapshot
	ps := envelope.Validate(e, opts)
	for _, want := range []string{"payload.sha256: is not the sha256 of snapshot", "payload.decisions: lists 2 decisions; snapshot"} {
		if !strings.Contains(ps.Error(), want) {
			t.Errorf("problems\n%s\nwant %q", ps, want)
		}
	}

	p := fixturePlan(store.PlanComplete)
	p.SnapshotID = sn.ID
	p.Coverage = store.Coverage{Covered: []string{"D1", "D7"}}
	pe, _ := envelope.FromPlan(p, fixtureSession())
	ps = envelope.Validate(pe, opts)
	for _, want := range []string{"payload.coverage.total: is 2; snapshot " + sn.ID + " has 3 decisions", "D7 is not a decision of snapshot"} {
		if !strings.Contains(ps.Error(), want) {
			t.Errorf("problems\n%s\nwant %q", ps, want)
		}
	}
}

func unzip(t *testing.T, data []byte) map[string]string {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(b)
	}
	return out
}

// TestExportPlan: a finished plan exports as a plan envelope with its
// markdown beside it in the zip.
func TestExportPlan(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	sn := storetest.FrozenSnapshot(t, db, items())
	p, err := db.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envelope.ExportPlan(ctx, db, p.ID); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("ExportPlan(running) err = %v, want ECONFLICT", err)
	}
	md := "# Plan\n\n1. Call v2 (D1).\n2. Flag it (D2).\n"
	if _, err := db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanComplete, Markdown: md,
		Coverage: store.Coverage{Covered: []string{"D1", "D2"}, Uncovered: []string{"D3"}}}); err != nil {
		t.Fatal(err)
	}
	b, err := envelope.ExportPlan(ctx, db, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	e := b.Envelope
	if e.Payload.Plan == nil || e.Payload.Plan.Markdown != md || e.Payload.Plan.Coverage.Total != 3 || e.WorkflowState.ProgressPercentage != 100 {
		t.Fatalf("payload = %+v, state %+v; want the plan, 3 decisions, 100%%", e.Payload.Plan, e.WorkflowState)
	}
	want := "documents/PLAN_Checkout_v2_payments_" + e.Timestamp.Format("2006-01-02") + ".md"
	if len(e.Artifacts.Created) != 1 || string(e.Artifacts.Created[0].Path) != want {
		t.Fatalf("artifacts = %+v, want %s", e.Artifacts.Created, want)
	}
	data, err := b.Zip()
	if err != nil {
		t.Fatal(err)
	}
	files := unzip(t, data)
	if files[want] != md || files[envelope.FileName(e)] != string(b.JSON) || len(files) != 2 {
		t.Fatalf("zip holds %d files (%v), want the envelope and %s", len(files), keys(files), want)
	}
	// Alone, the envelope's artifact is one Baton keeps.
	if _, ps := envelope.Check(b.JSON, envelope.StoreOptions(ctx, db)); len(ps) > 0 {
		t.Fatalf("Check without the bundle: %s", ps)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestExportFailedPlan: a failed or cancelled plan exports as an error
// envelope holding what was written so far.
func TestExportFailedPlan(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	sn := storetest.FrozenSnapshot(t, db, items())
	for _, tt := range []struct {
		status store.PlanStatus
		code   envelope.ErrorCode
	}{{store.PlanFailed, envelope.GenerationFailed}, {store.PlanCancelled, envelope.UserCancelled}} {
		t.Run(string(tt.status), func(t *testing.T) {
			p, err := db.CreatePlan(ctx, sn.ID)
			if err != nil {
				t.Fatal(err)
			}
			partial := "> **Unfinished plan.**\n\n# Plan\n\n1. Call v2 (D1)."
			if _, err := db.FinishPlan(ctx, p.ID, store.PlanFinish{Status: tt.status, Markdown: partial, Error: "The model timed out."}); err != nil {
				t.Fatal(err)
			}
			b, err := envelope.ExportPlan(ctx, db, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			f := b.Envelope.Payload.Error
			if f == nil || f.Code != tt.code || f.PartialOutput != partial || f.PlanID != p.ID || f.SnapshotID != sn.ID || len(f.RecoverySuggestions) == 0 {
				t.Fatalf("payload = %+v, want %s with the partial plan", f, tt.code)
			}
			if tt.status == store.PlanFailed && f.Message != "The model timed out." {
				t.Fatalf("Message = %q, want the plan's error", f.Message)
			}
			if len(b.Envelope.Artifacts.Created) != 0 || b.Envelope.TargetAgent.AgentType != envelope.AgentPlanner {
				t.Fatalf("envelope = %+v, want no artifacts and the planner to run again", b.Envelope)
			}
		})
	}
}

// TestExportNotFrozen: a handoff never frozen has nothing to export.
func TestExportNotFrozen(t *testing.T) {
	db := storetest.MustOpen(t)
	h := storetest.NewHandoff(t, db, items())
	if _, err := envelope.ExportHandoff(context.Background(), db, h.ID); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("err = %v, want ECONFLICT", err)
	}
	if _, err := envelope.ExportHandoff(context.Background(), db, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

// TestExportRefusesLongSummary: a summary the contract cannot carry
// stops the export with a message naming it.
func TestExportRefusesLongSummary(t *testing.T) {
	db := storetest.MustOpen(t)
	in := items()
	in.Summary = strings.Repeat("long ", 120)
	sn := storetest.FrozenSnapshot(t, db, in)
	_, err := envelope.ExportHandoff(context.Background(), db, sn.HandoffID)
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(store.ErrorMessage(err), "payload.summary: is 599 characters long; keep it to 500") {
		t.Fatalf("err = %v, want EINVALID naming payload.summary", err)
	}
}

// TestNewerMinorKeepsUnknownFields: a 1.3 envelope is read, and written
// again with the fields 1.0 does not know, wherever they were.
func TestNewerMinorKeepsUnknownFields(t *testing.T) {
	data := []byte(`{"handoff_version":"1.3","timestamp":"2026-11-23T10:00:00Z","session_id":"` + sessionID + `",
	 "product_name":"X","product_name_slug":"X","priority":"high",
	 "source_agent":{"agent_type":"planner","phase_completed":"plan","execution_time_ms":5,"model":"m"},
	 "target_agent":{"agent_type":"coder","phase_to_execute":"implement"},
	 "artifacts":{"created":[],"referenced":["a.go"],"signed":true},
	 "payload":{"type":"error","code":"USER_CANCELLED","message":"Cancelled.","partial_output":"","recovery_suggestions":[],"retry_after_s":30},
	 "workflow_state":{"is_ai_ml_product":false,"execution_mode":"streamlined","phases_completed":[],"phases_remaining":["plan"],"progress_percentage":0,"eta":{"days":2}}}`)
	e, ps := envelope.Check(data, envelope.Options{})
	if len(ps) > 0 {
		t.Fatalf("problems: %s", ps)
	}
	out, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	json.Unmarshal(out, &got)
	json.Unmarshal(data, &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("written again (-read +written):\n%s", diff)
	}
}

// TestUnknownMajor: a 2.x or 0.x envelope is refused with what to do.
func TestUnknownMajor(t *testing.T) {
	for _, v := range []string{"2.0", "0.9", "10.1"} {
		_, ps := envelope.Decode([]byte(`{"handoff_version":"` + v + `","future":{}}`))
		if len(ps) != 1 || ps[0].Path != "handoff_version" || !strings.Contains(ps[0].Message, "this Baton reads handoff envelopes 1.x") {
			t.Fatalf("Decode(%s) = %v, want the version refused", v, ps)
		}
	}
}

// TestAgentHandoffResults: results must be a JSON array.
func TestAgentHandoffResults(t *testing.T) {
	_, err := envelope.FromAgentHandoff(envelope.AgentHandoffInput{ID: "h", SourceAgent: "a", Summary: "s", Results: json.RawMessage(`{"a":1}`)})
	if store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("err = %v, want EINVALID", err)
	}
	e, err := envelope.FromAgentHandoff(envelope.AgentHandoffInput{ID: "h", SourceAgent: "a", Summary: "s", SessionID: sessionID, ProductName: "P", CreatedAt: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	if ps := envelope.Validate(e, envelope.Options{}); len(ps) > 0 {
		t.Fatalf("problems: %s", ps)
	}
	if got := string(mustJSON(t, e.Payload.AgentHandoff.Results)); got != "[]" {
		t.Fatalf("results = %s, want []", got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSlug derives file-safe slugs.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Checkout v2: payments": "Checkout_v2_payments",
		"  --Café  au lait!! ":  "Café_au_lait",
		"???":                   "untitled",
		"a/b\\c":                "a_b_c",
	} {
		if got := envelope.Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
