package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
	"github.com/baton-dev/baton/store/storetest"
)

func envelopeItems() storetest.Items {
	return storetest.Items{Title: "Checkout v2", Decisions: storetest.Decisions("Use the v2 API.", "Ship behind a flag."),
		Files: []store.FileRefInput{{Path: "src/pay.go"}}, Summary: "Move checkout to v2."}
}

func TestSchemaServed(t *testing.T) {
	a := newApp(t, newFakeModel())
	res, body := a.get("/schemas/handoff-envelope-1.0.json")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/schema+json" {
		t.Fatalf("status %d, type %q; want 200 application/schema+json", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if body != string(envelope.Schema) || !strings.Contains(body, `"$id": "https://baton.dev/schemas/handoff-envelope-1.0.json"`) {
		t.Fatalf("body is not the committed schema with its $id")
	}
}

func TestAPIHandoffEnvelopeAndImport(t *testing.T) {
	a := newApp(t, newFakeModel())
	sn := storetest.FrozenSnapshot(t, a.DB, envelopeItems())

	res, body := a.get("/api/v1/handoffs/" + sn.HandoffID + "/envelope")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	_, params, err := mime.ParseMediaType(res.Header.Get("Content-Disposition"))
	if err != nil || !strings.HasPrefix(params["filename"], "handoff_") || !strings.Contains(params["filename"], "_brainstorm_to_planner_") {
		t.Fatalf("Content-Disposition = %q, want the envelope's file name", res.Header.Get("Content-Disposition"))
	}
	e, ps := envelope.Check([]byte(body), envelope.Options{})
	if len(ps) > 0 || e.Payload.BrainstormHandoff.SnapshotID != sn.ID {
		t.Fatalf("envelope problems %v, want the snapshot's envelope", ps)
	}

	res, out := a.postJSON("/api/v1/envelopes", body)
	imp := decodeJSON[struct {
		Kind, HandoffID, URL string
		Created              bool
	}](t, out)
	if res.StatusCode != http.StatusCreated || !imp.Created || imp.Kind != "brainstorm_handoff" || imp.URL != "/h/"+imp.HandoffID {
		t.Fatalf("import: %d %s, want 201 with the new handoff", res.StatusCode, out)
	}
	h, err := a.DB.FindHandoffByID(context.Background(), imp.HandoffID)
	if err != nil || h.Status != store.HandoffDraft || len(h.Decisions) != 2 || len(h.Files) != 1 || h.Summary != "Move checkout to v2." {
		t.Fatalf("imported handoff = %+v, %v; want a draft with the envelope's items", h, err)
	}
	if res, out := a.postJSON("/api/v1/envelopes", body); res.StatusCode != http.StatusOK || !strings.Contains(out, `"created":false`) || !strings.Contains(out, imp.HandoffID) {
		t.Fatalf("second import: %d %s, want 200 with the same handoff", res.StatusCode, out)
	}
}

func TestAPIEnvelopeImportRefused(t *testing.T) {
	a := newApp(t, newFakeModel())
	sn := storetest.FrozenSnapshot(t, a.DB, envelopeItems())
	_, body := a.get("/api/v1/handoffs/" + sn.HandoffID + "/envelope")
	before, _ := a.DB.FindThreads(context.Background(), store.ThreadFilter{})

	for _, tt := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"traversal", strings.Replace(body, `"src/pay.go"`, `"../../etc/passwd"`, 2), 422, `"path":"artifacts.referenced[0]"`},
		{"truncated", body[:len(body)/2], 422, "not valid JSON at line"},
		{"unknown major", strings.Replace(body, `"handoff_version": "1.0"`, `"handoff_version": "2.0"`, 1), 422, "version 2.0 is not supported"},
		{"empty", "", 400, "Send the envelope as the JSON body."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, out := a.postJSON("/api/v1/envelopes", tt.body)
			if res.StatusCode != tt.status || !strings.Contains(out, tt.want) {
				t.Fatalf("%d %s; want %d containing %s", res.StatusCode, out, tt.status, tt.want)
			}
		})
	}
	// The server's body limit stops a 10 MB envelope before it is read.
	res, _ := a.postJSON("/api/v1/envelopes", `{"payload":"`+strings.Repeat("x", 10<<20)+`"}`)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("10 MB: status %d, want 413", res.StatusCode)
	}
	after, _ := a.DB.FindThreads(context.Background(), store.ThreadFilter{})
	if len(after) != len(before) {
		t.Fatalf("threads %d → %d: something was imported", len(before), len(after))
	}

	res, out := a.postJSON("/api/v1/envelopes/validate", strings.Replace(body, `"Checkout_v2"`, `"checkout"`, 1))
	if res.StatusCode != http.StatusOK || !strings.Contains(out, `"valid":false`) || !strings.Contains(out, `"path":"product_name_slug"`) {
		t.Fatalf("validate: %d %s, want the slug named", res.StatusCode, out)
	}
}

