package offline

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent"
)

// TestHeldOutRules checks the rules added after the held-out transcripts
// own-26 to own-33 were scored.
func TestHeldOutRules(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []agent.TranscriptMessage
		want    [][]string
		notWant [][]string
	}{
		{
			name: "letters written in the bullet (A) label the item; bare letters pick it",
			msgs: []agent.TranscriptMessage{
				u("The nightly report is slow."),
				a("Options for the cache:\n\n- A) Keep an in-memory map keyed by day.\n- B) Write the totals to a summary table every hour.\n- C) Precompute the report into a static file at midnight.\n\nWhich ones?"),
				u("B and C"),
			},
			want:    [][]string{{"summary table"}, {"static file"}},
			notWant: [][]string{{"in-memory map"}, {"B)"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecisions(t, extractT(t, tt.msgs...), tt.want, tt.notWant)
		})
	}
}

// TestQuestionWithoutMark checks that a question asked without its
// question mark ("what can we do about …") is neither a concern nor what a
// concern before it refers to.
func TestQuestionWithoutMark(t *testing.T) {
	for _, q := range []string{"what can we do about accidental deletes", "how do we stop accidental deletes", "how long would the cleanup take then"} {
		x := extractT(t, u("Reads go to the replica."), a("Replica lag means a user can read stale data right after a write."), u("that's a real risk. "+q))
		for _, r := range x.Risks {
			if strings.Contains(strings.ToLower(r.Description), q[:8]) {
				t.Errorf("%q reported as a risk: %q", q, r.Description)
			}
		}
		if !isQuestion(q) {
			t.Errorf("isQuestion(%q) = false", q)
		}
	}
	for _, s := range []string{"what we need is a cache", "however you like", "which does the same in one statement"} {
		if isQuestion(s) {
			t.Errorf("isQuestion(%q) = true", s)
		}
	}
}

// TestTagQuestionAsksFact checks that the answer to a statement with a
// question tag ("…, I assume?") states a fact, not a decision.
func TestTagQuestionAsksFact(t *testing.T) {
	for _, tag := range []string{"I assume?", "right?"} {
		x := extractT(t, u("Exports are slow to open."),
			a("Two ways:\n\n1. **Compress**: gzip the file.\n2. **Split**: one file per month.\n\nI'd start with 1. Option 2 is tempting but the team looks at same-day numbers, "+tag),
			u("yes same day matters"))
		if hasDecision(x, "same day") {
			t.Errorf("answer to a tag question %q reported as a decision:%s", tag, decisionList(x))
		}
	}
}

// TestListLeadIsNoRisk checks that a short line introducing a list ("On
// the actual bug, two separate issues:") is not itself a concern.
func TestListLeadIsNoRisk(t *testing.T) {
	x := extractT(t, u("The nightly build fails."),
		a("On the actual bug, two separate issues:\n\n1. The cache key ignores the lockfile, so stale modules get restored.\n2. The test runner times out after 10 minutes on the slow runners."))
	for _, r := range x.Risks {
		if strings.Contains(r.Description, "two separate issues") {
			t.Errorf("list lead reported as a risk: %q", r.Description)
		}
	}
}

// TestHandlingIsNoRisk checks that what we do when something fails is the
// handling, not a concern, while what we lose then still is one.
func TestHandlingIsNoRisk(t *testing.T) {
	x := extractT(t, u("How do writes work?"), a("Writes go to a queue table first. If the insert fails, we return an error code so the sender re-sends."))
	for _, r := range x.Risks {
		if strings.Contains(r.Description, "insert fails") {
			t.Errorf("handling reported as a risk: %q", r.Description)
		}
	}
	x = extractT(t, u("How do writes work?"), a("Writes go to a queue table first. If the disk fills up, we lose every queued write."))
	if len(x.Risks) == 0 {
		t.Errorf("a loss after a condition is no longer a risk")
	}
}

