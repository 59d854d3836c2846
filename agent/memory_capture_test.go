package agent_test

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// memDecision, memFile and memRisk describe a handoff's items for memHandoff.
type memDecision struct {
	content    string
	confidence *float64
}

type memFile struct {
	path, context string
}

type memRisk struct {
	description, mitigation string
	severity                store.Level
}

type memSpec struct {
	decisions []memDecision
	files     []memFile
	risks     []memRisk
}

func conf(v float64) *float64 { return &v }

// memHandoff makes a thread with a handoff holding spec's items and
// returns the handoff's ID. A decision with a confidence was extracted,
// one without was pinned.
func memHandoff(t *testing.T, db *store.DB, spec memSpec) string {
	t.Helper()
	in := storetest.Items{Title: "Memory"}
	for _, d := range spec.decisions {
		src := store.SourcePinned
		if d.confidence != nil {
			src = store.SourceAI
		}
		in.Decisions = append(in.Decisions, store.DecisionCreate{Content: d.content, Source: src, Confidence: d.confidence})
	}
	for _, f := range spec.files {
		in.Files = append(in.Files, store.FileRefInput{Path: f.path, Relevance: store.LevelHigh, Context: f.context})
	}
	for _, r := range spec.risks {
		in.Risks = append(in.Risks, store.RiskInput{Description: r.description, Severity: r.severity, Mitigation: r.mitigation})
	}
	return storetest.NewHandoff(t, db, in).ID
}

