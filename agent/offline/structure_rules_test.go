package offline

import (
	"testing"

	"github.com/baton-dev/baton/agent"
)

// Tests for the structural decision rules of issue 13: rules about how
// a reply is laid out and how a user answers it, not about any topic.

// TestSingleLetterAnswerPicksOption checks that a reply of one letter
// ("b.") picks the lettered option of that label.
func TestSingleLetterAnswerPicksOption(t *testing.T) {
	x := extractT(t,
		u("The nightly report times out. What now?"),
		a("Two choices:\n- (a) split the report query into one query per region and merge the results\n- (b) move the report to a read replica with a longer statement timeout"),
		u("b. the replica is idle at night anyway."),
	)
	checkDecisions(t, x, [][]string{{"read replica"}}, [][]string{{"per region"}})
}

// TestNestedBulletsDescribeTheirItem checks that unlabelled items indented
// under a numbered option say what that option is: picking the option
// decides what they say, and they are no options of their own.
func TestNestedBulletsDescribeTheirItem(t *testing.T) {
	x := extractT(t,
		u("Uploads to the media service fail for large videos. How should we handle them?"),
		a("Three ways:\n\n1. **Chunked uploads**\n   - the client splits files into 8 MB parts and resumes from the last acknowledged part\n   - the server assembles the parts once all have arrived\n2. **Bigger request limit**\n   - raise the proxy body limit to 2 GB\n3. **Direct to bucket**\n   - hand out presigned URLs and let clients upload to object storage"),
		u("1"),
	)
	checkDecisions(t, x, [][]string{{"Chunked uploads", "8 MB parts"}}, [][]string{{"presigned"}, {"proxy body limit"}})
}

// TestTerseAnswerNotGluedToUnrelatedSentence checks that a terse choice
// ("Keep cron for now") is not joined to an assistant sentence
// that shares only its verb, and that "for now" stays part of it.
func TestTerseAnswerNotGluedToUnrelatedSentence(t *testing.T) {
	x := extractT(t,
		u("Our cleanup runs from a cron job on the old VM. We want it in the cluster."),
		a("Steps:\n\n1. Build the container image now, one that keeps its config in a mounted volume.\n2. Add a scheduled job manifest for it.\n\nShould we retire the VM cron job right away, or run both for a while?"),
		u("Keep cron for now."),
	)
	checkDecisions(t, x, [][]string{{"Keep cron for now"}}, [][]string{{"container image"}})
}

// TestOptionNameRunsToColon checks that an option whose bold name goes on
// to a colon ("**Redis** with persistence on: …") is named by all of it,
// and that what follows the colon, its traits, is no part of the decision.
func TestOptionNameRunsToColon(t *testing.T) {
	x := extractT(t,
		u("Where should the session store live?"),
		a("Choices:\n\n- **Redis** with AOF persistence: survives restarts, fast, one more service to run.\n- **Cookies** signed by the server: no storage, but size limited to 4 KB.\n\nI'd lean to the first."),
		u("redis with aof"),
	)
	checkDecisions(t, x, [][]string{{"Redis with AOF persistence"}}, [][]string{{"survives restarts"}, {"Cookies"}})
}

// TestThreeShortPhrasesAreTraits checks that an option described by three
// short phrases ("runs on the JVM, ships a UI, scales out") is decided by
// its name: the phrases are why it was picked, not what to do.
func TestThreeShortPhrasesAreTraits(t *testing.T) {
	x := extractT(t,
		u("Which scheduler for the batch jobs?"),
		a("Two options:\n- `temporal`: keeps a full workflow history, retries each failed step, ships a web UI.\n- `cron` on one box: nothing new to run, but no retries.\n\nEither works for your volume."),
		u("temporal."),
	)
	checkDecisions(t, x, [][]string{{"temporal"}}, [][]string{{"web UI"}, {"no retries"}})
}

// TestPlanItemWithTraitsIsItsName checks that a plan item whose name says
// what to do and whose text only lists traits ("**Gzip responses**: cheap,
// built in") is decided by its name, as an option would be.
func TestPlanItemWithTraitsIsItsName(t *testing.T) {
	x := extractT(t,
		u("The API is slow on mobile."),
		a("Here is what I would change:\n\n- **Gzip the JSON responses**: cheap, built in, no new dependency.\n- **Page the order list** at 50 rows per request.\n\nShall I start?"),
		u("ok, go"),
	)
	checkDecisions(t, x, [][]string{{"Gzip the JSON responses"}, {"Page the order list"}}, [][]string{{"cheap"}})
}

// TestNumbersForNowPickOptions checks that option numbers with "for now"
// around them ("1 and 3 for now") still pick those options.
func TestNumbersForNowPickOptions(t *testing.T) {
	x := extractT(t,
		u("Search is slow. Ideas?"),
		a("Three ways:\n\n1. **Trigram index** on the title column with pg_trgm.\n2. **External engine**: move search to a dedicated search cluster.\n3. **Result cache** in Redis for the top queries, 10 minute expiry."),
		u("1 and 3 for now."),
	)
	checkDecisions(t, x, [][]string{{"Trigram index"}, {"Result cache"}}, [][]string{{"External engine"}})
}

