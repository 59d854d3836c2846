package offline

import (
	"strings"
	"testing"
)

// Tests for the wider word lists of issue 13: the verbs an instruction
// opens with, what the user says they will do, choices "for now", and the
// words of a concern.

// TestInstructionVerbsBeyondTheCommonOnes checks that a recommendation
// opening with a verb outside the most common ones ("honour", "vendor",
// "truncate") is a proposal a plain "fine" accepts, even when a word among
// its first ("only") would otherwise make it read as a statement.
func TestInstructionVerbsBeyondTheCommonOnes(t *testing.T) {
	for _, tc := range []struct{ rec, want string }{
		{"I'd honour the upstream header only up to ten minutes.", "Honour the upstream header"},
		{"I'd vendor only the parser file under third_party/yaml.", "Vendor only the parser"},
		{"I'd truncate stored payloads only to 4 KB for the audit table.", "Truncate stored payloads"},
	} {
		x := extractT(t,
			u("What should we do about the payloads?"),
			a(tc.rec),
			u("fine."),
		)
		if !hasDecision(x, tc.want) {
			t.Errorf("%q accepted with \"fine.\": no decision with %q; got:%s", tc.rec, tc.want, decisionList(x))
		}
	}
}

// TestUserSaysWhatWeWillDo checks that "we'll <instruction>" in a reply is
// the user's decision, while "we'll see" and a state are not.
func TestUserSaysWhatWeWillDo(t *testing.T) {
	x := extractT(t,
		u("The nightly import deadlocks with the billing job."),
		a("Moving the import off the billing window removes the overlap. When can it run?"),
		u("We'll run the import at 4am with the on-call engineer watching the locks."),
	)
	checkDecisions(t, x, [][]string{{"Run the import at 4am"}}, nil)

	x = extractT(t,
		u("The nightly import deadlocks with the billing job."),
		a("Moving the import off the billing window removes the overlap. When can it run?"),
		u("We'll see what ops says. We'll probably have more data next week."),
	)
	if len(x.Decisions) != 0 {
		t.Errorf("a reply that decides nothing gave decisions:%s", decisionList(x))
	}
}

// TestChoiceForNow checks that a user's answer that settles something "for
// now" is a decision in their words.
func TestChoiceForNow(t *testing.T) {
	x := extractT(t,
		u("Where should the export files live?"),
		a("Either the shared NFS volume or an object store bucket. Which fits your ops?"),
		u("nfs volume under the app's own directory for now, bucket later."),
	)
	checkDecisions(t, x, [][]string{{"nfs volume", "for now"}}, nil)
}

// TestConsequenceWordsAreConcerns checks that a sentence warning of
// contention, downtime, an outage, a cost or collisions is a risk, and
// that a design note that only mentions a word like "cost" in passing
// stays out.
func TestConsequenceWordsAreConcerns(t *testing.T) {
	got := risksOf(t,
		u("Plan the schema change for the ledger tables."),
		a("Adding the column with a default rewrites the table, which means about twenty minutes of downtime on the primary.\n\n"+
			"Two services both writing the same cache keys will collide, and the last writer wins.\n\n"+
			"Running the backfill in one transaction holds row locks for the whole run, so the checkout writers starve."),
	)
	checkRisks(t, got, []string{"downtime on the primary", "will collide", "checkout writers starve"}, nil)
}

// TestMissingSafeguardIsAConcern checks that "Without X, <what goes
// wrong>" is a risk, and that "Without X, do Y" (advice) is not.
func TestMissingSafeguardIsAConcern(t *testing.T) {
	got := risksOf(t,
		u("Move the mailer to the new job runner."),
		a("Without a retry policy on the base job class, every transient SMTP error becomes a dead letter nobody looks at.\n\n"+
			"Without a staging queue, run the first batch by hand."),
	)
	checkRisks(t, got, []string{"every transient SMTP error becomes a dead letter"}, []string{"run the first batch"})
}

// TestMoreConsequenceWords checks the words of concerns that name what
// breaks: truncated values, unreliable calls, unmaintained libraries,
// use-after-free, writes that are not atomic.
func TestMoreConsequenceWords(t *testing.T) {
	got := risksOf(t,
		u("Review the status page change."),
		a("Names longer than 64 bytes get truncated on the status page.\n\n"+
			"The vendor's scroll-to-end call is unreliable on lazy lists.\n\n"+
			"That date picker is largely unmaintained these days.\n\n"+
			"Freeing the buffer while the reporter thread reads it is a use-after-free.\n\n"+
			"Writing over the live config file is not atomic.\n\n"+
			"While the broker is down every publish just hangs until it comes back.\n\n"+
			"Rotating the master key leaves every stored token undecryptable and all users locked out.\n\n"+
			"Through the pooler in transaction mode the notifications never arrive.\n\n"+
			"A report longer than 20 seconds gets cut off when its pod shuts down."),
	)
	checkRisks(t, got, []string{"truncated", "unreliable", "unmaintained", "use-after-free", "not atomic", "just hangs", "locked out", "never arrive", "cut off"}, nil)
}

