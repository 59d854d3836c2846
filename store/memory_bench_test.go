package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/store/internal/pgtest"
)

func TestFTS5Available(t *testing.T) {
	if onPostgres() {
		t.Skip("FTS5 is SQLite's; PostgreSQL searches tsvector columns (TestSearchTokenizer checks both)")
	}
	db := mustOpen(t)
	var used int
	if err := db.read.QueryRowContext(t.Context(), `SELECT sqlite_compileoption_used('ENABLE_FTS5')`).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if used != 1 {
		t.Fatalf("ENABLE_FTS5=%d, want 1: the sqlite driver lacks FTS5", used)
	}
	var rank float64
	if err := db.write.QueryRowContext(t.Context(), `SELECT bm25(decision_records_fts) FROM decision_records_fts WHERE decision_records_fts MATCH 'x'
		UNION ALL SELECT 0`).Scan(&rank); err != nil {
		t.Fatalf("bm25 over FTS5: %v", err)
	}
}

// TestFTSFollowsUpdates checks that the triggers keep the index in step
// when a record's text changes or the record goes away.
func TestFTSFollowsUpdates(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	ids := seedDecisionRecords(t, db, 2, func(i int) (string, string) { return "Use Postgres for billing", "project" })
	count := func(q string) int {
		t.Helper()
		got, err := db.FindDecisionRecords(ctx, DecisionRecordFilter{Terms: []string{q}})
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	if _, err := db.write.ExecContext(t.Context(), `UPDATE decision_records SET content = 'Use MySQL for billing' WHERE id = ?`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(t.Context(), `DELETE FROM decision_records WHERE id = ?`, ids[1]); err != nil {
		t.Fatal(err)
	}
	if n := count("postgres"); n != 0 {
		t.Errorf("postgres matches %d records after update and delete, want 0", n)
	}
	if n := count("mysql"); n != 1 {
		t.Errorf("mysql matches %d records, want 1", n)
	}
	if onPostgres() {
		return // the tsvector is a generated column: no index to check
	}
	if _, err := db.write.ExecContext(t.Context(), `INSERT INTO decision_records_fts (decision_records_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("FTS index out of step with decision_records: %v", err)
	}
}

// TestSearchTokenizer checks that both engines split and fold text alike:
// a path's parts are words, accents and case do not count, stems match,
// common words are words, and a term of several words is a phrase.
func TestSearchTokenizer(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	texts := []string{
		"Keep src/auth/token.go small",
		"The café caches rate-limited answers",
		"Rotate the keys of the session store",
	}
	ids := seedDecisionRecords(t, db, len(texts), func(i int) (string, string) { return texts[i], "project" })
	tests := []struct {
		terms   []string
		anyTerm bool
		want    []string
	}{
		{[]string{"token"}, false, []string{ids[0]}},
		{[]string{"auth/token.go"}, false, []string{ids[0]}},
		{[]string{"CAFE"}, false, []string{ids[1]}},
		{[]string{"cached", "limit"}, false, []string{ids[1]}},
		{[]string{"the"}, false, []string{ids[2], ids[1]}},
		{[]string{"session store"}, false, []string{ids[2]}},
		{[]string{"store session"}, false, nil},
		{[]string{"token", "keys"}, true, []string{ids[0], ids[2]}}, // as often, the shorter first
		{[]string{"!!", "token"}, false, []string{ids[0]}},          // a term with no word is left out
		{[]string{"!!", "token"}, true, []string{ids[0]}},
		{[]string{`token" OR "keys`}, false, nil},
		{[]string{`'token' | keys`}, false, nil},
		{[]string{"!!", "&"}, false, nil},
		{[]string{" ", ""}, false, []string{ids[2], ids[1], ids[0]}},
	}
	for _, tt := range tests {
		got, err := db.FindDecisionRecords(ctx, DecisionRecordFilter{Terms: tt.terms, AnyTerm: tt.anyTerm})
		if err != nil {
			t.Fatalf("%q: %v", tt.terms, err)
		}
		var gotIDs []string
		for _, r := range got {
			gotIDs = append(gotIDs, r.ID)
		}
		if !slices.Equal(gotIDs, tt.want) {
			t.Errorf("%q (any %v) found %v, want %v", tt.terms, tt.anyTerm, gotIDs, tt.want)
		}
	}
}

func TestCommonTermFallsBackToRecency(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	n := CommonTermCap + 100
	ids := seedDecisionRecords(t, db, n, func(i int) (string, string) {
		if i == 0 {
			// bm25 would put this first: the oldest, and the best match.
			return "ledger ledger ledger ledger", "project"
		}
		return fmt.Sprintf("Keep the ledger in region %d of the archive", i), "project"
	})
	got, err := db.FindDecisionRecords(ctx, DecisionRecordFilter{Terms: []string{"ledger"}, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, r := range got {
		gotIDs = append(gotIDs, r.ID)
		if len(r.Snippet) == 0 {
			t.Errorf("record %s has no snippet", r.ID)
		}
	}
	want := []string{ids[n-1], ids[n-2], ids[n-3], ids[n-4], ids[n-5]}
	if !slices.Equal(gotIDs, want) {
		t.Errorf("common term results = %v, want the newest first %v", gotIDs, want)
	}
	// A rare term is still ranked by relevance.
	got, err = db.FindDecisionRecords(ctx, DecisionRecordFilter{Terms: []string{"region", "17"}})
	if err != nil || len(got) != 1 || got[0].ID != ids[17] {
		t.Errorf("rare query = %v (err %v), want record 17 only", got, err)
	}
}

// seedDecisionRecords inserts n decision records in one transaction,
// oldest first, under one frozen handoff, and returns their IDs.
func seedDecisionRecords(tb testing.TB, db *DB, n int, gen func(i int) (content, scope string)) []string {
	tb.Helper()
	ctx := context.Background()
	th, err := db.CreateThread(ctx, ThreadCreate{Title: "Seed"})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := db.EnsureHandoff(ctx, th.ID)
	if err != nil {
		tb.Fatal(err)
	}
	if _, _, err := db.CreateDecision(ctx, h.ID, DecisionCreate{Content: "Seed"}, 0); err != nil {
		tb.Fatal(err)
	}
	sn, err := db.Freeze(ctx, h.ID, 0)
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]string, n)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	err = db.inTx(ctx, func(tx *txn) error {
		st, err := tx.PrepareContext(ctx,
			`INSERT INTO decision_records (id, workspace_id, handoff_id, snapshot_id, thread_id, decision_id, label,
			   content, scope, status, message_ids, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i := range n {
			content, scope := gen(i)
			status := DecisionActive
			if i%10 == 9 {
				status = DecisionSuperseded
			}
			ids[i] = newID()
			at := formatTime(start.Add(time.Duration(i) * time.Minute))
			if _, err := st.ExecContext(ctx, ids[i], db.defaultWorkspace, h.ID, sn.ID, th.ID, newID(),
				fmt.Sprintf("D%d", i%12+1), content, scope, status, at, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if db.eng == enginePostgres {
		// Statistics, as autovacuum would gather them in a while: the
		// planner needs them to pick plans for the new rows.
		if _, err := db.write.ExecContext(ctx, `ANALYZE decision_records`); err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}

// benchVocabulary is a realistic decision vocabulary: a few hundred words of
// software talk used with a Zipf distribution, plus generated identifiers
// for the long tail, and "service", which most records contain.
type benchVocabulary struct {
	words []string
	zipf  *rand.Zipf
	rng   *rand.Rand
}

func newBenchVocabulary() *benchVocabulary {
	common := strings.Fields(`api auth token session cache database postgres sqlite redis queue worker job retry
	timeout deploy release build test migration schema index query search ranking page handler route middleware
	logging metrics tracing alert config secret key rotation backup restore replica shard partition lock
	transaction rollback commit branch review plan decision risk file path module package interface struct
	error panic recover context cancel deadline stream batch bulk import export csv json yaml proto grpc http
	websocket sse htmx template render markdown sanitize escape csrf cors cookie header body limit rate quota
	billing invoice payment customer account user admin role permission tenant workspace project team owner
	email notification webhook event audit history version upgrade rollout canary flag feature toggle
	frontend backend mobile desktop browser chrome firefox safari latency throughput memory cpu disk network
	kubernetes docker container image registry helm terraform ansible ci pipeline runner artifact cdn dns tls
	certificate oauth jwt saml ldap sso password hash bcrypt argon salt encryption signing verification`)
	rng := rand.New(rand.NewPCG(1, 2))
	words := common
	for i := range 20000 {
		words = append(words, fmt.Sprintf("%.3s%d", common[i%len(common)], i))
	}
	return &benchVocabulary{words: words, rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(words)-1))}
}

func (v *benchVocabulary) sentence() string {
	verbs := []string{"Use", "Move", "Keep", "Drop", "Add", "Split", "Cache", "Index", "Store", "Replace"}
	var b strings.Builder
	b.WriteString(verbs[v.rng.IntN(len(verbs))])
	for range 8 + v.rng.IntN(14) {
		b.WriteString(" ")
		b.WriteString(v.words[v.zipf.Uint64()])
	}
	if v.rng.IntN(10) < 7 {
		b.WriteString(" in the service")
	}
	return b.String()
}

// BenchmarkSearchDecisionRecords100k measures FindDecisionRecords over
// 100,000 records: each iteration is one search, cycling through rare,
// mid-frequency, multi-word and very common queries, half filtered to
// active records. It reports the p50 and p99 latency of all searches and of
// the very common term ("service", in ~70% of records) alone.
//
// It runs on SQLite and on PostgreSQL (sqlite/…, postgres/…) in one run.
func BenchmarkSearchDecisionRecords100k(b *testing.B) {
	engines := map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return filepath.Join(tb.TempDir(), "baton.db") },
		"postgres": func(tb testing.TB) string { return pgtest.FreshDatabase(tb, migrateTemplate) },
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			db, err := Open(context.Background(), engines[name](b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			benchSearchDecisionRecords100k(b, db)
		})
	}
}

func benchSearchDecisionRecords100k(b *testing.B, db *DB) {
	ctx := context.Background()
	v := newBenchVocabulary()
	scopes := []string{"project", "src/auth", "src/api", "src/db", "web", "agent", "store", "infra/k8s"}
	started := time.Now()
	seedDecisionRecords(b, db, 100_000, func(i int) (string, string) {
		return v.sentence(), scopes[v.rng.IntN(len(scopes))]
	})
	b.Logf("seeded 100,000 records in %v", time.Since(started).Round(time.Millisecond))

	queries := []DecisionRecordFilter{
		{Terms: []string{"service"}}, // very common
		{Terms: []string{"postgres"}},
		{Terms: []string{"jwt", "rotation"}},
		{Terms: []string{"cache", "timeout"}},
		{Terms: []string{"tok12345"}}, // long tail
		{Terms: []string{"billing"}, Scope: "src"},
		{Terms: []string{"kubernetes", "canary", "rollout"}},
		{Terms: []string{"service"}, Status: DecisionActive},
		{Terms: []string{"api"}, Status: DecisionActive},
		{Terms: []string{"deploy", "service"}},
		{Terms: []string{"websocket"}},
		{Terms: []string{"api", "token"}, Status: DecisionActive},
	}
	var all, common []time.Duration
	byQuery := map[int][]time.Duration{}
	i := 0
	for b.Loop() {
		qi := i % len(queries)
		f := queries[qi]
		i++
		t0 := time.Now()
		got, err := db.FindDecisionRecords(ctx, f)
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if len(got) == 0 && slices.Equal(f.Terms, []string{"service"}) {
			b.Fatalf("%q found nothing", f.Terms)
		}
		all = append(all, d)
		byQuery[qi] = append(byQuery[qi], d)
		if slices.Equal(f.Terms, []string{"service"}) {
			common = append(common, d)
		}
	}
	ms := func(ds []time.Duration, p float64) float64 {
		if len(ds) == 0 {
			return 0
		}
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	for qi, f := range queries {
		b.Logf("%-30q status=%-6s scope=%-3s p50 %6.2f ms  p99 %6.2f ms", strings.Join(f.Terms, " "), f.Status, f.Scope, ms(byQuery[qi], 0.5), ms(byQuery[qi], 0.99))
	}
	b.ReportMetric(ms(all, 0.50), "p50-ms")
	b.ReportMetric(ms(all, 0.99), "p99-ms")
	b.ReportMetric(ms(common, 0.50), "common-p50-ms")
	b.ReportMetric(ms(common, 0.99), "common-p99-ms")
}

// TestScopeFilterCase pins down how a scope filter treats case, the same on
// both engines: the scope itself as written, the scopes under it whatever
// the case of its ASCII letters (SQLite's LIKE).
func TestScopeFilterCase(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t)
	scopes := []string{"src", "src/auth", "SRC/api", "src/é", "src/É/x"}
	ids := seedDecisionRecords(t, db, len(scopes), func(i int) (string, string) { return "Keep it", scopes[i] })
	tests := []struct {
		scope string
		want  []string
	}{
		{"src", []string{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"SRC", []string{ids[4], ids[3], ids[2], ids[1]}},
		{"src/é", []string{ids[3]}},
	}
	for _, tt := range tests {
		for _, terms := range [][]string{nil, {"keep"}} {
			got, err := db.FindDecisionRecords(ctx, DecisionRecordFilter{Scope: tt.scope, Terms: terms})
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []string
			for _, r := range got {
				gotIDs = append(gotIDs, r.ID)
			}
			slices.Sort(gotIDs)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(gotIDs, want) {
				t.Errorf("scope %q terms %q found %v, want %v", tt.scope, terms, gotIDs, want)
			}
		}
	}
}
