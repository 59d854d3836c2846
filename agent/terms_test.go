package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

func TestWords(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", []string{}},
		{"Use JWT, not cookies!", []string{"use", "jwt", "not", "cookies"}},
		{"We don’t use 'quoted' words", []string{"we", "don't", "use", "quoted", "words"}},
		{"src/auth/jwt.ts is v2", []string{"src", "auth", "jwt", "ts", "is", "v2"}},
		{"Éviter l'écueil", []string{"éviter", "l'écueil"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, agent.Words(tt.text)); diff != "" {
			t.Errorf("Words(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ w, want string }{
		{"sessions", "session"},
		{"tokens", "token"},
		{"process", "process"}, // a double s stays
		{"jobs", "jobs"},       // too short to be sure it is a plural
		{"cache", "cache"},
	}
	for _, tt := range tests {
		if got := agent.Stem(tt.w); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.w, got, tt.want)
		}
	}
}

func TestTermsAndSearchTerms(t *testing.T) {
	text := "Should we really keep the sessions in Redis? I don't think so: sessions go in Postgres."
	if diff := cmp.Diff([]string{"session", "redi", "session", "go", "postgre"}, agent.Terms(text)); diff != "" {
		t.Errorf("Terms (-want +got):\n%s", diff)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{text, []string{"redis", "sessions", "go", "postgres"}},                   // each once, in the order written, not stemmed
		{"the of and", []string{"the", "of", "and"}},                              // only stop words: they are the search
		{"a b c d e f g h i j", []string{"b", "c", "d", "e", "f", "g", "h", "j"}}, // the last eight
		{"jwt " + strings.Repeat("x", 65), []string{"jwt"}},                       // a word too long to look up
		{`cache" OR "planets`, []string{"cache", "planets"}},                      // no query syntax survives
		{"What about the sessions?", []string{"sessions"}},                        // the words of a question that matter
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, agent.SearchTerms(tt.query)); diff != "" {
			t.Errorf("SearchTerms(%q) (-want +got):\n%s", tt.query, diff)
		}
	}
}

// TestTokenizerIsShared checks that capture and query read words the same
// way: a stop word neither relates two texts in a capture nor is looked up
// in a search, and plurals relate to singulars on both sides.
func TestTokenizerIsShared(t *testing.T) {
	for _, w := range []string{"the", "should", "really", "keep", "things", "don't", "instead"} {
		if !agent.IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = false", w)
		}
		if got := agent.Terms("Redis " + w); !cmp.Equal(got, []string{"redi"}) {
			t.Errorf("Terms(%q) = %q, want only redi", "Redis "+w, got)
		}
		if got := agent.SearchTerms("Redis " + w); !cmp.Equal(got, []string{"redis"}) {
			t.Errorf("SearchTerms(%q) = %q, want only redis", "Redis "+w, got)
		}
	}

	ctx := context.Background()
	db := storetest.MustOpen(t)
	sn := storetest.FrozenSnapshot(t, db, storetest.Items{
		Decisions: storetest.Decisions("Cache user sessions in Redis"),
		Files: []store.FileRefInput{
			{Path: "src/web/app.go", Context: "Session caches live here"},                  // two subject words, as plural and singular
			{Path: "docs/notes.md", Context: "We should really keep these things in mind"}, // stop words only
		},
	})
	res, err := agent.CaptureSnapshot(ctx, db, sn, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := db.FindDecisionRecordByID(ctx, res.Records[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range rec.Files {
		files = append(files, f.Target)
	}
	if diff := cmp.Diff([]string{"src/web/app.go"}, files); diff != "" {
		t.Errorf("files of the decision (-want +got):\n%s", diff)
	}
	if rec.Scope != "src/web" {
		t.Errorf("Scope=%q, want src/web", rec.Scope)
	}

	for _, q := range []string{"What about the sessions?", "session cache", "the user session"} {
		got, err := db.FindDecisionRecords(ctx, store.DecisionRecordFilter{Terms: agent.SearchTerms(q)})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != rec.ID {
			t.Errorf("search %q found %d records, want the sessions decision", q, len(got))
		}
	}
}
