package envelope_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
)

// oneMegabyte returns two envelopes of about 1 MB: a plan whose markdown
// is most of it, and a brainstorm handoff of many decisions, files and
// risks, whose sha256 validation recomputes.
func oneMegabyte(b *testing.B) map[string][]byte {
	p := fixturePlan(store.PlanComplete)
	p.Markdown = strings.Repeat("1. Call the v2 payments API and keep refunds on v1 (D1).\n", 1<<20/57)
	plan, _ := envelope.FromPlan(p, fixtureSession())

	sn := fixtureSnapshot()
	pl := &sn.Payload
	pl.Decisions, pl.FilesReferenced, pl.Risks = nil, nil, nil
	for i := range 1500 {
		pl.Decisions = append(pl.Decisions, store.SnapshotDecision{Label: fmt.Sprintf("D%d", i+1), ID: fmt.Sprintf("0193a1b2-0000-7000-8000-%012d", i),
			Content: strings.Repeat("Use the v2 payments API for card payments. ", 10), Source: store.SourceAI, Confidence: conf(0.7), MessageIDs: []string{"m1", "m2"}})
	}
	for i := range 300 {
		pl.FilesReferenced = append(pl.FilesReferenced, store.SnapshotFile{ID: fmt.Sprintf("f%d", i), Path: fmt.Sprintf("src/pkg%d/file.go", i), Relevance: store.LevelMedium, Context: "touched by the change"})
		pl.Risks = append(pl.Risks, store.SnapshotRisk{ID: fmt.Sprintf("r%d", i), Description: "Double charges on retry.", Severity: store.LevelHigh, Mitigation: "Idempotency keys."})
	}
	raw, _ := json.Marshal(pl)
	sum := sha256.Sum256(raw)
	sn.SHA256 = hex.EncodeToString(sum[:])
	brainstorm := envelope.FromSnapshot(sn, fixtureSession())

	out := map[string][]byte{}
	for name, e := range map[string]*envelope.Envelope{"plan": plan, "brainstorm_handoff": brainstorm} {
		data, err := envelope.Encode(e)
		if err != nil {
			b.Fatal(err)
		}
		out[name] = data
	}
	return out
}

// BenchmarkValidate1MB decodes and validates a 1 MB envelope (goal ≤ 5 ms
// of CPU). It reports the process's CPU time per validation besides wall
// time, which a busy machine inflates.
func BenchmarkValidate1MB(b *testing.B) {
	opts := envelope.Options{Bundle: func(string) bool { return true }}
	for name, data := range oneMegabyte(b) {
		b.Run(name, func(b *testing.B) {
			if _, ps := envelope.Check(data, opts); len(ps) > 0 {
				b.Fatal(ps)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				envelope.Check(data, opts)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkSnapshotSHA256 compares the sha256 validation recomputes for a
// 1 MB brainstorm handoff, by the canonical encoder, with encoding the
// store's payload by reflection (which it replaces and must equal).
func BenchmarkSnapshotSHA256(b *testing.B) {
	e, ps := envelope.Check(oneMegabyte(b)["brainstorm_handoff"], envelope.Options{})
	if len(ps) > 0 {
		b.Fatal(ps)
	}
	bh := e.Payload.BrainstormHandoff
	for name, hash := range map[string]func() string{
		"canonical": bh.ComputeSHA256,
		"reflect": func() string {
			data, _ := json.Marshal(bh.SnapshotPayload())
			sum := sha256.Sum256(data)
			return hex.EncodeToString(sum[:])
		},
	} {
		b.Run(name, func(b *testing.B) {
			if got := hash(); got != bh.SHA256 {
				b.Fatalf("sha256 %s, want %s", got, bh.SHA256)
			}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				hash()
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