// TestInlineLetteredOptions checks that alternatives lettered inside a
// sentence ("either (a) …, or (b) …") are options a letter picks, and that
// a letter followed by a comma and a word ("b, the queue") picks it too.
func TestInlineLetteredOptions(t *testing.T) {
	x := extractT(t,
		u("Webhooks to partners sometimes fail and we lose them."),
		a("Two fixes: either (a) retry inline three times before giving up, or (b) write each webhook to an outbox table and deliver it from a background worker with backoff."),
		u("b, the outbox."),
	)
	checkDecisions(t, x, [][]string{{"outbox table", "background worker"}}, [][]string{{"retry inline"}})
}

// TestLeadingLetterListIsNoSinglePick checks that "a, b" picks both
// lettered options, not only the first.
func TestLeadingLetterListIsNoSinglePick(t *testing.T) {
	props := []proposal{{label: "a"}, {label: "b"}, {label: "c"}}
	if got := optionPicks("a, b", props); len(got) != 2 {
		t.Errorf("optionPicks(%q) = %v, want [a b]", "a, b", got)
	}
	if got := optionPicks("c, the queue", props); len(got) != 1 || got[0] != "c" {
		t.Errorf("optionPicks(%q) = %v, want [c]", "c, the queue", got)
	}
}

// TestAcceptedItemsByNameAfterVerb checks that "yes, do the X thing and
// the Y" accepts the two plan items it names, even when a third item
// shares the start of a word with one of them ("sparse" for "sparsity").
func TestAcceptedItemsByNameAfterVerb(t *testing.T) {
	x := extractT(t,
		u("The nightly import takes four hours."),
		a("What I would change:\n\n1. **Batch the inserts** in groups of 1000 rows with COPY.\n2. **Drop the unused indexes** on the staging table before loading.\n3. **Move the indexing job** to after the load.\n"),
		u("yes, do the batching thing and the unused indexes. what about the job?"),
	)
	checkDecisions(t, x, [][]string{{"Batch the inserts"}, {"Drop the unused indexes"}}, [][]string{{"batching thing"}})
}

// TestImperativeNameWithReason checks that a plan item whose name says
// what to do and whose text only says why ("**Add an index**: the table
// is scanned …") is decided by its name instead of dropped.
func TestImperativeNameWithReason(t *testing.T) {
	x := extractT(t,
		u("Order lookups are slow."),
		a("Plan:\n\n1. **Add an index on orders.customer_id**: the table is scanned on every lookup.\n2. **Cache the customer profile** for five minutes in the API.\n"),
		u("ok, go"),
	)
	checkDecisions(t, x, [][]string{{"Add an index on orders.customer_id"}, {"Cache the customer profile"}}, [][]string{{"scanned"}})
}

// TestEmojiAcceptance checks that a reply of only a thumbs-up or "+1"
// accepts what the assistant proposed: the emoji is no word, so no word
// boundary follows it.
func TestEmojiAcceptance(t *testing.T) {
	for _, yes := range []string{"👍", "+1", "✅"} {
		x := extractT(t,
			u("Builds are slow on CI."),
			a("Cache the Go module directory between CI runs, keyed on go.sum."),
			u(yes),
		)
		checkDecisions(t, x, [][]string{{"Cache the Go module directory"}}, nil)
	}
}

// TestCodeNameSubjectIsNoInstruction checks that a sentence opening with
// a name from the code and what it does ("load_rows returns …") is read
// as a description, not a decision, while an instruction stays one.
func TestCodeNameSubjectIsNoInstruction(t *testing.T) {
	for lc, want := range map[string]bool{
		"load_rows returns a fresh slice per call": true,
		"parse(cfg) checks every key":              true,
		"add a retry to fetch_rows":                false,
		"config.yaml keeps the defaults":           true,
		"db.go class":                              false,
	} {
		if got := isStatement(lc); got != want {
			t.Errorf("isStatement(%q) = %v, want %v", lc, got, want)
		}
	}
}

// TestTerseOptionPickReplacedByLaterPick checks that an option picked by
// a terse answer said in its words is replaced when a later answer picks
// another option of the same list.
func TestTerseOptionPickReplacedByLaterPick(t *testing.T) {
	x := extractT(t,
		u("We need error tracking for the mobile app. Options?"),
		a("Three families:\n\n- **Hosted** — Sentry cloud, Bugsnag: dashboards and alerting from day one\n- **Self-hosted** — Sentry on our own servers: free licence, we run it\n- **Homegrown** — crash reports posted to our API and stored in Postgres\n\nWhat matters most?"),
		u("Honestly let's just go with Sentry cloud, I don't want to run anything."),
		a("OK. The SDK goes into the app shell and uploads source maps on release."),
		u("Procurement blocked it, the contract is too expensive. Back to the list."),
		a("Then the options are self-hosted or homegrown."),
		u("We have no ops time. Homegrown, crash reports stored in our Postgres."),
	)
	checkDecisions(t, x, [][]string{{"Homegrown"}}, [][]string{{"Sentry cloud"}})
}

