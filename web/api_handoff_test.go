package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

type apiDecision struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Content    string   `json:"content"`
	Source     string   `json:"source"`
	Confidence *float64 `json:"confidence"`
	MessageIDs []string `json:"messageIds"`
}

type apiFile struct {
	ID         string   `json:"id"`
	Path       string   `json:"path"`
	Relevance  string   `json:"relevance"`
	Context    string   `json:"context"`
	Source     string   `json:"source"`
	MessageIDs []string `json:"messageIds"`
}

type apiRisk struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Severity    string   `json:"severity"`
	Mitigation  string   `json:"mitigation"`
	Source      string   `json:"source"`
	MessageIDs  []string `json:"messageIds"`
}

type apiHandoff struct {
	ID              string        `json:"id"`
	ThreadID        string        `json:"threadId"`
	Status          string        `json:"status"`
	Summary         string        `json:"summary"`
	Version         int           `json:"version"`
	Decisions       []apiDecision `json:"decisions"`
	FilesReferenced []apiFile     `json:"filesReferenced"`
	Risks           []apiRisk     `json:"risks"`
}

type apiSnapshot struct {
	ID        string          `json:"id"`
	HandoffID string          `json:"handoffId"`
	SHA256    string          `json:"sha256"`
	Payload   json.RawMessage `json:"payload"`
}

// sendJSON sends an API request with a JSON body (none when "") and headers.
func (a *testApp) sendJSON(method, path, body string, header http.Header) (*http.Response, string) {
	a.t.Helper()
	var req *http.Request
	if body == "" {
		req = a.newRequest(method, path, nil, header)
	} else {
		req = a.newRequest(method, path, strings.NewReader(body), header)
		req.Header.Set("Content-Type", "application/json")
	}
	return a.do(req)
}

func wantAPIError(t *testing.T, res *http.Response, body string, status int, code string) {
	t.Helper()
	if got := res.StatusCode; got != status {
		t.Fatalf("Status=%d, want %d; body: %s", got, status, body)
	}
	e := decodeJSON[apiError](t, body)
	if (code != "" && e.Error.Code != code) || e.Error.Message == "" {
		t.Fatalf("error %+v, want code %q and a message", e.Error, code)
	}
}

func TestAPIPin(t *testing.T) {
	app := newApp(t, offline.New())
	ex := app.seedExchange("Auth", "Sessions?", "Use JWT.")
	pin := "/api/v1/threads/" + ex.Thread.ID + "/messages/" + ex.Reply.ID + "/pin"

	res, body := app.postJSON(pin, "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("pin: Status=%d, want %d; body: %s", got, want, body)
	}
	d := decodeJSON[apiDecision](t, body)
	if d.ID == "" || d.Content != "Use JWT." || d.Source != "user-pinned" || d.Label != "D1" || len(d.MessageIDs) != 1 || d.MessageIDs[0] != ex.Reply.ID {
		t.Fatalf("pinned %+v, want a user-pinned D1 with the reply as source", d)
	}
	res, body = app.postJSON(pin, "")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("pin again: Status=%d, want %d", got, want)
	}
	if again := decodeJSON[apiDecision](t, body); again.ID != d.ID {
		t.Fatalf("pin again returned %s, want the same decision %s", again.ID, d.ID)
	}

	res, body = app.sendJSON(http.MethodDelete, pin, "", nil)
	if got, want := res.StatusCode, http.StatusNoContent; got != want {
		t.Fatalf("unpin: Status=%d, want %d; body: %s", got, want, body)
	}
	h, _ := app.DB.FindHandoffByThread(context.Background(), ex.Thread.ID)
	if len(h.Decisions) != 0 {
		t.Fatalf("after unpin: %d decisions", len(h.Decisions))
	}
	res, body = app.sendJSON(http.MethodDelete, pin, "", nil)
	wantAPIError(t, res, body, http.StatusNotFound, "not_found")

	res, body = app.postJSON("/api/v1/threads/"+ex.Thread.ID+"/messages/"+ex.User.ID+"/pin", "")
	wantAPIError(t, res, body, http.StatusUnprocessableEntity, "invalid")
	res, body = app.postJSON("/api/v1/threads/"+ex.Thread.ID+"/messages/nope/pin", "")
	wantAPIError(t, res, body, http.StatusNotFound, "not_found")
}