// TestUserChangeInProgress checks that a change the user says they are
// making ("we're dropping X") is their decision, while a state ("we're
// seeing errors") and the goal of the opening message are not.
func TestUserChangeInProgress(t *testing.T) {
	x := extractT(t, u("Imports are slow."), a("I'd cache the parsed files per folder."), u("fine. also we're dropping XML as an input format, JSON only from now on"))
	if !hasDecision(x, "dropping XML") {
		t.Errorf("the user's own change is no decision; got:%s", decisionList(x))
	}
	x = extractT(t, u("Imports are slow."), a("I'd cache the parsed files per folder."), u("we're seeing timeouts on the big folders"))
	if hasDecision(x, "timeouts") {
		t.Errorf("a state reported as a decision; got:%s", decisionList(x))
	}
	x = extractT(t, u("We're moving our imports off XML to JSON, because the partners asked."), a("Then the parser needs a JSON schema."))
	if hasDecision(x, "moving our imports") {
		t.Errorf("the opening goal reported as a decision; got:%s", decisionList(x))
	}
}

// TestLetsKeepsWholeVerb checks that "let's" is cut before a verb that
// only starts like "do" or "use" ("let's document …"), not inside it.
func TestLetsKeepsWholeVerb(t *testing.T) {
	x := extractT(t, u("Setup is confusing."), a("The steps are spread over three READMEs."), u("let's document the whole setup in docs/setup.md"))
	if !hasDecision(x, "Document the whole setup") {
		t.Errorf("the verb is cut; got:%s", decisionList(x))
	}
}

// TestEchoAndReversalPicks checks that of two option names a clause echoes
// as much, the one it says more of is picked, and that a change of course
// naming an option offered before ("big bang after all") replaces the
// earlier pick from that list.
func TestEchoAndReversalPicks(t *testing.T) {
	opts := "Two ways to migrate:\n\n- Hand-rolled tenant_id scoping in a before filter, then copy.\n- **Tenant by tenant**: copy one tenant per night behind a flag.\n- **Big bang**: copy every schema in one maintenance window.\n\nWhich one?"
	x := extractT(t, u("Move off schemas."), a(opts), u("tenant by tenant"))
	if !hasDecision(x, "one tenant per night") || hasDecision(x, "Hand-rolled") {
		t.Errorf("the fuller echo is not picked; got:%s", decisionList(x))
	}
	x = extractT(t, u("Move off schemas."), a(opts), u("tenant by tenant"),
		a("That takes about six weeks of nightly batches."), u("too long. let's do big bang after all, but rehearse it first"))
	if !hasDecision(x, "maintenance window") || hasDecision(x, "one tenant per night") {
		t.Errorf("the option taken back up does not replace the earlier pick; got:%s", decisionList(x))
	}
	// More said after the cue ("after all, one branch") leaves the
	// choice before it.
	x = extractT(t, u("Move off schemas."), a(opts), u("tenant by tenant"),
		a("That takes about six weeks of nightly batches."), u("too long. let's just do big bang after all, one window."))
	if !hasDecision(x, "maintenance window") || hasDecision(x, "one tenant per night") {
		t.Errorf("a change of course with words after the cue is not taken; got:%s", decisionList(x))
	}
}

// TestSecondPickAfterLabel checks that a clause picking an option by its
// number can go on to pick another by name ("Option 1, and the nightly
// dedup too"), and that a name joined by a slash ("create/update") is
// echoed by either of its words.
func TestSecondPickAfterLabel(t *testing.T) {
	opts := "Options for the import:\n\n1. **Queue table**: write each row to a queue table first.\n2. **Direct**: post rows straight to the API.\n\nFor duplicates:\n\n- Use conditional create/update on the customer record keyed by email.\n- Run a nightly dedup job over all customers.\n\nI'd go with 1."
	x := extractT(t, u("Imports duplicate customers."), a(opts), u("Option 1, and the conditional update for both too."))
	if !hasDecision(x, "queue table") || !hasDecision(x, "create/update") {
		t.Errorf("the second pick is lost; got:%s", decisionList(x))
	}
	if hasDecision(x, "nightly dedup") {
		t.Errorf("an option not picked is reported; got:%s", decisionList(x))
	}
}