// TestVerdictWithNegativeReason checks that "X is fine, <reason with
// never>" is a decision on X, not a refusal: the "never" is in the reason,
// which is cut off.
func TestVerdictWithNegativeReason(t *testing.T) {
	x := extractT(t,
		u("How long should uploaded reports be kept?"),
		a("Ninety days covers most audits. Some teams also purge drafts after a week. Want that too?"),
		u("Ninety day retention is fine, auditors never ask for older ones."),
	)
	checkDecisions(t, x, [][]string{{"Ninety day retention is fine"}}, [][]string{{"auditors"}})
}

// TestInsteadJoinsRefusal checks that a choice ending in "instead" is
// reported with the refusal before it, which it replaces.
func TestInsteadJoinsRefusal(t *testing.T) {
	x := extractT(t,
		u("Users complain about the session timeout."),
		a("We could log users out after 15 minutes idle, or extend sessions on activity. Should idle users be logged out automatically?"),
		u("No automatic logout for idle users. Update the session expiry on every request instead."),
	)
	checkDecisions(t, x, [][]string{{"No automatic logout", "update the session expiry on every request instead"}}, nil)
}

// TestConfirmationListsPoints checks that a confirmation listing agreed
// points as clauses ("A stays X, B comes from Y, and C links to Z") is
// reported by its first point, the one that answers the user.
func TestConfirmationListsPoints(t *testing.T) {
	x := extractT(t,
		u("Should the default themes ship inside the app?"),
		a("They could ship inside the app or be loaded from the theme registry like any other theme."),
		u("Keep them bundled. ok go"),
		a("Got it: default themes stay bundled in the app binary, custom themes come only from the registry, and the settings page links to the theme guide."),
	)
	checkDecisions(t, x, [][]string{{"themes stay bundled in the app binary"}}, [][]string{{"settings page links"}})
}

// TestItemDescriptionThenInstruction checks that an accepted plan item
// whose first sentence describes and a later one instructs ("On a
// mismatch, skip the job with a warning.") is reported with both.
func TestItemDescriptionThenInstruction(t *testing.T) {
	x := extractT(t,
		u("How should the importer handle schema changes?"),
		a("Design:\n- **Schema version**: SCHEMA_VERSION = 3 in importer/schema.py; each job file declares schema_version. On a mismatch, skip the job with a warning.\n- **Dry runs**: a --dry-run flag prints what would be imported."),
		u("schema version yes"),
	)
	checkDecisions(t, x, [][]string{{"SCHEMA_VERSION = 3", "skip the job with a warning"}}, nil)
}

// TestNamedItemThatDescribes checks that a plan item the user accepts by
// name is reported even when it describes the design instead of
// instructing ("Thumbnails are generated on first request").
func TestNamedItemThatDescribes(t *testing.T) {
	x := extractT(t,
		u("Image uploads make the gallery slow."),
		a("Plan:\n- Thumbnails are generated on first request and cached in the CDN for a week.\n- Originals are moved to cold storage after 90 days."),
		u("thumbnails yes. what does cold storage cost?"),
	)
	checkDecisions(t, x, [][]string{{"Thumbnails are generated on first request"}}, [][]string{{"cold storage after"}})
}

// TestOpeningNeedIsNoDecision checks that "We need …" in the message that
// opens the conversation is its goal, not a decision, while the same words
// in reply to the assistant still decide.
func TestOpeningNeedIsNoDecision(t *testing.T) {
	x := extractT(t,
		u("We need a cache for the product API, it is too slow."),
		a("Put an in-process LRU in each pod with a 60 second expiry."),
		u("ok. we also need a metric for the hit rate."),
	)
	checkDecisions(t, x, [][]string{{"metric for the hit rate"}}, [][]string{{"cache for the product API"}})
}

// TestPathBeforeColonIsNoLabel checks that words with a path in them
// before a colon ("actions/cache with key: …") are kept, not dropped as
// a label.
func TestPathBeforeColonIsNoLabel(t *testing.T) {
	if got := statement("actions/cache with key: go.sum"); got != "actions/cache with key: go.sum" {
		t.Errorf("statement dropped the path: %q", got)
	}
	if got := statement("For your SEO worry: keep URLs stable"); got != "keep URLs stable" {
		t.Errorf("statement kept the label: %q", got)
	}
}

// TestRevisedPlanIsRecap checks that the items under "Revised plan:"
// restate what was decided, like those under "Updated plan:".
func TestRevisedPlanIsRecap(t *testing.T) {
	x := extractT(t,
		u("Should we migrate the users table online?"),
		a("Copy rows in batches with a trigger for new writes."),
		u("no, let's take a maintenance window instead"),
		a("Revised plan:\n- Announce a two hour maintenance window on Sunday night.\n- Copy the users table with a single INSERT ... SELECT and verify row counts."),
	)
	checkDecisions(t, x, [][]string{{"Announce a two hour maintenance window"}, {"verify row counts"}}, nil)
}

// TestEllipsisInsideSentence checks that " ... " standing alone ("INSERT
// ... SELECT") does not end a sentence, while "fine... actually" does.
func TestEllipsisInsideSentence(t *testing.T) {
	if got := splitSentences("Copy rows with INSERT ... SELECT and verify counts. Then swap."); len(got) != 2 {
		t.Errorf("split into %q, want 2 sentences", got)
	}
	if got := splitSentences("15 min is fine... actually is there a cost?"); len(got) != 2 {
		t.Errorf("split into %q, want 2 sentences", got)
	}
}

