package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store/storetest"
)

// BenchmarkRealPagesInProcess serves the realistic brainstorm and review
// pages of BenchmarkRealPages straight through the router, gzipped, one
// request per op, so a CPU profile and ns/op show the server's own cost
// per page without the HTTP client and loopback around it.
func BenchmarkRealPagesInProcess(b *testing.B) {
	db := storetest.MustOpen(b)
	thread := seedRealBrainstorm(b, db)
	handoff := seedRealReview(b, db)
	srv := newBenchServer(b, db, offline.New())
	cookies := benchSignIn(b, db, srv)
	for _, page := range []struct{ name, path string }{
		{"thread", "/t/" + thread.ID},
		{"review", "/h/" + handoff.ID},
	} {
		b.Run(page.name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu cpuMeter
			cpu.begin()
			for b.Loop() {
				// net/http gives every request a context that ends when
				// the client goes away; the store's queries watch it.
				ctx, cancel := context.WithCancel(context.Background())
				req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://localhost"+page.path, nil)
				req.Header.Set("Accept-Encoding", "gzip, deflate, br")
				for _, c := range cookies {
					req.AddCookie(c)
				}
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				cancel()
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: status %d", page.path, rec.Code)
				}
			}
			cpu.end()
			if cpu.ok {
				b.ReportMetric(float64(cpu.total.Microseconds())/float64(b.N), "cpu-µs/op")
			}
		})
	}
}