func TestAPIHandoffFlow(t *testing.T) {
	model := newFakeModel(extractionJSON(t, "We use JWT.", "Use JWT in an HttpOnly cookie.", "Rotate keys monthly"))
	app := newApp(t, model)
	ex := app.seedExchange("Auth", "Sessions?", "Use JWT in an HttpOnly cookie.")

	// Extraction runs to its end and returns the handoff.
	res, body := app.postJSON("/api/v1/threads/"+ex.Thread.ID+"/handoff", "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("extract: Status=%d, want %d; body: %s", got, want, body)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "decisions", "filesReferenced", "risks", "summary", "status", "version"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("handoff JSON has no %q: %s", k, body)
		}
	}
	h := decodeJSON[apiHandoff](t, body)
	if h.Status != "draft" || h.Summary != "We use JWT." || h.ThreadID != ex.Thread.ID || len(h.Decisions) != 2 || len(h.FilesReferenced) != 1 || len(h.Risks) != 1 {
		t.Fatalf("handoff %+v, want the extraction", h)
	}
	if d := h.Decisions[0]; d.Source != "ai-extracted" || d.Confidence == nil || *d.Confidence != 0.9 || len(d.MessageIDs) != 1 || d.MessageIDs[0] != ex.Reply.ID {
		t.Fatalf("decision %+v, want ai-extracted, confidence 0.9, the reply as source", d)
	}
	if f := h.FilesReferenced[0]; f.Path != "src/session.go" || f.Relevance != "high" || f.Context != "cookie handling" {
		t.Fatalf("file %+v, want the extracted file", f)
	}
	if r := h.Risks[0]; r.Severity != "high" || len(r.MessageIDs) != 2 || r.MessageIDs[0] != ex.User.ID {
		t.Fatalf("risk %+v, want severity high with both messages as sources", r)
	}
	if run, err := app.DB.FindLatestExtractionRun(context.Background(), h.ID); err != nil || run.Status != store.RunSucceeded {
		t.Fatalf("run %+v err=%v, want succeeded", run, err)
	}

	res, body = app.get("/api/v1/handoffs/" + h.ID)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET handoff: Status=%d", res.StatusCode)
	}
	if got := decodeJSON[apiHandoff](t, body); got.Version != h.Version || len(got.Decisions) != 2 {
		t.Fatalf("GET handoff %+v, want version %d and 2 decisions", got, h.Version)
	}
	base := "/api/v1/handoffs/" + h.ID

	// Decisions: add, edit, remove.
	res, body = app.postJSON(base+"/decisions", `{"content":"Log every login"}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("add decision: Status=%d, want %d; body: %s", got, want, body)
	}
	added := decodeJSON[apiDecision](t, body)
	if added.Content != "Log every login" || added.Source != "user-pinned" || added.Label != "D3" {
		t.Fatalf("added %+v, want D3 user-pinned", added)
	}
	version := h.Version + 1
	if got := res.Header.Get("ETag"); got != strconv.Quote(strconv.Itoa(version)) {
		t.Fatalf("ETag=%q, want the new version %d", got, version)
	}

	res, body = app.sendJSON(http.MethodPatch, base+"/decisions/"+added.ID, `{"content":"Log every login and logout","version":`+strconv.Itoa(version)+`}`, nil)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("patch: Status=%d, want %d; body: %s", got, want, body)
	}
	if d := decodeJSON[apiDecision](t, body); d.Content != "Log every login and logout" || d.Source != "user-edited" || d.ID != added.ID {
		t.Fatalf("patched %+v, want the new content, user-edited", d)
	}
	version++
	if got := res.Header.Get("ETag"); got != strconv.Quote(strconv.Itoa(version)) {
		t.Fatalf("ETag=%q, want %d", got, version)
	}

	// Stale versions: in the body and in If-Match.
	res, body = app.sendJSON(http.MethodPatch, base+"/decisions/"+added.ID, `{"content":"stale","version":`+strconv.Itoa(version-1)+`}`, nil)
	wantAPIError(t, res, body, http.StatusConflict, "conflict")
	res, body = app.sendJSON(http.MethodPatch, base+"/decisions/"+added.ID, `{"content":"stale"}`, http.Header{"If-Match": {`"` + strconv.Itoa(version-1) + `"`}})
	wantAPIError(t, res, body, http.StatusConflict, "conflict")
	res, body = app.sendJSON(http.MethodPatch, base+"/decisions/"+added.ID, `{"content":"stale"}`, http.Header{"If-Match": {"soon"}})
	wantAPIError(t, res, body, http.StatusBadRequest, "")
	res, body = app.sendJSON(http.MethodDelete, base+"/decisions/"+added.ID, "", http.Header{"If-Match": {strconv.Itoa(version - 1)}})
	wantAPIError(t, res, body, http.StatusConflict, "conflict")
	if got := app.handoff(h.ID); got.Decisions[2].Content != "Log every login and logout" || got.Version != version {
		t.Fatalf("stale requests changed the handoff: %q v%d", got.Decisions[2].Content, got.Version)
	}
	res, body = app.sendJSON(http.MethodPatch, base+"/decisions/"+added.ID, `{"content":"With If-Match"}`, http.Header{"If-Match": {`W/"` + strconv.Itoa(version) + `"`}})
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("patch with current If-Match: Status=%d, want %d; body: %s", got, want, body)
	}
	version++

	res, _ = app.sendJSON(http.MethodDelete, base+"/decisions/"+added.ID, "", http.Header{"If-Match": {strconv.Itoa(version)}})
	if got, want := res.StatusCode, http.StatusNoContent; got != want {
		t.Fatalf("delete decision: Status=%d, want %d", got, want)
	}
	if got := len(app.handoff(h.ID).Decisions); got != 2 {
		t.Fatalf("decisions=%d after delete, want 2", got)
	}

	// Files and risks.
	res, body = app.postJSON(base+"/files", `{"path":"./src/limit.go","relevance":"low","context":"new"}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("add file: Status=%d, want %d; body: %s", got, want, body)
	}
	file := decodeJSON[apiFile](t, body)
	if file.Path != "src/limit.go" || file.Relevance != "low" || file.Source != "user-pinned" {
		t.Fatalf("added file %+v, want the cleaned path", file)
	}
	res, body = app.sendJSON(http.MethodPatch, base+"/files/"+file.ID, `{"relevance":"high"}`, nil)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("patch file: Status=%d, want %d; body: %s", got, want, body)
	}
	if f := decodeJSON[apiFile](t, body); f.Relevance != "high" || f.Path != "src/limit.go" || f.Context != "new" || f.Source != "user-edited" {
		t.Fatalf("patched file %+v, want relevance high and the rest kept", f)
	}
	res, body = app.postJSON(base+"/risks", `{"description":"Rate limit too strict","severity":"medium"}`)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("add risk: Status=%d, want %d; body: %s", got, want, body)
	}
	risk := decodeJSON[apiRisk](t, body)
	res, body = app.sendJSON(http.MethodPatch, base+"/risks/"+risk.ID, `{"severity":"low","mitigation":"configurable"}`, nil)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("patch risk: Status=%d, want %d; body: %s", got, want, body)
	}
	if r := decodeJSON[apiRisk](t, body); r.Severity != "low" || r.Mitigation != "configurable" || r.Description != "Rate limit too strict" || r.Source != "user-edited" {
		t.Fatalf("patched risk %+v", r)
	}
	for _, p := range []string{"/files/" + file.ID, "/risks/" + risk.ID} {
		res, body = app.sendJSON(http.MethodDelete, base+p, "", nil)
		if got, want := res.StatusCode, http.StatusNoContent; got != want {
			t.Fatalf("DELETE %s: Status=%d, want %d; body: %s", p, got, want, body)
		}
	}

	// Freeze: the payload is the hashed bytes.
	res, body = app.postJSON(base+"/freeze", "")
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("freeze: Status=%d, want %d; body: %s", got, want, body)
	}
	sn := decodeJSON[apiSnapshot](t, body)
	sum := sha256.Sum256(sn.Payload)
	if sn.ID == "" || sn.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("sha256=%s, want hex(sha256(payload))=%s", sn.SHA256, hex.EncodeToString(sum[:]))
	}
	var payload struct {
		Decisions []struct {
			Label, Content string
		} `json:"decisions"`
	}
	if err := json.Unmarshal(sn.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	if len(payload.Decisions) != 2 || payload.Decisions[0].Label != "D1" || payload.Decisions[1].Content != "Rotate keys monthly" {
		t.Fatalf("payload decisions %+v, want D1, D2 of the handoff", payload.Decisions)
	}
	res, body = app.get("/api/v1/snapshots/" + sn.ID)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET snapshot: Status=%d", res.StatusCode)
	}
	got := decodeJSON[apiSnapshot](t, body)
	if got.SHA256 != sn.SHA256 || string(got.Payload) != string(sn.Payload) || got.HandoffID != h.ID {
		t.Fatalf("GET snapshot differs from the frozen one:\n%s\n%s", got.Payload, sn.Payload)
	}
	_, body = app.get("/api/v1/handoffs/" + h.ID)
	if got := decodeJSON[apiHandoff](t, body); got.Status != "frozen" {
		t.Fatalf("status=%q after freeze, want frozen", got.Status)
	}
	// A later edit leaves the snapshot alone.
	app.postJSON(base+"/decisions", `{"content":"Later"}`)
	_, body = app.get("/api/v1/snapshots/" + sn.ID)
	if again := decodeJSON[apiSnapshot](t, body); string(again.Payload) != string(sn.Payload) || again.SHA256 != sn.SHA256 {
		t.Fatal("an edit changed the snapshot")
	}
}