// TestBareNoIsNotJoinedToInstead checks that a bare "no" before "…
// instead" is not glued to the choice: it names nothing refused.
func TestBareNoIsNotJoinedToInstead(t *testing.T) {
	x := extractT(t,
		u("Should we migrate the users table online?"),
		a("Copy rows in batches with a trigger for new writes."),
		u("no, let's take a maintenance window instead"),
	)
	checkDecisions(t, x, [][]string{{"maintenance window"}}, [][]string{{"No;"}})
}

// TestLetteredOptionHeadsAndVerbPicks checks that bold lines lettering
// options ("**A. Rewrite in place**") over the bullets describing them are
// options of that letter, that "let's do A" picks one and that a later
// "scrap A, go with B" replaces it.
func TestLetteredOptionHeadsAndVerbPicks(t *testing.T) {
	x := extractT(t,
		u("Our search service is too slow. How do we fix it?"),
		a("Two realistic paths:\n\n**A. Rewrite the ranking in Rust**\n- Fastest result, but a new language for the team.\n\n**B. Cache ranked results in Redis**\n- Keyed by query and locale, 10 minute expiry.\n\nI'd go with B."),
		u("A sounds more fun. let's do A."),
		a("OK, A. Start by porting the scorer module."),
		u("hm, nobody knows Rust here. ok scrap A, go with your B."),
	)
	checkDecisions(t, x, [][]string{{"Cache ranked results in Redis"}}, [][]string{{"Rewrite the ranking"}, {"porting the scorer"}})
	if got := optionPicks("do a rewrite of the scorer", []proposal{{label: "a"}, {label: "b"}}); len(got) != 0 {
		t.Errorf("optionPicks read an article as a label: %v", got)
	}
}

// TestOptionHeadings checks that headings naming options ("### Option B:
// In-process LRU") are options a bare letter picks.
func TestOptionHeadings(t *testing.T) {
	x := extractT(t,
		u("The product API is slow."),
		a("### Option A: Redis cluster\nShared cache across all pods, one more service to run.\n\n### Option B: In-process LRU\nEach pod caches its own copy for 60 seconds.\n\nWhich one?"),
		u("B"),
	)
	checkDecisions(t, x, [][]string{{"In-process LRU"}}, [][]string{{"Redis cluster"}})
}

// TestOptionNamedThenAmended checks that "Redis, but with a 10 minute TTL"
// picks the option it names first, in the user's amended words.
func TestOptionNamedThenAmended(t *testing.T) {
	x := extractT(t,
		u("Where should the product cache live?"),
		a("Two options:\n1. **Memcached** with a 5 minute TTL, shared by all pods.\n2. **In-process LRU** per pod with a 60 second expiry."),
		u("Memcached, but with a 10 minute TTL"),
	)
	checkDecisions(t, x, [][]string{{"Memcached", "10 minute TTL"}}, [][]string{{"In-process LRU"}, {"5 minute"}})
}

// TestReversalToNamedOption checks that "actually, let's go with X after
// all" replaces the earlier pick from the list X was offered in.
func TestReversalToNamedOption(t *testing.T) {
	x := extractT(t,
		u("Where should the product cache live?"),
		a("Two options:\n1. **Memcached** with a 5 minute TTL, shared by all pods.\n2. **In-process LRU** per pod with a 60 second expiry."),
		u("2"),
		a("OK, in-process LRU it is."),
		u("Actually, let's go with Memcached after all, we need shared invalidation."),
	)
	checkDecisions(t, x, [][]string{{"Memcached"}}, [][]string{{"In-process LRU"}})
}

// TestYesToOfferQuestion checks that "yes" to a closing question offering
// one more thing ("Should we also export a metric for misses?") decides
// that thing, and that "Want that as well?" decides nothing more.
func TestYesToOfferQuestion(t *testing.T) {
	x := extractT(t,
		u("The product API is slow."),
		a("Use an in-process LRU per pod with a 60 second expiry. Should we also export a metric for cache misses?"),
		u("yes"),
	)
	checkDecisions(t, x, [][]string{{"in-process LRU"}, {"Export a metric for cache misses"}}, nil)
	if got := askedToDo(newTranscript([]agent.TranscriptMessage{a("Some teams cap it at 90 days. Want that as well?")}), 0); got != "" {
		t.Errorf("askedToDo = %q, want none", got)
	}
}

// TestSuggestionBecomesInstruction checks that "I'd suggest storing X and
// sending Y" is recorded as the instruction "Store X and send Y".
func TestSuggestionBecomesInstruction(t *testing.T) {
	if got := statement("I'd suggest storing each job in a table and sending it from a worker."); got != "Store each job in a table and send it from a worker" {
		t.Errorf("statement = %q", got)
	}
	if got := statement("I'd suggest bringing snacks."); got != "suggest bringing snacks" {
		t.Errorf("statement changed an unknown verb: %q", got)
	}
}

// TestLetsUseKeepsVerb checks that "let's use X" is recorded as "Use X".
func TestLetsUseKeepsVerb(t *testing.T) {
	x := extractT(t,
		u("Webhooks get lost."),
		a("Where are they lost: in our sender or at the partner?"),
		u("in our sender. let's use a transactional outbox polled every 5 seconds."),
	)
	checkDecisions(t, x, [][]string{{"Use a transactional outbox"}}, nil)
}