// memCapture freezes a handoff and captures the snapshot.
func memCapture(t *testing.T, db *store.DB, handoffID string, judge agent.Judge) (*store.Snapshot, store.CaptureResult) {
	t.Helper()
	ctx := context.Background()
	sn, err := db.Freeze(ctx, handoffID, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.CaptureSnapshot(ctx, db, sn, "", judge)
	if err != nil {
		t.Fatal(err)
	}
	return sn, res
}

var authSpec = memSpec{
	decisions: []memDecision{
		{"Sign sessions with JWT in src/auth/jwt.ts", conf(0.9)},
		{"Maybe add a cache in front of the API", conf(0.3)},
		{"Store refresh tokens in Postgres", nil},
	},
	files: []memFile{
		{"src/auth/jwt.ts", "Signs and verifies the session tokens"},
		{"src/db/tokens.sql", "Refresh token table for D3"},
		{"docs/README.md", "Mentioned in passing"},
	},
	risks: []memRisk{
		{"Key leak from jwt.ts logs", "Rotate keys monthly", store.LevelHigh},
		{"Token table grows without bound", "", store.LevelMedium},
	},
}

func edgesOf(t *testing.T, db *store.DB, records map[string]string, paths ...string) []string {
	t.Helper()
	var out []string
	for _, p := range paths {
		fr, err := db.FindFileRelationships(context.Background(), "", p)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		for _, d := range fr.Decisions {
			out = append(out, "decision_file|"+records[d.Record.ID]+"|"+p+"|"+strconv.Itoa(d.Count))
		}
		for _, r := range fr.Risks {
			out = append(out, "file_risk|"+p+"|"+r.Target+"|"+strconv.Itoa(r.Count))
		}
	}
	sort.Strings(out)
	return out
}

func TestCaptureSnapshot(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	db.SetClock(ticking())
	hid := memHandoff(t, db, authSpec)
	sn, res := memCapture(t, db, hid, nil)

	if res.AlreadyCaptured || res.Created != 3 || res.Updated != 0 {
		t.Fatalf("result = %+v, want 3 created", res)
	}
	type rec struct{ Label, Content, Scope string }
	var got []rec
	names := map[string]string{}
	for _, r := range res.Records {
		got = append(got, rec{r.Label, r.Content, r.Scope})
		names[r.ID] = r.Label
		if r.Status != store.DecisionActive || r.HandoffID != hid || r.SnapshotID != sn.ID || r.ThreadID != sn.Payload.ThreadID {
			t.Errorf("record %s = %+v, want active with its handoff, snapshot and thread", r.Label, r)
		}
	}
	want := []rec{
		{"D1", "Sign sessions with JWT in src/auth/jwt.ts", "src/auth"},
		{"D2", "Maybe add a cache in front of the API", "project"},
		{"D3", "Store refresh tokens in Postgres", "src/db"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}

	// Learnings: the low-confidence decision is left out; each records its source.
	ls, err := db.FindLearnings(ctx, store.LearningFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range ls {
		kinds = append(kinds, string(l.Kind)+"|"+l.Content+"|"+l.Detail+"|"+l.Path)
		if l.HandoffID != hid || l.ThreadID != sn.Payload.ThreadID || l.SnapshotID != sn.ID || l.CreatedAt.IsZero() {
			t.Errorf("learning %q has handoff %q thread %q snapshot %q time %v", l.Content, l.HandoffID, l.ThreadID, l.SnapshotID, l.CreatedAt)
		}
	}
	sort.Strings(kinds)
	wantKinds := []string{
		"decision|Sign sessions with JWT in src/auth/jwt.ts||",
		"decision|Store refresh tokens in Postgres||",
		"file|Mentioned in passing||docs/README.md",
		"file|Refresh token table for D3||src/db/tokens.sql",
		"file|Signs and verifies the session tokens||src/auth/jwt.ts",
		"risk|Key leak from jwt.ts logs|Rotate keys monthly|",
		"risk|Token table grows without bound||",
	}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("learnings (-want +got):\n%s", diff)
	}
	if res.Learnings != len(wantKinds) {
		t.Errorf("Learnings=%d, want %d", res.Learnings, len(wantKinds))
	}

	// Edges follow what the snapshot ties together, not every pair.
	paths := []string{"src/auth/jwt.ts", "src/db/tokens.sql", "docs/README.md"}
	wantEdges := []string{
		"decision_file|D1|src/auth/jwt.ts|1",
		"decision_file|D3|src/db/tokens.sql|1",
		"file_risk|src/auth/jwt.ts|Key leak from jwt.ts logs|1",
	}
	if diff := cmp.Diff(wantEdges, edgesOf(t, db, names, paths...)); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}
	d1, err := db.FindDecisionRecordByID(ctx, res.Records[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d1.Risks) != 1 || d1.Risks[0].Target != "Key leak from jwt.ts logs" || d1.Risks[0].Severity != store.LevelHigh || d1.Risks[0].Mitigation != "Rotate keys monthly" {
		t.Errorf("D1 risks = %+v, want the key leak (high, rotate keys) through jwt.ts", d1.Risks)
	}

	// Capturing the same snapshot again changes nothing.
	again, err := agent.CaptureSnapshot(ctx, db, sn, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !again.AlreadyCaptured || again.Created != 0 || len(again.Records) != 0 {
		t.Errorf("second capture = %+v, want AlreadyCaptured and nothing else", again)
	}
	if diff := cmp.Diff(wantEdges, edgesOf(t, db, names, paths...)); diff != "" {
		t.Errorf("edges after re-capture (-want +got):\n%s", diff)
	}
	all, err := db.FindDecisionRecords(ctx, store.DecisionRecordFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Errorf("%d records after re-capture, want 3", len(all))
	}

	// Freezing the handoff again is a new snapshot: records are updated, not
	// duplicated; edges are counted once more; learnings are not repeated.
	_, res2 := memCapture(t, db, hid, nil)
	if res2.Created != 0 || res2.Updated != 3 || res2.Learnings != 0 {
		t.Errorf("re-freeze capture = created %d updated %d learnings %d, want 0, 3, 0", res2.Created, res2.Updated, res2.Learnings)
	}
	wantEdges2 := []string{
		"decision_file|D1|src/auth/jwt.ts|2",
		"decision_file|D3|src/db/tokens.sql|2",
		"file_risk|src/auth/jwt.ts|Key leak from jwt.ts logs|2",
	}
	if diff := cmp.Diff(wantEdges2, edgesOf(t, db, names, paths...)); diff != "" {
		t.Errorf("edges after a second snapshot (-want +got):\n%s", diff)
	}
	fr, err := db.FindFileRelationships(ctx, "", "src/auth/jwt.ts")
	if err != nil {
		t.Fatal(err)
	}
	if r := fr.Risks[0]; !r.LastSeen.After(r.FirstSeen) {
		t.Errorf("file_risk first seen %v, last seen %v: want last after first", r.FirstSeen, r.LastSeen)
	}
}

func TestCaptureSnapshotErrors(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	if _, err := agent.CaptureSnapshot(ctx, db, nil, "", nil); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("nil snapshot: err = %v, want ErrInvalid", err)
	}
	if _, err := agent.CaptureSnapshot(ctx, db, &store.Snapshot{ID: "nope"}, "", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown snapshot: err = %v, want ErrNotFound", err)
	}
	sn, err := db.Freeze(ctx, memHandoff(t, db, authSpec), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.CaptureSnapshot(ctx, db, sn, "other-workspace", nil); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("other workspace: err = %v, want ErrInvalid", err)
	}
}

// insteadOf is a stand-in judge: new reverses old when it says "instead of"
// a word old contains.
func insteadOf(_ context.Context, old, new store.DecisionRecord) (bool, error) {
	_, after, ok := strings.Cut(strings.ToLower(new.Content), "instead of ")
	return ok && strings.Contains(strings.ToLower(old.Content), strings.Fields(after)[0]), nil
}

func TestCaptureSupersedes(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	db.SetClock(ticking())
	_, first := memCapture(t, db, memHandoff(t, db, memSpec{
		decisions: []memDecision{{"Use JWT for sessions in src/auth/jwt.ts", conf(0.9)}, {"Log in src/log/log.go", conf(0.9)}},
		files:     []memFile{{"src/auth/jwt.ts", ""}, {"src/log/log.go", ""}},
	}), insteadOf)
	var asked []string
	judge := func(ctx context.Context, old, new store.DecisionRecord) (bool, error) {
		asked = append(asked, old.Content+" → "+new.Content)
		return insteadOf(ctx, old, new)
	}
	_, second := memCapture(t, db, memHandoff(t, db, memSpec{
		decisions: []memDecision{
			{"Use server sessions in src/auth/session.ts instead of jwt", conf(0.9)},
			{"Use cookies in src/auth/cookie.ts instead of jwt", conf(0.2)}, // too unsure to reverse anything
		},
		files: []memFile{{"src/auth/session.ts", ""}, {"src/auth/cookie.ts", ""}},
	}), judge)

	old, neu := first.Records[0], second.Records[0]
	if diff := cmp.Diff([]store.Supersession{{OldID: old.ID, NewID: neu.ID}}, second.Superseded); diff != "" {
		t.Errorf("Superseded (-want +got):\n%s", diff)
	}
	// Only the same scope is judged, and never a low-confidence decision.
	if want := []string{"Use JWT for sessions in src/auth/jwt.ts → Use server sessions in src/auth/session.ts instead of jwt"}; !cmp.Equal(want, asked) {
		t.Errorf("judge asked %q, want %q", asked, want)
	}
	got, err := db.FindDecisionRecordByID(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.DecisionSuperseded || got.SupersededBy != neu.ID {
		t.Errorf("old record status %q superseded by %q, want superseded by %s", got.Status, got.SupersededBy, neu.ID)
	}
	var chain []string
	for _, r := range got.Chain {
		chain = append(chain, r.ID)
	}
	if diff := cmp.Diff([]string{old.ID, neu.ID}, chain); diff != "" {
		t.Errorf("chain (-want +got):\n%s", diff)
	}
	if got.Summary != "" || len(got.Files) != 1 || got.Files[0].Target != "src/auth/jwt.ts" {
		t.Errorf("details: summary %q files %+v, want no summary and jwt.ts", got.Summary, got.Files)
	}
}

func TestSupersedeAndReactivate(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	db.SetClock(ticking())
	_, res := memCapture(t, db, memHandoff(t, db, memSpec{decisions: []memDecision{
		{"Use Postgres", nil}, {"Use SQLite", nil}, {"Use MySQL", nil},
	}}), nil)
	a, b, c := res.Records[0].ID, res.Records[1].ID, res.Records[2].ID

	tests := []struct {
		name    string
		id, by  string
		wantErr error
	}{
		{"self", a, a, store.ErrInvalid},
		{"unknown record", "nope", b, store.ErrNotFound},
		{"unknown replacement", a, "nope", store.ErrNotFound},
		{"by hand", a, b, nil},
		{"by a superseded record", c, a, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.SupersedeDecisionRecord(ctx, tt.id, tt.by)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
	status := func(id string) (store.DecisionStatus, string) {
		r, err := db.FindDecisionRecordByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status, r.SupersededBy
	}
	if s, by := status(a); s != store.DecisionSuperseded || by != b {
		t.Fatalf("a = %s by %q, want superseded by b", s, by)
	}
	active, err := db.FindDecisionRecords(ctx, store.DecisionRecordFilter{Status: store.DecisionActive})
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 2 {
		t.Errorf("%d active records, want 2", len(active))
	}
	if err := db.ReactivateDecisionRecord(ctx, a); err != nil {
		t.Fatal(err)
	}
	if s, by := status(a); s != store.DecisionActive || by != "" {
		t.Errorf("a after reactivate = %s by %q, want active", s, by)
	}
	if err := db.ReactivateDecisionRecord(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("reactivate unknown: err = %v, want ErrNotFound", err)
	}
}

func TestFindDecisionRecordsSearch(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	db.SetClock(ticking())
	_, res := memCapture(t, db, memHandoff(t, db, memSpec{
		decisions: []memDecision{
			{"Keep backups of the cache nightly in src/cache/backup.go", nil},
			{"Cache rendered pages and cache API answers in src/cache/pages.go", nil},
			{"Name the cluster after planets in infra/names.tf", nil},
			{"Evict the cache hourly in src/cache/evict.go", nil},
		},
		files: []memFile{{"src/cache/backup.go", ""}, {"src/cache/pages.go", ""}, {"infra/names.tf", ""}, {"src/cache/evict.go", ""}},
	}), nil)
	backup, pages, _, evict := res.Records[0], res.Records[1], res.Records[2], res.Records[3]
	if err := db.SupersedeDecisionRecord(ctx, evict.ID, pages.ID); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		f    store.DecisionRecordFilter
		want []string
	}{
		{"twice ranks above once", store.DecisionRecordFilter{Terms: agent.SearchTerms("cache")}, []string{pages.ID, evict.ID, backup.ID}},
		{"stemmed, all words required", store.DecisionRecordFilter{Terms: agent.SearchTerms("caching backups")}, []string{backup.ID}},
		{"status", store.DecisionRecordFilter{Terms: agent.SearchTerms("cache"), Status: store.DecisionActive}, []string{pages.ID, backup.ID}},
		{"scope and under", store.DecisionRecordFilter{Scope: "src"}, []string{evict.ID, pages.ID, backup.ID}},
		{"scope", store.DecisionRecordFilter{Scope: "infra", Terms: agent.SearchTerms("planets")}, []string{res.Records[2].ID}},
		{"other scope", store.DecisionRecordFilter{Scope: "src/cach", Terms: agent.SearchTerms("cache")}, nil},
		{"FTS syntax is text", store.DecisionRecordFilter{Terms: []string{`cache" OR "planets`}}, nil},
		{"no match", store.DecisionRecordFilter{Terms: agent.SearchTerms("kubernetes")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.FindDecisionRecords(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}

	got, err := db.FindDecisionRecords(ctx, store.DecisionRecordFilter{Terms: agent.SearchTerms("backups")})
	if err != nil || len(got) != 1 {
		t.Fatalf("got %d records, err %v", len(got), err)
	}
	var marked []string
	for _, p := range got[0].Snippet {
		if p.Match {
			marked = append(marked, p.Text)
		}
	}
	if len(marked) == 0 || marked[0] != "backups" {
		t.Errorf("snippet marks %q, want \"backups\" first", marked)
	}
	if _, err := db.FindDecisionRecords(ctx, store.DecisionRecordFilter{Status: "gone"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("unknown status: err = %v, want ErrInvalid", err)
	}
}

func TestFindFileRelationships(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	db.SetClock(ticking())
	spec := memSpec{
		decisions: []memDecision{{"Sign tokens with EdDSA in src/auth/jwt.ts", nil}, {"Paginate the audit log", nil}},
		files:     []memFile{{"src/auth/jwt.ts", "Token signing"}, {"src/audit/log.go", "Paging for D2"}},
		risks:     []memRisk{{"Clock skew breaks jwt.ts expiry checks", "Allow 30s leeway", store.LevelHigh}},
	}
	_, first := memCapture(t, db, memHandoff(t, db, spec), nil)
	// A second brainstorm decides the same thing again.
	memCapture(t, db, memHandoff(t, db, spec), nil)

	got, err := db.FindFileRelationships(ctx, "", "src/auth/jwt.ts")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Decisions) != 1 || got.Decisions[0].Record.ID != first.Records[0].ID || got.Decisions[0].Count != 2 {
		t.Errorf("decisions = %+v, want the EdDSA record seen twice", got.Decisions)
	}
	if len(got.Risks) != 1 {
		t.Fatalf("risks = %+v, want one", got.Risks)
	}
	r := got.Risks[0]
	if r.Target != "Clock skew breaks jwt.ts expiry checks" || r.Count != 2 || r.Severity != store.LevelHigh || r.Mitigation != "Allow 30s leeway" {
		t.Errorf("risk = %+v, want clock skew (high, leeway) seen twice", r)
	}
	if r.FirstSeen.IsZero() || !r.LastSeen.After(r.FirstSeen) {
		t.Errorf("risk seen %v … %v, want two distinct times", r.FirstSeen, r.LastSeen)
	}
	if _, err := db.FindFileRelationships(ctx, "", "src/none.go"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown file: err = %v, want ErrNotFound", err)
	}
}

// TestSupersessionNeverLoops re-freezes an edited decision that had been
// superseded: it becomes a new, active decision that may supersede the one
// that replaced it, but the two never end up superseding each other.
func TestSupersessionNeverLoops(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	db.SetClock(ticking())
	h1 := memHandoff(t, db, memSpec{decisions: []memDecision{{"Use mysql for storage in src/db/db.go", conf(0.9)}},
		files: []memFile{{"src/db/db.go", ""}}})
	_, first := memCapture(t, db, h1, insteadOf)
	_, second := memCapture(t, db, memHandoff(t, db, memSpec{
		decisions: []memDecision{{"Use postgres for storage in src/db/db.go instead of mysql", conf(0.9)}},
		files:     []memFile{{"src/db/db.go", ""}}}), insteadOf)
	a, x := first.Records[0].ID, second.Records[0].ID

	h, err := db.FindHandoffByID(ctx, h1)
	if err != nil {
		t.Fatal(err)
	}
	edit := "Use mysql for storage in src/db/db.go instead of postgres"
	if _, _, err := db.UpdateDecision(ctx, h1, h.Decisions[0].ID, store.DecisionUpdate{Content: &edit, Version: h.Version}); err != nil {
		t.Fatal(err)
	}
	memCapture(t, db, h1, insteadOf)

	active, err := db.FindDecisionRecords(ctx, store.DecisionRecordFilter{Status: store.DecisionActive})
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 1 || active[0].ID != a {
		t.Fatalf("active records %v, want only the re-frozen %s", active, a)
	}
	got, err := db.FindDecisionRecordByID(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.DecisionSuperseded || got.SupersededBy != a {
		t.Fatalf("the postgres record: status %q superseded by %q, want superseded by %s", got.Status, got.SupersededBy, a)
	}
}
