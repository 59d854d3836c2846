package envelope_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
)

// The corpus under testdata is written by this file's table, with
// go test ./store/envelope -run TestWriteCorpus -update-corpus, and read by
// TestCorpus (Go's rules and santhosh-tekuri/jsonschema) and TestCorpusAjv
// (the independent Ajv). testdata/valid holds envelopes every validator
// accepts; testdata/invalid/schema those the schema refuses too;
// testdata/invalid/rules those only Go's rules refuse (consistency, which
// JSON Schema cannot express). Each invalid file has a .want file: the
// problem Go must report.
var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata from the table in corpus_test.go")

var (
	fixedTime   = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	sessionID   = "0193a1b2-0000-7000-8000-0000000000aa"
	snapshotID  = "0193a1b2-0000-7000-8000-000000000001"
	productName = "Checkout v2: payments"
)

func conf(f float64) *float64 { return &f }

// fixtureSnapshot is a frozen snapshot with three decisions, two files
// and a risk, its sha256 computed as the store computes it.
func fixtureSnapshot() *store.Snapshot {
	p := store.SnapshotPayload{HandoffID: "0193a1b2-0000-7000-8000-0000000000bb", ThreadID: sessionID,
		Summary: "Move checkout to the new payments API behind a flag.", FrozenAt: fixedTime,
		Decisions: []store.SnapshotDecision{
			{Label: "D1", ID: "0193a1b2-0000-7000-8000-0000000000d1", Content: "Use the v2 payments API.", Source: store.SourceAI, Confidence: conf(0.9), MessageIDs: []string{"m1"}},
			{Label: "D2", ID: "0193a1b2-0000-7000-8000-0000000000d2", Content: "Ship behind the checkout_v2 flag.", Source: store.SourcePinned, MessageIDs: []string{}},
			{Label: "D3", ID: "0193a1b2-0000-7000-8000-0000000000d3", Content: "Keep refunds on v1 <for now> & revisit.", Source: store.SourceEdited, Confidence: conf(0.5), MessageIDs: []string{"m2", "m3"}},
		},
		FilesReferenced: []store.SnapshotFile{
			{ID: "f1", Path: "src/checkout/pay.go", Relevance: store.LevelHigh, Context: "the payment call"},
			{ID: "f2", Path: "config/flags.yaml", Relevance: store.LevelLow, Context: ""},
		},
		Risks: []store.SnapshotRisk{{ID: "r1", Description: "Double charges on retry.", Severity: store.LevelHigh, Mitigation: "Idempotency keys."}},
	}
	b, _ := json.Marshal(&p)
	sum := sha256.Sum256(b)
	return &store.Snapshot{ID: snapshotID, HandoffID: p.HandoffID, Payload: p, JSON: b, SHA256: hex.EncodeToString(sum[:]), CreatedAt: fixedTime}
}

func fixtureSession() envelope.Session {
	return envelope.Session{ID: sessionID, ProductName: productName, StartedAt: fixedTime.Add(-42 * time.Minute)}
}

func fixturePlan(status store.PlanStatus) *store.Plan {
	return &store.Plan{ID: "0193a1b2-0000-7000-8000-0000000000e1", HandoffID: "0193a1b2-0000-7000-8000-0000000000bb",
		SnapshotID: snapshotID, Version: 1, Status: status,
		Markdown: "# Plan\n\n1. Call the v2 API (D1).\n2. Add the flag (D2).\n", Error: "The model timed out.",
		Coverage:  store.Coverage{Covered: []string{"D1", "D2"}, Uncovered: []string{"D3"}},
		CreatedAt: fixedTime.Add(time.Minute), FinishedAt: fixedTime.Add(3 * time.Minute)}
}