// TestBoldLabelledOptions checks that "**A. Redis** with …" lines are
// options A and B that "option B" picks.
func TestBoldLabelledOptions(t *testing.T) {
	x := extractT(t,
		u("Cache for the product API?"),
		a("Two options:\n\n**A. Memcached** with a 5 minute TTL, shared by all pods.\n\n**B. In-process LRU** per pod with a 60 second expiry."),
		u("Go with option B but keep the TTL at 5 minutes."),
	)
	checkDecisions(t, x, nil, [][]string{{"Memcached"}})
}

// TestOfferOfAlternativesIsNoProposal checks that a sentence offering
// alternatives ("Two ways: retry inline, or an outbox") is not taken for
// a proposal, while the pick after it ("My pick: the outbox …, since it
// survives crashes") is, its reason notwithstanding: the option it names.
func TestOfferOfAlternativesIsNoProposal(t *testing.T) {
	x := extractT(t,
		u("Webhooks get lost."),
		a("Two ways: retry inline, or an outbox table with a worker. My pick: the outbox table with a background worker, since it survives crashes."),
		u("sounds good"),
	)
	checkDecisions(t, x, [][]string{{"outbox table with a"}}, [][]string{{"retry inline"}})
}

// TestRestIsFineAcceptsTheRest checks that "Skip X. Rest is fine." accepts
// every plan item but the one turned down.
func TestRestIsFineAcceptsTheRest(t *testing.T) {
	x := extractT(t,
		u("Invoices are sometimes sent twice."),
		a("Plan:\n1. Add a unique key on invoice number and month.\n2. Log every send with the invoice number.\n3. Add a dashboard of duplicate sends."),
		u("Skip the dashboard. Rest is fine."),
	)
	checkDecisions(t, x, [][]string{{"unique key"}, {"Log every send"}}, [][]string{{"dashboard"}})
}

// TestNumberSoundsRight checks that "1 sounds right" picks option 1.
func TestNumberSoundsRight(t *testing.T) {
	x := extractT(t,
		u("How do we get partner updates?"),
		a("Three options:\n1. Poll the partner API every minute from a scheduled job.\n2. Subscribe to the partner's webhooks.\n3. Mirror their database nightly."),
		u("not 3. 1 sounds right."),
	)
	checkDecisions(t, x, [][]string{{"Poll the partner API"}}, [][]string{{"Mirror"}})
}

// TestYesButAmendsThePlan checks that "yes, but make it 8 attempts"
// accepts the plan and amends it, and that "all good except 3" accepts
// all of it but item 3.
func TestYesButAmendsThePlan(t *testing.T) {
	plan := "Plan:\n1. Retry the sender with exponential backoff, up to 5 attempts.\n2. Store failed deliveries in a dead-letter table.\n3. Alert when the dead-letter table has more than 100 rows."
	x := extractT(t,
		u("Deliveries get lost."),
		a(plan),
		u("yes, but make it 8 attempts instead of 5"),
	)
	checkDecisions(t, x, [][]string{{"8 attempts"}, {"dead-letter table"}, {"Alert when"}}, nil)
	x = extractT(t,
		u("Deliveries get lost."),
		a(plan),
		u("all good except 3, we don't alert on that"),
	)
	checkDecisions(t, x, [][]string{{"exponential backoff"}, {"Store failed deliveries"}}, [][]string{{"Alert when"}})
}

// TestLabelledListUnderBoldItem checks that a numbered or lettered list
// right under a bold item ("**Idempotency** — … Options:" over "1. …")
// offers options of its own, which "1 + b" picks, rather than being read
// as the bold item's description.
func TestLabelledListUnderBoldItem(t *testing.T) {
	x := extractT(t,
		u("Payments land late. What's the plan for the webhook endpoint?"),
		a("Plan:\n\n**Endpoint** — `POST /webhooks/pay`, verify the signature over the raw body.\n\n"+
			"**Idempotency** — deliveries repeat for days. Options:\n1. A `processed_events` table keyed by event id; insert first and skip on conflict.\n2. A lock keyed on the event id around processing.\n3. Make every handler safe to repeat.\n\n"+
			"**Processing**:\n- (a) Do the work inside the request.\n- (b) Record the event, enqueue a job and answer 200 at once.\n\nI'd do 1 + (b)."),
		u("1 + b. lock thing no."),
	)
	checkDecisions(t, x, [][]string{{"processed_events table"}, {"enqueue a job"}}, [][]string{{"lock keyed"}, {"inside the request"}})
}

// TestOpeningQuestionConfirmedIsNoDecision checks that an assistant's
// "Yes — …" to the opening message's question does not turn its reasons
// into a decision.
func TestOpeningQuestionConfirmedIsNoDecision(t *testing.T) {
	x := extractT(t,
		u("Customers who close the tab after paying stay on the free plan. I think we need webhooks?"),
		a("Yes — and this shows exactly why: the upgrade depends on the browser reaching the success page.\n\nWhich events do you sell on?"),
		u("only subscriptions"),
	)
	checkDecisions(t, x, nil, [][]string{{"shows exactly why"}})
}

