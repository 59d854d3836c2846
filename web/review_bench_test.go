package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// BenchmarkSharePage compares GET /s/{token} (a review link: the handoff
// and its latest plan, read only, one view counted) with the member review
// screen GET /h/{id} of the same handoff (12 decisions, 20 files, 3 risks,
// a plan, 6 comment threads), both gzipped through the whole router, in
// alternating rounds of the same run (goal: the share page within 20% of
// the review screen). One op is one round of each; read the custom
// metrics.
func BenchmarkSharePage(b *testing.B) {
	ctx := context.Background()
	db := storetest.MustOpen(b)
	items := storetest.Items{Title: "Billing export", Summary: "Finance wants invoices out as CSV, streamed, kept 30 days."}
	for i := range 12 {
		items.Decisions = append(items.Decisions, store.DecisionCreate{Content: fmt.Sprintf("Decision %d: stream rows of the invoices table in pages of 500 and write them as CSV with a header line.", i+1)})
	}
	for i := range 20 {
		items.Files = append(items.Files, store.FileRefInput{Path: fmt.Sprintf("billing/export/part%02d.go", i), Context: "the exporter writes here"})
	}
	for i := range 3 {
		items.Risks = append(items.Risks, store.RiskInput{Description: fmt.Sprintf("Risk %d: large exports time out behind the proxy.", i+1)})
	}
	sn := storetest.FrozenSnapshot(b, db, items)
	plan, err := db.CreatePlan(ctx, sn.ID)
	if err != nil {
		b.Fatal(err)
	}
	var md strings.Builder
	md.WriteString("# Billing export\n\n")
	for i := range 8 {
		fmt.Fprintf(&md, "## Step %d\n\nDo the work of step %d (D%d), with **care** and `code`.\n\n- one\n- two\n\n", i+1, i+1, i+1)
	}
	if _, err := db.FinishPlan(ctx, plan.ID, store.PlanFinish{Status: store.PlanComplete, Markdown: md.String()}); err != nil {
		b.Fatal(err)
	}
	h, err := db.FindHandoffByID(ctx, sn.HandoffID)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 6 {
		a := store.Anchor{Kind: store.AnchorDecision, ID: h.Decisions[i].ID}
		if i%2 == 1 {
			a = store.Anchor{Kind: store.AnchorPlanSection, ID: plan.ID, Section: fmt.Sprintf("step-%d", i)}
		}
		if _, err := db.CreateComment(ctx, h.ID, store.CommentCreate{Anchor: a, Body: "Why *this*?", Author: store.Actor{Name: "You"}}); err != nil {
			b.Fatal(err)
		}
	}
	_, token, err := db.CreateShareLink(ctx, store.ShareCreate{HandoffID: h.ID, Mode: store.ShareReview, ExpiresIn: "never", By: store.Actor{Name: "You"}})
	if err != nil {
		b.Fatal(err)
	}
	srv := web.New(web.Config{DB: db, Provider: offline.New(), Extractor: offline.New(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SessionKey: []byte("0123456789abcdef0123456789abcdef"),
		ModelRate: 1e6, ShareRate: 1e9})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	cookies := benchSignIn(b, db, srv)
	get := func(path string) int {
		req := httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: status %d", path, rec.Code)
		}
		return rec.Body.Len()
	}
	member, share := "/h/"+h.ID, "/s/"+token
	for range 50 { // warm the caches of both
		get(member)
		get(share)
	}
	const perRound = 200
	var memberT, shareT time.Duration
	var memberN, shareN, memberB, shareB int
	for b.Loop() {
		start := time.Now()
		for range perRound {
			memberB = get(member)
		}
		memberT += time.Since(start)
		memberN += perRound
		start = time.Now()
		for range perRound {
			shareB = get(share)
		}
		shareT += time.Since(start)
		shareN += perRound
	}
	memberUS := float64(memberT.Microseconds()) / float64(memberN)
	shareUS := float64(shareT.Microseconds()) / float64(shareN)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(memberUS, "review-µs/req")
	b.ReportMetric(shareUS, "share-µs/req")
	b.ReportMetric(shareUS/memberUS, "share/review")
	b.ReportMetric(float64(memberB), "review-gz-B")
	b.ReportMetric(float64(shareB), "share-gz-B")
}