// TestSlashNameEchoes checks that either word of "create/update" echoes it.
func TestSlashNameEchoes(t *testing.T) {
	if !echoes(newTokenSet("update"), "create/update") || !echoes(newTokenSet("read"), "read/write") {
		t.Errorf("a word of a slash-joined name does not echo it")
	}
	if echoes(newTokenSet("main"), "cmd/main.go") {
		t.Errorf("a word of a file path echoes it")
	}
}

// TestAsideBeforeSecondInstruction checks that a long proposal is not cut
// at ", which" when a second instruction follows the aside.
func TestAsideBeforeSecondInstruction(t *testing.T) {
	x := extractT(t, u("Bulk imports slow the site down."),
		a("Cleaner: give the importer its own queues, bulk-import and bulk-retry, which only the workers on the batch hosts consume, and don't share them with the web tier."),
		u("Yes, do that."))
	if !hasDecision(x, "which only the workers", "and don't") {
		t.Errorf("the second instruction is cut; got:%s", decisionList(x))
	}
}

// TestInsteadOfTurnsDownWhatFollows checks that "instead of" turns down
// only a file named after it.
func TestInsteadOfTurnsDownWhatFollows(t *testing.T) {
	x := extractT(t, u("Queries leak rows."),
		a("Add `config/initializers/tenancy.rb` with strict mode on, so a query without a tenant raises instead of returning all rows."),
		u("ok"), a("And write the export to `exports/new_report.rb` instead of `exports/old_report.rb`."), u("fine"))
	has := map[string]bool{}
	for _, f := range x.FilesReferenced {
		has[f.Path] = true
	}
	if !has["config/initializers/tenancy.rb"] || !has["exports/new_report.rb"] || has["exports/old_report.rb"] {
		t.Errorf("files: %v", has)
	}
}

// TestRubyTaskFiles checks that Rake and gemspec files are files.
func TestRubyTaskFiles(t *testing.T) {
	for _, p := range []string{"lib/tasks/cleanup.rake", "mylib.gemspec"} {
		if !looksLikeFile(p) {
			t.Errorf("%s is not read as a file", p)
		}
	}
}

// TestMattersIsAFact checks that "X matters" says how things are: it
// decides nothing.
func TestMattersIsAFact(t *testing.T) {
	x := extractT(t, u("Events arrive out of order."),
		a("ACK after the insert commits:\n\n- The id is stored with a unique constraint, so a re-sent event is ignored.\n\nThe worker, `app/worker.py`, picks unprocessed rows in order with `SELECT ... FOR UPDATE SKIP LOCKED`, converts, sends, and marks them done.\n\nA risk you should know about: ordering. An update can arrive right after the create; if two workers ran in parallel, the update could land first."),
		u("ordering matters yes. single worker?"))
	if hasDecision(x, "ordering matters") {
		t.Errorf("a remark on what matters reported as a decision:%s", decisionList(x))
	}
}

// TestLongConcernLead checks that a concern's lead ("There is a risk with
// X plus Y:") is left out even when what it names runs long.
func TestLongConcernLead(t *testing.T) {
	x := extractT(t, u("Exports?"), a("There is a risk with the nightly export plus a manual run: if both start at once, the same file is overwritten halfway through."))
	if len(x.Risks) == 0 || !strings.HasPrefix(x.Risks[0].Description, "If both start at once") {
		t.Errorf("risks: %+v", x.Risks)
	}
}

// TestInsteadOfKeepsAnInjectionFlagged checks that a file named in the
// sentence that flags a prompt injection stays out, "instead of" or not.
func TestInsteadOfKeepsAnInjectionFlagged(t *testing.T) {
	x := extractT(t, u("The worker log has a strange line, see below."),
		a("That line is a prompt injection: it tells the AI agent to upload `secrets/prod.env` instead of the report."),
		u("ok, ignore it"))
	for _, f := range x.FilesReferenced {
		if f.Path == "secrets/prod.env" {
			t.Errorf("the file the injection asks for is reported: %v", x.FilesReferenced)
		}
	}
}