// TestRangePicks checks that "1-4 from the power list" and "all 5" take
// numbered items by range, from the list the clause names when two lists
// share numbers, and that "2-3 days" is a quantity, no range.
func TestRangePicks(t *testing.T) {
	reply := a("Options:\n1. **Polling**: poll the sensor every minute.\n2. **Interrupt**: wake on the sensor's data-ready pin.\n\n" +
		"Power list:\n1. Put the radio in sleep after each uplink.\n2. Lower the SPI clock to 4 MHz.\n3. Disable the UART in release builds.\n4. Use the low-frequency crystal.\n5. Enable DC/DC.\n\nWhich?")
	x := extractT(t, u("The battery drains in a week."), reply, u("2. and 1-4 from the power list, dcdc later"))
	checkDecisions(t, x,
		[][]string{{"data-ready pin"}, {"radio in sleep"}, {"SPI clock"}, {"UART"}, {"low-frequency crystal"}},
		[][]string{{"Enable DC/DC"}, {"poll the sensor every minute"}})

	x = extractT(t, u("The battery drains in a week."), reply, u("all 5 from the power list"))
	checkDecisions(t, x, [][]string{{"radio in sleep"}, {"Enable DC/DC"}}, nil)

	x = extractT(t, u("The battery drains in a week."), reply, u("we can spend 2-3 days on it"))
	checkDecisions(t, x, nil, [][]string{{"SPI clock"}, {"UART"}})
}

// TestLetterOpeningReplyPicks checks that a reply opening with a lettered
// label ("(a) for the secrets") picks that option, and that the words after
// the label do not pick another option that shares one of them.
func TestLetterOpeningReplyPicks(t *testing.T) {
	x := extractT(t,
		u("The service reads its config from YAML now. Where do the secrets go?"),
		a("For the two secrets:\n- (a) keep them as env vars, read by name after the file is loaded\n- (b) `${VAR}` placeholders in the YAML, expanded before decoding\n- (c) mount the Secret as files and put their paths in the YAML\n\nWhich one?"),
		u("(a) for the secrets. and keep env overrides for every field."),
	)
	checkDecisions(t, x, [][]string{{"env vars", "read by name"}, {"env overrides"}}, [][]string{{"mount the Secret"}, {"placeholders"}})

	// "b for dates": a letter, then what the option is for.
	x = extractT(t,
		u("Hydration mismatch on every date: server and client format in different time zones."),
		a("Two ways out:\n- (a) Render dates only on the client, in onMount.\n- (b) Tell the server the user's time zone in a tz cookie and format dates with it on both sides.\n\nWhich?"),
		u("b for dates. the tooltip ids are random too"),
	)
	checkDecisions(t, x, [][]string{{"tz cookie"}}, [][]string{{"only on the client"}})
}

// TestAndInstructionIsAClause checks that ", and <instruction>" starts a
// clause of its own: the instruction is a decision even when what comes
// before it is not, and ", and the X too" does not split.
func TestAndInstructionIsAClause(t *testing.T) {
	x := extractT(t,
		u("Our ELT scripts run from cron and fail silently."),
		a("A retry policy on the loader assets retries after 2, 6 and 14 minutes. Are the loaders idempotent?"),
		u("stripe appends, lol. Retries on the loaders only, and make load_stripe merge on charge id first."),
	)
	checkDecisions(t, x, [][]string{{"merge on charge id"}}, nil)
	if got := userClauses("Sessions in Redis, and the cookie too"); len(got) != 1 {
		t.Errorf("userClauses split a clause without an instruction after \", and\": %q", got)
	}
}

// TestHeadingOverOptionsIsNoDecision checks that accepting "all of it"
// does not make a decision of a numbered item that only names what the
// lettered options under it decide, while "3b" picks one of those.
func TestHeadingOverOptionsIsNoDecision(t *testing.T) {
	x := extractT(t,
		u("Support staff see every customer in the Django admin."),
		a("Three layers:\n\n1. **Groups with model permissions**: create support and finance groups in a data migration.\n2. **Field-level restrictions**: make billing fields read-only for support with get_readonly_fields().\n3. **Row-level (region) restrictions**:\n   - (a) django-guardian object permissions, a row per user per object.\n   - (b) a region field on the staff profile, and CustomerAdmin.get_queryset() filters by it.\n\nI'd do 1 + 2 + 3b."),
		u("agree on all of it. 3b."),
	)
	checkDecisions(t, x, [][]string{{"create support and finance groups"}, {"region field on the staff profile"}}, [][]string{{"guardian"}, {"Row-level"}})
}