func TestAPIHandoffErrors(t *testing.T) {
	app := newApp(t, offline.New())
	ex := app.seedExchange("Auth", "Sessions?", "Use JWT.")
	d, _, err := app.DB.PinMessage(context.Background(), ex.Thread.ID, ex.Reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	fch, _ := app.DB.CreateFileRef(context.Background(), d.HandoffID, store.FileRefInput{Path: "src/a.go", Relevance: store.LevelHigh}, 0)
	base := "/api/v1/handoffs/" + d.HandoffID
	before := app.handoff(d.HandoffID)

	tests := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown handoff", http.MethodGet, "/api/v1/handoffs/nope", "", http.StatusNotFound, "not_found"},
		{"unknown snapshot", http.MethodGet, "/api/v1/snapshots/nope", "", http.StatusNotFound, "not_found"},
		{"add to unknown handoff", http.MethodPost, "/api/v1/handoffs/nope/decisions", `{"content":"x"}`, http.StatusNotFound, "not_found"},
		{"patch unknown decision", http.MethodPatch, base + "/decisions/nope", `{"content":"x"}`, http.StatusNotFound, "not_found"},
		{"delete unknown decision", http.MethodDelete, base + "/decisions/nope", "", http.StatusNotFound, "not_found"},
		{"delete unknown file", http.MethodDelete, base + "/files/nope", "", http.StatusNotFound, "not_found"},
		{"delete unknown risk", http.MethodDelete, base + "/risks/nope", "", http.StatusNotFound, "not_found"},
		{"a decision under /files", http.MethodDelete, base + "/files/" + d.ID, "", http.StatusNotFound, "not_found"},
		{"unknown kind", http.MethodPost, base + "/widgets", `{"content":"x"}`, http.StatusNotFound, ""},
		{"empty content", http.MethodPost, base + "/decisions", `{"content":"  "}`, http.StatusUnprocessableEntity, "invalid"},
		{"content too long", http.MethodPost, base + "/decisions", `{"content":"` + strings.Repeat("x", 2001) + `"}`, http.StatusUnprocessableEntity, "invalid"},
		{"control characters", http.MethodPost, base + "/decisions", `{"content":"a\u0000b"}`, http.StatusUnprocessableEntity, "invalid"},
		{"no content", http.MethodPost, base + "/decisions", `{}`, http.StatusUnprocessableEntity, "invalid"},
		{"unknown field", http.MethodPost, base + "/decisions", `{"content":"x","source":"ai-extracted"}`, http.StatusBadRequest, "bad_json"},
		{"bad relevance", http.MethodPost, base + "/files", `{"path":"src/b.go","relevance":"critical"}`, http.StatusUnprocessableEntity, "invalid"},
		{"patch bad relevance", http.MethodPatch, base + "/files/" + fch.ID, `{"relevance":"urgent"}`, http.StatusUnprocessableEntity, "invalid"},
		{"bad severity", http.MethodPost, base + "/risks", `{"description":"r","severity":"critical"}`, http.StatusUnprocessableEntity, "invalid"},
		{"absolute path", http.MethodPost, base + "/files", `{"path":"/etc/passwd","relevance":"high"}`, http.StatusUnprocessableEntity, "invalid"},
		{"dotdot path", http.MethodPost, base + "/files", `{"path":"../../secrets","relevance":"high"}`, http.StatusUnprocessableEntity, "invalid"},
		{"url path", http.MethodPost, base + "/files", `{"path":"https://evil.example/x.go","relevance":"high"}`, http.StatusUnprocessableEntity, "invalid"},
		{"backslash path", http.MethodPost, base + "/files", `{"path":"C:\\win.ini","relevance":"high"}`, http.StatusUnprocessableEntity, "invalid"},
		{"duplicate path", http.MethodPost, base + "/files", `{"path":"src/a.go","relevance":"high"}`, http.StatusConflict, "conflict"},
		{"extract unknown thread", http.MethodPost, "/api/v1/threads/nope/handoff", "", http.StatusNotFound, "not_found"},
		{"pin in unknown thread", http.MethodPost, "/api/v1/threads/nope/messages/" + ex.Reply.ID + "/pin", "", http.StatusNotFound, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := app.sendJSON(tt.method, tt.path, tt.body, nil)
			wantAPIError(t, res, body, tt.status, tt.code)
			after := app.handoff(d.HandoffID)
			if strings.Join(handoffItems(after), "\n") != strings.Join(handoffItems(before), "\n") || after.Version != before.Version {
				t.Fatalf("a refused request changed the handoff: %v v%d", handoffItems(after), after.Version)
			}
		})
	}

	// Freezing with no decisions is refused.
	other := app.seedExchange("Empty", "Q?", "A.")
	h, _ := app.DB.EnsureHandoff(context.Background(), other.Thread.ID)
	res, body := app.postJSON("/api/v1/handoffs/"+h.ID+"/freeze", "")
	wantAPIError(t, res, body, http.StatusUnprocessableEntity, "invalid")
	res, body = app.postJSON("/api/v1/handoffs/nope/freeze", "")
	wantAPIError(t, res, body, http.StatusNotFound, "not_found")

	// Extracting a thread without messages is refused, with a message.
	empty := app.createThread("No messages")
	res, body = app.postJSON("/api/v1/threads/"+empty.ID+"/handoff", "")
	wantAPIError(t, res, body, http.StatusUnprocessableEntity, "invalid")
	// … before any handoff exists: none is left behind on the home page.
	if !strings.Contains(decodeJSON[apiError](t, body).Error.Message, "no messages yet") {
		t.Fatalf("error %s, want it to say the thread has no messages yet", body)
	}
	if _, err := app.DB.FindHandoffByThread(context.Background(), empty.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindHandoffByThread err=%v, want ErrNotFound", err)
	}
}

