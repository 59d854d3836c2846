package envelope_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/store/envelope"
)

// TestComputeSHA256MatchesStore: the sha256 a reader recomputes is the
// sha256 of the store's canonical JSON (json.Marshal of the snapshot
// payload) for text that needs escaping, odd numbers and empty lists.
func TestComputeSHA256MatchesStore(t *testing.T) {
	texts := []string{"", "plain", `quote " and \ backslash`, "<b>html</b> & co", "tab\tnewline\n\x00\x1f\x7f",
		"héllo wörld ✓ 🎉", "a<b", "a>b", "a&b", "a\"b", `a\b`, "a\x01b", "a\u2028b", "a\xffb", "line\u2028para\u2029", "bad \xff\xfe utf-8", "half \xe2\x82", strings.Repeat("long ", 200)}
	floats := []float64{0, 0.5, 1, 0.1 + 0.2, 1e-7, 5e-324, 1e21, 123456789012345678901234, math.Copysign(0, -1), 0.000001}
	b := &envelope.BrainstormHandoff{HandoffID: "h", ThreadID: "t", FrozenAt: time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))}
	for i, s := range texts {
		f := floats[i%len(floats)]
		d := envelope.Decision{ID: s, Label: s, Content: s, Source: s, MessageIDs: []string{s, "m"}}
		if i%3 != 0 {
			d.Confidence = &f
		}
		if i%4 == 0 {
			d.MessageIDs = nil
		}
		b.Decisions = append(b.Decisions, d)
		b.FilesReferenced = append(b.FilesReferenced, envelope.File{ID: s, Path: envelope.Path(s), Relevance: s, Context: s})
		b.Risks = append(b.Risks, envelope.Risk{ID: s, Description: s, Severity: s, Mitigation: s})
		b.Summary += s
	}
	for _, f := range floats {
		b.Decisions = append(b.Decisions, envelope.Decision{ID: "f", Confidence: &f})
	}
	// large is written to the hash in several chunks.
	large := &envelope.BrainstormHandoff{HandoffID: "h", ThreadID: "t", FrozenAt: b.FrozenAt}
	for i := range 300 {
		large.Decisions = append(large.Decisions, envelope.Decision{ID: strings.Repeat("i", i%7), Content: strings.Repeat("é & <x> ", i%120), Source: "ai-extracted"})
		large.Risks = append(large.Risks, envelope.Risk{ID: "r", Description: strings.Repeat("d", i)})
	}
	for name, b := range map[string]*envelope.BrainstormHandoff{"varied": b, "empty": {FrozenAt: time.Unix(0, 0).UTC()}, "large": large} {
		data, err := json.Marshal(b.SnapshotPayload())
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got, want := b.ComputeSHA256(), hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: ComputeSHA256 = %s, want %s, the sha256 of %.2000s", name, got, want, data)
		}
	}
}