// TestLabelPicksWithWords checks picks by label that say more: "1, 2 and
// 4 obviously" takes three items, "2, summary step" takes option 2, and
// when a numbered section and a numbered list both have a "1", the words
// after the label say which is meant.
func TestLabelPicksWithWords(t *testing.T) {
	plan := a("Moving off Sidekiq:\n\n1. Convert the Sidekiq::Job workers in app/workers to ActiveJob classes.\n2. Move the sidekiq-cron entries to recurring tasks in config/recurring.yml.\n3. Replace sidekiq-unique-jobs with limits_concurrency.\n4. Remove the sidekiq gems from the Gemfile.\n\nWhich of these?")
	x := extractT(t, u("We want to drop Sidekiq for Solid Queue."), plan, u("1, 2 and 4 obviously. 3 needs thought."))
	checkDecisions(t, x, [][]string{{"ActiveJob classes"}, {"recurring tasks"}, {"Remove the sidekiq gems"}}, [][]string{{"limits_concurrency"}})

	options := a("That field breaks on restart. Options:\n1. Make the processor an ItemStream and store the total in the step context.\n2. Drop the field and compute the summary in a separate tasklet step.\n\nI'd go with 2.")
	x = extractT(t, u("The batch job's summary is wrong after a restart."), options, u("2, summary step."))
	checkDecisions(t, x, [][]string{{"separate tasklet step"}}, [][]string{{"ItemStream"}})
	// "2, 10 s / 20 s": the option, with the values chosen.
	x = extractT(t,
		u("The board resets in STOP2."),
		a("Two ways out:\n1. Clear the IWDG_STOP option byte so the watchdog freezes in Stop mode.\n2. Keep the IWDG running and let the supervisor's vTaskDelay bound the sleep.\n\nWith option 2 I'd use a 10 s supervisor period and a 20 s timeout."),
		u("2, 10 s / 20 s."),
	)
	checkDecisions(t, x, [][]string{{"Keep the IWDG running", "10 s / 20 s"}}, [][]string{{"IWDG_STOP"}})

	// "forget the min-height, do 2": a refusal, then a pick.
	x = extractT(t,
		u("CLS is 0.19 on mobile."),
		a("Two options for the promo strip:\n1. Reserve a fixed 40px slot with min-height.\n2. Render the promo server side in the layout so it is in the first HTML.\n\nWhich?"),
		u("ugh. ok forget the min-height, do 2, render it server side in the layout."),
	)
	checkDecisions(t, x, [][]string{{"Render the promo server side"}}, [][]string{{"40px slot"}})

	// "scrap rbs-inline, go with (a)": a refusal, then a pick from options
	// offered some messages back, their labels inside bold names.
	x = extractT(t,
		u("We want RBS types for our gem."),
		a("For the types, three ways:\n- **(a) Hand-written .rbs files** under sig/, one per class.\n- **(b) rbs-inline**: write the types as comments and generate sig/generated/.\n- **(c) Generate with rbs prototype** and commit the output.\n\nWhich one?"),
		u("(b) rbs-inline, I don't want two files per class."),
		a("On rbs-inline: it is still marked experimental, and its annotation syntax has changed between releases. Fix the csv dependency in csv_sentry.gemspec too."),
		u("hmm, a moving syntax is what I don't want in a gem. scrap rbs-inline, go with (a), hand-written sig/ files."),
	)
	checkDecisions(t, x, [][]string{{"Hand-written .rbs files"}}, [][]string{{"rbs-inline"}, {"csv_sentry.gemspec"}})

	// "and do (b)": an option offered messages back replaces the earlier
	// pick from its list; "3.1." is a version, no pick of option 3.
	x = extractT(t,
		u("Server tick latency spikes."),
		a("Options:\n- (a) set MissedTickBehavior::Skip on the interval and release the lock before sending\n- (b) move the simulation onto a dedicated OS thread that owns World outright\n- (c) cut snapshot work with reused buffers\n\nWhich?"),
		u("(a) for now."),
		a("Profiling shows rayon costs more than it saves. My recommendation now: drop rayon, encode sequentially, and go to (b)."),
		u("yeah ok. and do (b)."),
		a("Which Rust version is the server on?"),
		u("3.1."),
	)
	checkDecisions(t, x, [][]string{{"dedicated OS thread"}}, [][]string{{"MissedTickBehavior"}, {"reused buffers"}})

	// "3.1." answers with a version: it picks no option 3.
	x = extractT(t,
		u("Which Ruby versions should the gem support?"),
		a("Three floors:\n1. >= 2.7, what the gem supports today.\n2. >= 3.0, for the keyword argument changes.\n3. >= 3.2, cleaner, but cuts off anyone on older rubies.\n\nI'd go with the oldest branch that still gets security releases. Which is that for you?"),
		u("3.1."),
	)
	checkDecisions(t, x, nil, [][]string{{"cuts off anyone"}})

	// "2 for the summary": what follows "for" names the topic; the
	// option says what is done.
	x = extractT(t, u("The batch job's summary is wrong after a restart."), options, u("2 for the summary, the processor keeps nothing else in fields."))
	checkDecisions(t, x, [][]string{{"separate tasklet step"}}, [][]string{{"ItemStream"}, {"keeps nothing else"}})

	sections := a("**1. The cache never hits.** The runners have no distributed cache configured, so every job starts cold.\n\n**2. Everything runs in one job.**\n\nTests split, after compile:\n1. one job per module via parallel:matrix\n2. parallel: 4 and shard tests by class\n\nDo any tests need services?")
	x = extractT(t, u("Our GitLab pipeline takes 28 minutes."), sections, u("1, matrix per module. the api tests need docker."))
	checkDecisions(t, x, [][]string{{"one job per module"}}, [][]string{{"cache never hits"}, {"shard tests"}})
}