func fixtureAgentHandoff() *envelope.Envelope {
	e, err := envelope.FromAgentHandoff(envelope.AgentHandoffInput{
		ID: "0193a1b2-0000-7000-8000-0000000000c1", SourceAgent: "claude-code", TargetAgent: "codex",
		Scope: "src/checkout/", Summary: "Payment call moved to v2; the retry path still needs idempotency keys.",
		Results:     json.RawMessage(`[{"file":"src/checkout/pay.go","status":"done"},"tests pass"]`),
		DecisionIDs: []string{"dr1", "dr2"}, WarningIDs: []string{"w1"}, FindingIDs: []string{},
		Summaries: []string{"Decision: Use the v2 payments API.", "Decision: Ship behind a flag.", "Warning: Retries double charge."},
		CreatedAt: fixedTime, SessionID: sessionID, ProductName: productName,
	})
	if err != nil {
		panic(err)
	}
	return e
}

// bases are the valid envelopes the corpus starts from, by name.
func bases() map[string]*envelope.Envelope {
	plan, _ := envelope.FromPlan(fixturePlan(store.PlanComplete), fixtureSession())
	failed, _ := envelope.FromPlan(fixturePlan(store.PlanFailed), fixtureSession())
	cancelled, _ := envelope.FromPlan(fixturePlan(store.PlanCancelled), fixtureSession())
	return map[string]*envelope.Envelope{
		"brainstorm_handoff": envelope.FromSnapshot(fixtureSnapshot(), fixtureSession()),
		"plan":               plan,
		"error_failed":       failed,
		"error_cancelled":    cancelled,
		"agent_handoff":      fixtureAgentHandoff(),
	}
}

type corpusCase struct {
	name   string
	base   string
	schema bool // the schema refuses it too
	edit   func(m map[string]any)
	want   string // the problem Go reports
}

