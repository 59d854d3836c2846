package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkFindHandoffByID reads the review screen's handoff: 12
// decisions, 20 files and 5 risks with real-sized text, as the review page
// benchmark in web holds.
func BenchmarkFindHandoffByID(b *testing.B) {
	ctx := context.Background()
	db := mustOpen(b)
	th, err := db.CreateThread(ctx, ThreadCreate{Title: "Rate limiting for the public API"})
	if err != nil {
		b.Fatal(err)
	}
	h, err := db.EnsureHandoff(ctx, th.ID)
	if err != nil {
		b.Fatal(err)
	}
	conf := 0.8
	for i := range 12 {
		in := DecisionCreate{Source: SourceAI, Confidence: &conf, Content: fmt.Sprintf(
			"Limit each API key to %d requests per minute with a token bucket in Redis, and answer 429 with Retry-After (decision %d).", 60*(i+1), i+1)}
		if _, _, err := db.CreateDecision(ctx, h.ID, in, 0); err != nil {
			b.Fatal(err)
		}
	}
	levels := []Level{LevelHigh, LevelMedium, LevelLow}
	for i := range 20 {
		in := FileRefInput{Path: fmt.Sprintf("server/src/middleware/ratelimit/bucket_%02d.ts", i+1), Relevance: levels[i%3],
			Context: "Holds the token bucket and the Redis script that refills it; the 429 response is built here too.", Source: SourceAI}
		if _, err := db.CreateFileRef(ctx, h.ID, in, 0); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 5 {
		in := RiskInput{Description: fmt.Sprintf("Redis becomes a single point of failure for every request (risk %d).", i+1),
			Severity: levels[i%3], Mitigation: "Fail open with a local in-memory bucket when Redis is unreachable.", Source: SourceAI}
		if _, err := db.CreateRisk(ctx, h.ID, in, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := db.FindHandoffByID(ctx, h.ID)
		if err != nil {
			b.Fatal(err)
		}
		if len(got.Decisions)+len(got.Files)+len(got.Risks) != 37 {
			b.Fatalf("read %d items, want 37", len(got.Decisions)+len(got.Files)+len(got.Risks))
		}
	}
}