// TestVerbThenSubjectVerb checks that a word that can instruct ("fetch",
// "cache") opening a sentence followed by a verb said of it ("reads",
// "stores") is the sentence's subject, no instruction.
func TestVerbThenSubjectVerb(t *testing.T) {
	for lc, want := range map[string]bool{
		"fetch reads the users table on every diff": false,
		"cache stores the whole response":           false,
		"cache the token for ten minutes":           true,
		"vendor only the parser":                    true,
		"fetch the rows in pages of 500":            true,
	} {
		if got := imperative(lc); got != want {
			t.Errorf("imperative(%q) = %v, want %v", lc, got, want)
		}
	}
}

// TestMoreFileKinds checks file kinds beyond the common ones: RBS and
// Bicep files, DVC pointers, Astro routes with a parameter, extensionless
// tool files (Steepfile), and a tool's config in its dot folder (but not a
// folder in it); and that files said to be "not touched", to "stay as they
// are" or to be "reused as is" are left out.
func TestMoreFileKinds(t *testing.T) {
	x := extractT(t,
		u("Plan the change."),
		a("Files:\n- `sig/app/rule.rbs` — new\n- `infra/queue.bicep` — add the session queue\n- `data/raw.dvc` — tracks the images\n- `src/pages/news/[slug].astro` — GROQ query\n- `Steepfile` — new\n- `.dvc/config` — the remote\n\n"+
			"The cache lives in `.dvc/cache`. Not touched: `config/base.py`, `jobs/tasks.py`. `lib/queue.h` is reused as is, and `app/Note.kt` stays as it is."),
	)
	got := pathsOf(x)
	want := []string{"sig/app/rule.rbs", "infra/queue.bicep", "data/raw.dvc", "src/pages/news/[slug].astro", "Steepfile", ".dvc/config"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("files=%q\nwant  %q", got, want)
	}
}

// TestConditionalConcern checks that a condition with what will then go
// wrong ("If a new record joins, the key will change") is a risk, and that
// one about what we will do or what something will be is not.
func TestConditionalConcern(t *testing.T) {
	got := risksOf(t,
		u("How stable is customer_key?"),
		a("If a record with a smaller id joins a cluster, the customer_key will change for every row in it.\n\n"+
			"If the import finishes early, we will start the backfill.\n\n"+
			"Once the index exists, the query will be fast."),
	)
	checkRisks(t, got, []string{"customer_key will change"}, []string{"start the backfill", "will be fast"})
}

// TestCueWordInAPathIsNoCue checks that a cue word that is part of a path
// ("outside keep/") does not make a user's report a decision.
func TestCueWordInAPathIsNoCue(t *testing.T) {
	x := extractT(t,
		u("We want to version our training data with DVC."),
		a("Use a DVC remote on S3 with a shared cache. Which bucket?"),
		u("bad news: just found out acme-ml-shared has a lifecycle rule that expires everything outside keep/ after 90 days."),
	)
	checkDecisions(t, x, nil, [][]string{{"lifecycle rule"}})
}

// TestFileNamedLikeAVerbIsNoInstruction checks that a sentence opening
// with a file whose name is a verb ("run.sh sources …", "deploy.py
// imports …") states a fact and is no instruction.
func TestFileNamedLikeAVerbIsNoInstruction(t *testing.T) {
	for _, s := range []string{"run.sh sources /opt/etl/.env for the api keys", "deploy.py imports it at the top", "cache/keys.go holds the prefix"} {
		if imperative(s) {
			t.Errorf("imperative(%q) = true, want false: it opens with a file", s)
		}
	}
	if !imperative("run the backfill at night") {
		t.Error(`imperative("run the backfill at night") = false`)
	}
	x := extractT(t, u("Our ELT runs from cron. run.sh sources /opt/etl/.env for the API keys and calls python -m etl.<name>."))
	checkDecisions(t, x, nil, [][]string{{"sources /opt/etl/.env"}})
}

// TestPutOffIsNoDecision checks that a clause that puts something off
// ("partitions later") decides nothing, while the choice beside it does.
func TestPutOffIsNoDecision(t *testing.T) {
	x := extractT(t,
		u("Our ELT scripts run from cron."),
		a("A retry policy on the loader assets retries after 2, 6 and 14 minutes. Later you may want daily partitions for backfills."),
		u("Retry the loaders only. Partitions later, fine for now without."),
	)
	checkDecisions(t, x, [][]string{{"retry policy on the loader"}}, [][]string{{"Partitions later"}})
}