// invalidCases break each rule once.
var invalidCases = []corpusCase{
	// Required, non-nullable, types.
	{"missing_session_id", "brainstorm_handoff", true, del("session_id"), "session_id: required, missing"},
	{"null_product_name", "brainstorm_handoff", true, set("product_name", nil), "product_name: required, and may not be null"},
	{"missing_payload_field", "plan", true, del("payload.markdown"), "payload.markdown: required, missing"},
	{"missing_decision_content", "brainstorm_handoff", true, del("payload.decisions[1].content"), "payload.decisions[1].content: required, missing"},
	{"wrong_type_execution_time", "plan", true, set("source_agent.execution_time_ms", "120000"), "source_agent.execution_time_ms: is a string, want an integer"},
	{"wrong_type_decisions", "brainstorm_handoff", true, set("payload.decisions", map[string]any{"D1": "x"}), "payload.decisions: is an object, want an array"},
	{"wrong_type_progress", "plan", true, set("workflow_state.progress_percentage", "100%"), "workflow_state.progress_percentage: is a string, want a number"},
	{"wrong_type_is_ai_ml", "plan", true, set("workflow_state.is_ai_ml_product", "no"), "workflow_state.is_ai_ml_product: is a string, want a boolean"},
	{"wrong_type_results", "agent_handoff", true, set("payload.results", "done"), "payload.results: is a string, want an array"},
	{"wrong_type_timestamp", "plan", true, set("timestamp", 1763892000), "timestamp: is a number, want an ISO-8601 time string"},
	{"bad_timestamp", "plan", true, set("timestamp", "yesterday"), "timestamp: is a string, want an ISO-8601 time string"},
	{"payload_not_object", "plan", true, set("payload", []any{"plan"}), "payload: is an array, want an object"},
	// Versions.
	{"major_version_2", "plan", true, set("handoff_version", "2.0"), "handoff_version: version 2.0 is not supported: this Baton reads handoff envelopes 1.x"},
	{"version_not_a_version", "plan", true, set("handoff_version", "one"), `handoff_version: "one" is not a version`},
	// Enums.
	{"bad_source_agent_type", "plan", true, set("source_agent.agent_type", "designer"), `source_agent.agent_type: "designer" is not one of brainstorm, planner`},
	{"bad_target_agent_type", "plan", true, set("target_agent.agent_type", "Coder"), `target_agent.agent_type: "Coder" is not one of`},
	{"bad_execution_mode", "plan", true, set("workflow_state.execution_mode", "auto"), `workflow_state.execution_mode: "auto" is not one of full-approval, streamlined`},
	{"bad_artifact_type", "plan", true, set("artifacts.created[0].type", "pdf"), `artifacts.created[0].type: "pdf" is not one of markdown, html, json`},
	{"bad_error_code", "error_failed", true, set("payload.code", "TIMEOUT"), `payload.code: "TIMEOUT" is not one of RESEARCH_FAILED, GENERATION_FAILED, VALIDATION_FAILED, USER_CANCELLED`},
	{"bad_decision_source", "brainstorm_handoff", true, set("payload.decisions[0].source", "ai"), `payload.decisions[0].source: "ai" is not one of ai-extracted, user-pinned, user-edited`},
	{"bad_file_relevance", "brainstorm_handoff", true, set("payload.files_referenced[1].relevance", "critical"), `payload.files_referenced[1].relevance: "critical" is not one of high, medium, low`},
	{"bad_risk_severity", "brainstorm_handoff", true, set("payload.risks[0].severity", "HIGH"), `payload.risks[0].severity: "HIGH" is not one of high, medium, low`},
	{"baton_role_foreign_payload", "plan", true, set("payload", map[string]any{"type": "prd_document", "sections": []any{}}), "payload.type: a planner envelope carries one of Baton's payloads"},
	// Formats and ranges.
	{"session_id_not_uuid", "plan", true, set("session_id", "session-1"), `session_id: "session-1" is not a UUID`},
	{"session_id_urn", "plan", true, set("session_id", "urn:uuid:"+sessionID), `session_id: "urn:uuid:` + sessionID + `" is not a UUID`},
	{"null_optional_field", "brainstorm_handoff", true, set("payload.decisions[0].confidence", nil), "payload.decisions[0].confidence: may not be null: leave it out instead"},
	{"sha256_not_hex", "brainstorm_handoff", true, set("payload.sha256", "XYZ"), `payload.sha256: "XYZ" is not a sha256`},
	{"progress_over_100", "plan", true, set("workflow_state.progress_percentage", 120), "workflow_state.progress_percentage: is 120; it goes from 0 to 100"},
	{"negative_execution_time", "plan", true, set("source_agent.execution_time_ms", -5), "source_agent.execution_time_ms: is -5; it may not be negative"},
	{"confidence_over_1", "brainstorm_handoff", true, set("payload.decisions[0].confidence", 1.5), "payload.decisions[0].confidence: is 1.5; it goes from 0 to 1"},
	{"plan_version_0", "plan", true, set("payload.version", 0), "payload.version: is 0; plans are numbered from 1"},
	{"bad_label", "brainstorm_handoff", true, set("payload.decisions[0].label", "X1"), `payload.decisions[0].label: is "X1"`},
	{"empty_decision_content", "brainstorm_handoff", true, set("payload.decisions[2].content", ""), "payload.decisions[2].content: required, and may not be empty"},
	{"empty_phase", "plan", true, set("target_agent.phase_to_execute", ""), "target_agent.phase_to_execute: required, and may not be empty"},
	{"bad_coverage_label", "plan", true, set("payload.coverage.uncovered[0]", "3"), `payload.coverage.uncovered[0]: "3" is not a decision label`},
	{"summary_bad_prefix", "agent_handoff", true, set("payload.context_snapshot.summaries[2]", "Note: retries double charge."), `payload.context_snapshot.summaries[2]: starts with "Decision: ", "Warning: " or "Finding: "`},
	{"duplicate_context_ids", "agent_handoff", true, set("payload.context_snapshot.decision_ids[1]", "dr1"), "payload.context_snapshot.decision_ids[1]: repeats payload.context_snapshot.decision_ids[0]"},
	{"duplicate_coverage_label", "plan", true, set("payload.coverage.covered[1]", "D1"), "payload.coverage.covered[1]: D1 is already listed in payload.coverage.covered"},
	// Size limits of summary-like fields.
	{"summary_too_long", "brainstorm_handoff", true, set("payload.summary", strings.Repeat("é", 501)), "payload.summary: is 501 characters long; keep it to 500"},
	{"agent_summary_too_long", "agent_handoff", true, set("payload.summary", strings.Repeat("a", 501)), "payload.summary: is 501 characters long; keep it to 500"},
	{"context_summary_too_long", "agent_handoff", true, set("payload.context_snapshot.summaries[0]", "Decision: "+strings.Repeat("x", 491)), "payload.context_snapshot.summaries[0]: is 501 characters long; keep it to 500"},
	{"artifact_description_too_long", "plan", true, set("artifacts.created[0].description", strings.Repeat("d", 501)), "artifacts.created[0].description: is 501 characters long; keep it to 500"},
	{"error_message_too_long", "error_failed", true, set("payload.message", strings.Repeat("m", 501)), "payload.message: is 501 characters long; keep it to 500"},
	{"recovery_suggestion_too_long", "error_failed", true, set("payload.recovery_suggestions[0]", strings.Repeat("r", 501)), "payload.recovery_suggestions[0]: is 501 characters long; keep it to 500"},
	{"too_many_summaries", "agent_handoff", true, set("payload.context_snapshot.summaries", repeat("Finding: x", 12)), "payload.context_snapshot.summaries: has 12 finding summaries; at most 3"},
	// Safe paths.
	{"traversal_artifact_path", "plan", true, set("artifacts.created[0].path", "../../etc/passwd"), `artifacts.created[0].path: "../../etc/passwd" is not a safe relative path`},
	{"absolute_artifact_path", "plan", true, set("artifacts.created[0].path", "/etc/passwd"), `artifacts.created[0].path: "/etc/passwd" is not a safe relative path`},
	{"traversal_inside_path", "plan", true, set("artifacts.created[0].path", "documents/../../../root/.ssh/id_rsa"), `artifacts.created[0].path: "documents/../../../root/.ssh/id_rsa" is not a safe relative path`},
	{"windows_artifact_path", "plan", true, set("artifacts.created[0].path", `C:\Windows\win.ini`), `artifacts.created[0].path: "C:\\Windows\\win.ini" is not a safe relative path`},
	{"traversal_referenced_path", "brainstorm_handoff", true, set("artifacts.referenced[0]", "src/../../secret"), `artifacts.referenced[0]: "src/../../secret" is not a safe relative path`},
	{"home_file_path", "brainstorm_handoff", true, set("payload.files_referenced[0].path", "~/.aws/credentials"), `payload.files_referenced[0].path: "~/.aws/credentials" is not a safe relative path`},
	{"dot_slash_path", "brainstorm_handoff", true, set("artifacts.referenced[1]", "./config/flags.yaml"), `artifacts.referenced[1]: write "./config/flags.yaml" as "config/flags.yaml"`},

	// Rules beyond JSON Schema: consistency and existence.
	{"slug_mismatch", "plan", false, set("product_name_slug", "checkout"), `product_name_slug: is "checkout", but product_name "Checkout v2: payments" gives "Checkout_v2_payments"`},
	{"sha256_mismatch", "brainstorm_handoff", false, set("payload.decisions[1].content", "Ship without a flag."), "payload.sha256: does not match the snapshot's content"},
	{"labels_out_of_order", "brainstorm_handoff", false, set("payload.decisions[1].label", "D3"), `payload.decisions[1].label: is "D3"; decisions are labelled in order, so this one is D2`},
	{"duplicate_decision_ids", "brainstorm_handoff", false, set("payload.decisions[2].id", "0193a1b2-0000-7000-8000-0000000000d1"), "payload.decisions[*].id[2]: repeats payload.decisions[*].id[0]"},
	{"coverage_total_mismatch", "plan", false, set("payload.coverage.total", 4), "payload.coverage.total: is 4, but covered and uncovered list 3 labels"},
	{"coverage_overlap", "plan", false, set("payload.coverage.uncovered[0]", "D2"), "payload.coverage.uncovered[0]: D2 is already listed in payload.coverage.covered"},
	{"summaries_without_ids", "agent_handoff", false, set("payload.context_snapshot.warning_ids", []any{}), "payload.context_snapshot.summaries: has 1 warning summaries for 0 warning IDs"},
	{"six_decision_summaries", "agent_handoff", false, func(m map[string]any) {
		set("payload.context_snapshot.decision_ids", []any{"a", "b", "c", "d", "e", "f"})(m)
		set("payload.context_snapshot.summaries", repeat("Decision: x", 6))(m)
	}, "payload.context_snapshot.summaries: has 6 decision summaries; at most 5"},
	{"missing_artifact", "plan", false, set("artifacts.created[0].path", "documents/PLAN_Other_2026-11-23.md"), "artifacts.created[0].path: documents/PLAN_Other_2026-11-23.md is not in the bundle, and Baton keeps no such artifact"},
	{"bad_scope", "agent_handoff", false, set("payload.scope", "../other-repo/"), `payload.scope: "../other-repo/" is neither project nor a safe relative path prefix`},
}