// TestFileListIsNoDecision checks that accepting a list of the files a
// change touches ("`a.go` — new, holds X") adds no decision per file: what
// each file gets is the work of the decisions already taken.
func TestFileListIsNoDecision(t *testing.T) {
	x := extractT(t,
		u("Add rate limiting to the API."),
		a("Use a token bucket per API key, 100 requests a minute."),
		u("yes"),
		a("Files:\n- `internal/ratelimit/bucket.go` — new; the bucket and its refill\n- `cmd/api/main.go` — wire the middleware in front of the router\n- `internal/ratelimit/bucket_test.go` — refill and burst tests"),
		u("ship it"),
	)
	checkDecisions(t, x, [][]string{{"token bucket per API key"}}, [][]string{{"the bucket and its refill"}, {"wire the middleware"}, {"refill and burst tests"}})
}

// TestPlanItemTexts checks how accepted plan items read: an item that
// gives a reason and then an instruction ("X is native since 3.0, so
// delete Y") is the instruction; advice not to do something ("I'd not do
// it") and an item that only lists files are no decisions. "yes to all
// that, …" accepts the plan and goes on.
func TestPlanItemTexts(t *testing.T) {
	x := extractT(t,
		u("We drop Ruby below 3.1."),
		a("Cleanup:\n- `Hash#except` is native since 3.0, so delete `lib/core_ext/hash_except.rb` and its require.\n- Set `TargetRubyVersion: 3.1` in `.rubocop.yml`.\n- A stable branch for old Rubies: for a library this small, I'd not do it.\n- `CHANGELOG.md`, `README.md`"),
		u("yes to all that, 3.4 in the matrix too."),
	)
	checkDecisions(t, x, [][]string{{"Delete lib/core_ext/hash_except.rb"}, {"TargetRubyVersion"}},
		[][]string{{"native since"}, {"I'd not"}, {"CHANGELOG.md, README.md"}})
}

// TestFirstTwoPicks checks that "first two yes" takes the first two items
// of the list just offered, and "all three" every one of three.
func TestFirstTwoPicks(t *testing.T) {
	reply := a("Three fixes:\n1. Add `sizes` to the gallery images.\n2. Preload the hero image.\n3. Render the page statically with ISR.")
	x := extractT(t, u("LCP is 4 seconds."), reply, u("first two yes. the page is dynamic on purpose"))
	checkDecisions(t, x, [][]string{{"sizes"}, {"Preload the hero image"}}, [][]string{{"ISR"}})
	x = extractT(t, u("LCP is 4 seconds."), reply, u("all three"))
	checkDecisions(t, x, [][]string{{"sizes"}, {"Preload the hero image"}, {"ISR"}}, nil)
}

// TestOpenQuestionsAreNoProposals checks that items of a list of what is
// still to decide ("Things to decide:", "whether you want …") are not what
// a terse answer accepts, and that an option whose description tells the
// reader how it works ("you ask the system …") is decided by its name.
func TestOpenQuestionsAreNoProposals(t *testing.T) {
	x := extractT(t,
		u("We need tracing in the API."),
		a("Export OTLP to the node-local collector.\n\nThings to decide:\n- sampling rate\n- whether you want trace IDs in your logs"),
		u("trace ids in logs yes. keep everything for now."),
	)
	checkDecisions(t, x, [][]string{{"Trace ids in logs"}}, [][]string{{"Whether"}, {"Sampling rate"}})

	x = extractT(t,
		u("The feed should refresh in the background."),
		a("Two options:\n1. **BGAppRefreshTask**: you ask the system to wake the app no earlier than some date.\n2. **Silent push**: the server wakes the app when news happens."),
		u("1"),
	)
	checkDecisions(t, x, [][]string{{"BGAppRefreshTask"}}, [][]string{{"you ask the system"}})
}

// TestDecisionWithoutTheAlternativeItTurnsDown checks that "— not
// TableV2" closing an accepted step is left out of the decision.
func TestDecisionWithoutTheAlternativeItTurnsDown(t *testing.T) {
	x := extractT(t,
		u("Ops want point-in-time recovery on the orders table, so CDK has to manage it."),
		a("Steps:\n1. Replace fromTableAttributes with a real Table — not TableV2.\n2. Run cdk import with only the table added.\n\nOK?"),
		u("ok"),
	)
	checkDecisions(t, x, [][]string{{"Replace fromTableAttributes with a real Table"}, {"cdk import"}}, [][]string{{"not TableV2"}})
}

// TestComparisonOffersOptions checks that a list under "Quick comparison"
// offers alternatives: naming one ("Pagefind sounds right") picks it, and
// the others are no decisions.
func TestComparisonOffersOptions(t *testing.T) {
	x := extractT(t,
		u("Our Hugo docs site needs search."),
		a("Quick comparison for a site this size:\n\n- **Algolia DocSearch**: hosted, excellent relevance, paid for closed source.\n- **Pagefind**: runs after hugo over the generated HTML and writes a chunked static index next to it.\n- **Lunr.js**: every visitor downloads the whole index first.\n\nIs the product open source?"),
		u("Closed source, so DocSearch would cost us. Pagefind sounds right."),
	)
	checkDecisions(t, x, [][]string{{"Pagefind", "chunked static index"}}, [][]string{{"Lunr"}, {"Algolia"}})
}