// A PATCH that sets no field of its item is refused and changes nothing:
// no version bump, no user-edited mark.
func TestAPIItemPatchNothing(t *testing.T) {
	app := newApp(t, offline.New())
	ex := app.seedExchange("Auth", "Sessions?", "Use JWT.")
	d, _, err := app.DB.PinMessage(context.Background(), ex.Thread.ID, ex.Reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fch, err := app.DB.CreateFileRef(ctx, d.HandoffID, store.FileRefInput{Path: "src/a.go", Relevance: store.LevelHigh, Source: store.SourceAI}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rch, err := app.DB.CreateRisk(ctx, d.HandoffID, store.RiskInput{Description: "Leak", Severity: store.LevelHigh, Source: store.SourceAI}, 0)
	if err != nil {
		t.Fatal(err)
	}
	base := "/api/v1/handoffs/" + d.HandoffID
	before := app.handoff(d.HandoffID)
	tests := []struct {
		name, path, body string
	}{
		{"decision, empty body", base + "/decisions/" + d.ID, `{}`},
		{"decision, only a version", base + "/decisions/" + d.ID, `{"version":` + strconv.Itoa(before.Version) + `}`},
		{"file, empty body", base + "/files/" + fch.ID, `{}`},
		{"file, a decision's field", base + "/files/" + fch.ID, `{"content":"x"}`},
		{"risk, empty body", base + "/risks/" + rch.ID, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := app.sendJSON(http.MethodPatch, tt.path, tt.body, nil)
			wantAPIError(t, res, body, http.StatusUnprocessableEntity, "invalid")
			if e := decodeJSON[apiError](t, body); !strings.Contains(e.Error.Message, "Nothing to change") {
				t.Fatalf("message %q, want it to say there is nothing to change", e.Error.Message)
			}
			after := app.handoff(d.HandoffID)
			if diff := cmp.Diff(handoffItems(before), handoffItems(after)); diff != "" || after.Version != before.Version {
				t.Fatalf("an empty PATCH changed the handoff (v%d→v%d):\n%s", before.Version, after.Version, diff)
			}
		})
	}
}