func repeat(s string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// validExtras are valid envelopes beyond the bases: another team's
// payload passed through, and a newer minor version with fields 1.0 does
// not know.
var validExtras = []corpusCase{
	{"passthrough_prd", "brainstorm_handoff", false, func(m map[string]any) {
		set("source_agent.agent_type", "prd")(m)
		set("source_agent.phase_completed", "prd")(m)
		set("target_agent.agent_type", "prototype")(m)
		set("target_agent.phase_to_execute", "prototype")(m)
		set("payload", map[string]any{"type": "prd_document", "sections": []any{map[string]any{"title": "Goals", "body": "…"}}, "open_questions": 2})(m)
		set("workflow_state.is_ai_ml_product", true)(m)
		set("workflow_state.execution_mode", "streamlined")(m)
	}, ""},
	{"passthrough_untyped", "brainstorm_handoff", false, func(m map[string]any) {
		set("source_agent.agent_type", "market-research")(m)
		set("target_agent.agent_type", "orchestrator")(m)
		set("payload", map[string]any{"competitors": []any{"A", "B"}})(m)
	}, ""},
	{"newer_minor_1_3", "plan", false, func(m map[string]any) {
		set("handoff_version", "1.3")(m)
		set("priority", "high")(m)
		set("source_agent.model", "claude")(m)
		set("payload.estimate_days", 4)(m)
		set("payload.coverage.note", map[string]any{"by": "planner"})(m)
		set("workflow_state.blocked", false)(m)
	}, ""},
}

func toMap(t testing.TB, e *envelope.Envelope) map[string]any {
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var stepRE = regexp.MustCompile(`^([^\[]*)((?:\[\d+\])*)$`)

// walk finds the container and key (string or index) path names in m.
func walk(m any, path string) (any, any) {
	parts := strings.Split(path, ".")
	var cur = m
	var keys []any
	for _, p := range parts {
		sm := stepRE.FindStringSubmatch(p)
		keys = append(keys, sm[1])
		for _, ix := range regexp.MustCompile(`\d+`).FindAllString(sm[2], -1) {
			n, _ := strconv.Atoi(ix)
			keys = append(keys, n)
		}
	}
	for _, k := range keys[:len(keys)-1] {
		switch k := k.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
	return cur, keys[len(keys)-1]
}

func set(path string, v any) func(map[string]any) {
	return func(m map[string]any) {
		c, k := walk(m, path)
		switch k := k.(type) {
		case string:
			c.(map[string]any)[k] = v
		case int:
			c.([]any)[k] = v
		}
	}
}

func del(path string) func(map[string]any) {
	return func(m map[string]any) {
		c, k := walk(m, path)
		delete(c.(map[string]any), k.(string))
	}
}

func writeJSON(t *testing.T, path string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWriteCorpus rewrites testdata from the table when -update-corpus is set.
func TestWriteCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite testdata")
	}
	os.RemoveAll("testdata")
	bs := bases()
	for name, e := range bs {
		writeJSON(t, filepath.Join("testdata", "valid", name+".json"), e)
		for _, a := range e.Artifacts.Created {
			p := filepath.Join("testdata", "valid", filepath.FromSlash(string(a.Path)))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(e.Payload.Plan.Markdown), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range validExtras {
		m := toMap(t, bs[c.base])
		c.edit(m)
		writeJSON(t, filepath.Join("testdata", "valid", c.name+".json"), m)
	}
	for _, c := range invalidCases {
		m := toMap(t, bs[c.base])
		c.edit(m)
		dir := filepath.Join("testdata", "invalid", "rules")
		if c.schema {
			dir = filepath.Join("testdata", "invalid", "schema")
		}
		writeJSON(t, filepath.Join(dir, c.name+".json"), m)
		os.WriteFile(filepath.Join(dir, c.name+".want"), []byte(c.want+"\n"), 0o644)
	}
	// Truncated JSON.
	b, _ := json.MarshalIndent(bs["brainstorm_handoff"], "", "  ")
	dir := filepath.Join("testdata", "invalid", "schema")
	os.WriteFile(filepath.Join(dir, "truncated.json"), b[:len(b)/2], 0o644)
	os.WriteFile(filepath.Join(dir, "truncated.want"), []byte("not valid JSON at line\n"), 0o644)
}

// corpusOptions finds artifacts in testdata/valid, the corpus's bundle.
var corpusOptions = envelope.Options{Bundle: func(p string) bool {
	_, err := os.Stat(filepath.Join("testdata", "valid", filepath.FromSlash(p)))
	return err == nil
}}

type corpusFile struct {
	path   string
	valid  bool
	schema bool   // the schema's verdict: valid
	want   string // for an invalid file, the problem Go reports
}

func readCorpus(t *testing.T) []corpusFile {
	var out []corpusFile
	glob := func(pattern string) []string {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			t.Fatalf("no corpus files match %s: run go test -run TestWriteCorpus -update-corpus", pattern)
		}
		return m
	}
	for _, p := range glob("testdata/valid/*.json") {
		out = append(out, corpusFile{path: p, valid: true, schema: true})
	}
	for _, dir := range []string{"schema", "rules"} {
		for _, p := range glob("testdata/invalid/" + dir + "/*.json") {
			want, err := os.ReadFile(strings.TrimSuffix(p, ".json") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, corpusFile{path: p, schema: dir == "rules", want: strings.TrimSpace(string(want))})
		}
	}
	return out
}

func compileSchema(t testing.TB) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(envelope.Schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(envelope.SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(envelope.SchemaID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func schemaValid(s *jsonschema.Schema, data []byte) (bool, error) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return false, err
	}
	err = s.Validate(inst)
	return err == nil, err
}

// TestCorpus checks each corpus file against Go's rules and against the
// schema with santhosh-tekuri/jsonschema: valid files pass both; invalid
// ones fail Go's rules with the problem in their .want, and the schema
// refuses those under invalid/schema and accepts those under invalid/rules.
func TestCorpus(t *testing.T) {
	sch := compileSchema(t)
	for _, f := range readCorpus(t) {
		t.Run(strings.TrimPrefix(f.path, "testdata/"), func(t *testing.T) {
			data, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			_, ps := envelope.Check(data, corpusOptions)
			if f.valid && len(ps) > 0 {
				t.Fatalf("Go: problems\n%s\nwant none", ps)
			}
			if !f.valid && !strings.Contains(ps.Error(), f.want) {
				t.Fatalf("Go: problems\n%s\nwant one containing %q", ps, f.want)
			}
			ok, err := schemaValid(sch, data)
			if ok != f.schema {
				t.Fatalf("schema: valid=%v (%v), want %v", ok, err, f.schema)
			}
		})
	}
}

// TestTenMegabytes: an envelope over the size limit is refused by size,
// before anything else is read; the schema, which cannot count bytes,
// accepts it.
func TestTenMegabytes(t *testing.T) {
	m := toMap(t, bases()["plan"])
	set("payload.markdown", strings.Repeat("Lorem ipsum dolor sit amet (D1).\n", 10<<20/33+1))(m)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 10<<20 {
		t.Fatalf("the envelope is %d bytes, want 10 MB", len(data))
	}
	e, ps := envelope.Check(data, corpusOptions)
	if e != nil || len(ps) != 1 || !strings.Contains(ps[0].Message, "the limit is 4.0 MB") {
		t.Fatalf("Check = %v, %v; want the size refused", e, ps)
	}
	if ok, err := schemaValid(compileSchema(t), data); !ok {
		t.Fatalf("schema refused it: %v", err)
	}
}