func TestPlanEnvelopeAndExportZip(t *testing.T) {
	a := newApp(t, newFakeModel())
	ctx := context.Background()
	sn := storetest.FrozenSnapshot(t, a.DB, envelopeItems())
	p, err := a.DB.CreatePlan(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := a.get("/api/v1/plans/" + p.ID + "/envelope"); res.StatusCode != http.StatusConflict {
		t.Fatalf("running plan: status %d, want 409", res.StatusCode)
	}
	if _, err := a.DB.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanFailed, Markdown: "# Plan\n\n1. Half", Error: "The model timed out."}); err != nil {
		t.Fatal(err)
	}
	res, body := a.get("/api/v1/plans/" + p.ID + "/envelope")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"code": "GENERATION_FAILED"`) || !strings.Contains(body, `"partial_output": "# Plan\n\n1. Half"`) {
		t.Fatalf("failed plan: %d %s, want its error envelope", res.StatusCode, body)
	}
	if !strings.Contains(res.Header.Get("Content-Disposition"), "_planner_to_planner_") {
		t.Fatalf("Content-Disposition = %q", res.Header.Get("Content-Disposition"))
	}

	for _, path := range []string{"/h/" + sn.HandoffID + "/export.zip", "/p/" + p.ID + "/export.zip"} {
		res, body := a.get(path)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/zip" {
			t.Fatalf("%s: %d %q", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
		if err != nil || len(zr.File) == 0 || !strings.HasPrefix(zr.File[0].Name, "documents/handoffs/handoff_") {
			t.Fatalf("%s: zip %v, want the envelope under documents/handoffs/", path, err)
		}
	}
}

// TestExportLinks: the review and plan pages link to their exports.
func TestExportLinks(t *testing.T) {
	a := newApp(t, newFakeModel())
	ctx := context.Background()
	sn := storetest.FrozenSnapshot(t, a.DB, envelopeItems())
	p, _ := a.DB.CreatePlan(ctx, sn.ID)
	a.DB.FinishPlan(ctx, p.ID, store.PlanFinish{Status: store.PlanComplete, Markdown: "# Plan (D1)"})
	for path, href := range map[string]string{
		"/h/" + sn.HandoffID: "/h/" + sn.HandoffID + "/export.zip",
		"/p/" + p.ID:         "/p/" + p.ID + "/export.zip",
	} {
		_, body := a.get(path)
		link := findOne(t, parseHTML(t, body), "a", "data-testid", "export-envelope")
		if got := attr(link, "href"); got != href {
			t.Fatalf("%s: export href = %q, want %q", path, got, href)
		}
	}
}

// TestAPIAgentHandoffEnvelope: an agent handoff's envelope names its file
// as an export does, carries the handoff and the workspace as its session,
// and imports back as a new agent handoff, once.
func TestAPIAgentHandoffEnvelope(t *testing.T) {
	a := newApp(t, newFakeModel())
	ctx := context.Background()
	h := &store.AgentHandoff{SourceAgent: "claude-code", TargetAgent: "codex", Summary: "Payment call moved to v2.",
		Results: json.RawMessage(`["tests pass"]`), Snapshot: store.EmptyContextSnapshot()}
	if err := a.DB.CreateAgentHandoff(ctx, h, &store.BlackboardEntry{Type: store.EntryStatus, Summary: "Handoff", AgentID: "claude-code"}, nil); err != nil {
		t.Fatal(err)
	}

	res, body := a.get("/api/v1/agent-handoffs/" + h.ID + "/envelope")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	e, ps := envelope.Check([]byte(body), envelope.Options{})
	if len(ps) > 0 {
		t.Fatalf("envelope problems: %v", ps)
	}
	_, params, err := mime.ParseMediaType(res.Header.Get("Content-Disposition"))
	if want := envelope.BaseName(e); err != nil || params["filename"] != want || !strings.Contains(want, "_coder_to_coder_") {
		t.Fatalf("Content-Disposition = %q, want filename %q", res.Header.Get("Content-Disposition"), want)
	}
	ah := e.Payload.AgentHandoff
	if ah == nil || ah.HandoffID != h.ID || ah.SourceAgentID != "claude-code" || ah.TargetAgentID != "codex" ||
		len(ah.Results) != 1 || e.SessionID != a.DB.DefaultWorkspaceID() || e.ProductName == "" {
		t.Fatalf("envelope = %+v, payload %+v; want the agent handoff in the workspace's session", e, ah)
	}

	if res, _ := a.get("/api/v1/agent-handoffs/nope/envelope"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown id: status %d, want 404", res.StatusCode)
	}

	res, out := a.postJSON("/api/v1/envelopes", body)
	imp := decodeJSON[struct {
		Kind, HandoffID, URL string
		Created              bool
	}](t, out)
	if res.StatusCode != http.StatusCreated || imp.Kind != "agent_handoff" || imp.HandoffID == h.ID || imp.URL != "/agents/handoffs/"+imp.HandoffID {
		t.Fatalf("import: %d %s, want 201 with a new agent handoff", res.StatusCode, out)
	}
	if got, err := a.DB.FindAgentHandoffByID(ctx, "", imp.HandoffID); err != nil || got.Summary != h.Summary || string(got.Results) != `["tests pass"]` {
		t.Fatalf("imported = %+v, %v; want the envelope's handoff", got, err)
	}
	res, out = a.postJSON("/api/v1/envelopes", body)
	if again := decodeJSON[struct{ HandoffID string }](t, out); res.StatusCode != http.StatusOK || again.HandoffID != imp.HandoffID {
		t.Fatalf("second import: %d %s, want 200 with the first import's handoff", res.StatusCode, out)
	}
}
