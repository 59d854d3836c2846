package offline

import "testing"

// TestAssistantConfirmsUserProposal checks that a user's question that
// proposes what to do ("should we also …?", "cluster by tenant_id?") is a
// decision when the assistant's reply opens by agreeing, and not when it
// disagrees or when the question asks how things are.
func TestAssistantConfirmsUserProposal(t *testing.T) {
	x := extractT(t,
		u("Our public API has no rate limit."),
		a("A token bucket per API key in Redis is the usual way."),
		u("should we also return a Retry-After header on 429s?"),
		a("Yes — clients can back off correctly then."),
	)
	checkDecisions(t, x, [][]string{{"Return a Retry-After header on 429s"}}, nil)

	x = extractT(t,
		u("The events table is slow to query per tenant."),
		a("Make it a partitioned table by month."),
		u("monthly. shard by tenant_id and event_type?"),
		a("Good idea, most queries filter on both."),
	)
	checkDecisions(t, x, [][]string{{"Shard by tenant_id and event_type"}}, nil)

	for _, reply := range []string{
		"No — clients ignore it anyway, and it costs a Redis round trip.",
		"It depends on the clients you have.",
	} {
		x = extractT(t,
			u("Our public API has no rate limit."),
			a("A token bucket per API key in Redis is the usual way."),
			u("should we also return a Retry-After header on 429s?"),
			a(reply),
		)
		checkDecisions(t, x, nil, [][]string{{"Retry-After"}})
	}

	x = extractT(t,
		u("We moved the cache to Redis."),
		a("That removes the per-pod copies."),
		u("should we expect higher latency on cache hits?"),
		a("Yes, about a millisecond per hit over the network."),
	)
	checkDecisions(t, x, nil, [][]string{{"latency"}})
}

// TestGoAheadWithTheRest checks that "go ahead with the rest" accepts the
// plan on the table like a plain "go ahead".
func TestGoAheadWithTheRest(t *testing.T) {
	x := extractT(t,
		u("The importer crashes on files over 2 GB."),
		a("Stream the file in 64 MB chunks instead of reading it whole.\n\nAnd for the stuck job: cancel it in the admin console now so nobody retries it."),
		u("Done, cancelled it. Go ahead with the rest."),
	)
	checkDecisions(t, x, [][]string{{"Stream the file in 64 MB chunks"}}, nil)
}

// TestYesPerRecommendation checks that "yes X, yes Y" answers two
// recommendations in prose, each by a word only it has, and that a word
// both share picks neither.
func TestYesPerRecommendation(t *testing.T) {
	x := extractT(t,
		u("Uploads now land in the bucket directly."),
		a("The old files are still on the app server, so copy them over with a one-off script.\n\n"+
			"Presigned URLs are handed to the browser, so expire them after 10 minutes."),
		u("yes copy, yes expire. what about thumbnails?"),
	)
	checkDecisions(t, x, [][]string{{"Copy them over with a one-off script"}, {"Expire them after 10 minutes"}}, [][]string{{"copy", "expire"}})
}

// TestTrailingRefusal checks that a terse clause that names an option and
// then says no ("lock thing no") turns it down rather than picking it.
func TestTrailingRefusal(t *testing.T) {
	x := extractT(t,
		u("How do we stop duplicate deliveries?"),
		a("Options:\n1. **Dedup table**: insert the delivery id first and skip on a unique violation.\n2. **Advisory lock**: hold a lock keyed on the delivery id around processing.\n3. **Idempotent handlers**: make every handler safe to repeat."),
		u("go with 1. lock thing no."),
	)
	checkDecisions(t, x, [][]string{{"Dedup table"}}, [][]string{{"lock keyed"}})
}

// TestReversalNamesOptionByItsBody checks that a change of course naming
// an earlier option by a word of what it says ("the JObject thing"), not
// by its name, takes that option and replaces the first pick, and that
// the user's report before it is no decision.
func TestReversalNamesOptionByItsBody(t *testing.T) {
	x := extractT(t,
		u("How should we version the save files?"),
		a("Options:\n1. **Typed classes per version**: keep SaveDataV1 and SaveDataV2 and convert between them.\n2. **Untyped tree**: load into a JObject and edit the tree in each migration."),
		u("1 please"),
		a("OK, typed classes per version."),
		u("ok so I started writing this and for 2.0 we are already planning to change the map state. that is 600 lines of duplicated classes. let's do the JObject thing after all."),
	)
	checkDecisions(t, x, [][]string{{"JObject"}}, [][]string{{"SaveDataV1"}, {"started writing"}})
}

// TestOpeningMessageStatesTheGoal checks that what the opening message
// says about the situation is no decision once the talk goes on, while an
// outright choice in it still is.
func TestOpeningMessageStatesTheGoal(t *testing.T) {
	x := extractT(t,
		u("Support wants to switch features per tenant: early access for a few customers. Log from prod this morning below."),
		a("Per-tenant flags need a table of overrides. Which store do you use?"),
		u("Postgres."),
	)
	checkDecisions(t, x, nil, [][]string{{"Support wants"}, {"Log from prod"}})

	x = extractT(t,
		u("Let's go with HS256 for the service tokens. How should we rotate the key?"),
		a("Keep two keys active and rotate monthly."),
	)
	checkDecisions(t, x, [][]string{{"HS256"}}, nil)
}

// TestScratchThatRetracts checks that "ok, scratch that" takes back what
// the user decided last instead of accepting the assistant's reply, and
// that "…, (b)" at the end of a sentence picks option (b) offered earlier,
// in the option's words.
func TestScratchThatRetracts(t *testing.T) {
	x := extractT(t,
		u("Our nightly job restarts from row 0 after a failure."),
		a("Two ways forward:\n\n- (a) **Clean up and rerun.** A first step deletes the day's rows, and a failed run always starts over.\n- (b) **Real restart.** A persistent job repository and a reader that saves its position."),
		u("Let's do (a) for now, we're short on time."),
		a("OK, for (a) the cleanup step runs before the main step."),
		u("Ok, scratch that. A rerun takes 50 minutes and we miss the cutoff. So we need the full real restart, (b)."),
	)
	checkDecisions(t, x, [][]string{{"Real restart", "persistent job repository"}}, [][]string{{"Clean up and rerun"}, {"cleanup step"}, {"we need"}})
}

// TestDropByNameTakesBack checks that "drop fetch" takes back a decision
// the user made earlier in those words ("yes do fetch"), even when the word
// runs through the whole talk, and leaves other decisions alone.
func TestDropByNameTakesBack(t *testing.T) {
	x := extractT(t,
		u("We want avatars of who is viewing a document."),
		a("Track each viewer with Presence on a document topic. For names, I'd load them in the fetch callback, which runs once per presence diff."),
		u("yes do fetch"),
		a("Then fetch reads the users table on every diff; with a tight pool that adds load."),
		u("ops says our db pool is tight. does fetch hit the db a lot?"),
		a("Yes, fetch queries on every join and leave. The alternative is to put the name in the meta when you track."),
		u("yeah drop fetch, name in the meta at track time"),
	)
	checkDecisions(t, x, [][]string{{"meta at track time"}}, [][]string{{"fetch callback"}, {"Fetch reads the users table"}})
}

// TestNotByNameTakesBack checks that "so not db 1" takes back what the
// user accepted earlier in those words, as "drop X" does.
func TestNotByNameTakesBack(t *testing.T) {
	x := extractT(t,
		u("Sessions live in memory and users get logged out on every deploy."),
		a("Move sessions to Redis with connect-redis. Which Redis?"),
		u("Redis: just use the existing cache instance, db 1."),
		a("Then set the key prefix to sess: and keep the TTL equal to the cookie's maxAge."),
		u("ok. Also, ops replied: they want a separate node for sessions. So not db 1 — SESSION_REDIS_URL points at the new node."),
	)
	checkDecisions(t, x, [][]string{{"key prefix"}}, [][]string{{"db 1"}})
}

// TestDoTheThing checks that "do the X thing" takes the proposal that
// names X, in its words and without its linking word ("Separately, …").
func TestDoTheThing(t *testing.T) {
	x := extractT(t,
		u("The guest export is vulnerable."),
		a("Use prepared statements for the SQL.\n\nSeparately, prefix any CSV cell starting with =, +, - or @ with a single quote so spreadsheets don't run formulas.\n\nDo you have phpunit?"),
		u("do the csv thing too. yes phpunit exists"),
	)
	checkDecisions(t, x, [][]string{{"Prefix any CSV cell"}}, [][]string{{"Separately"}})
}

// TestAsidesDecideNothing checks that a turn to another topic, a task the
// user takes on, a fact about what exists and a pick by numbers alone are
// no decisions, while the choice beside them is.
func TestAsidesDecideNothing(t *testing.T) {
	x := extractT(t,
		u("Two-factor login for the app."),
		a("Options:\n1. **TOTP** with an authenticator app.\n2. **Email codes** sent on every login.\n3. **SMS codes**.\n\nDo you have an integration test suite?"),
		u("Do both 1 and 2. Separate issue — good catch on the profile page, I'll look into ticket 2071. Phpunit exists, tests/ folder, bootstrap already there."),
	)
	checkDecisions(t, x, [][]string{{"TOTP"}, {"Email codes"}},
		[][]string{{"Do both"}, {"Separate issue"}, {"look into"}, {"Phpunit exists"}})

	// "ok wait." pauses: it accepts no sentence that shares its word.
	x = extractT(t,
		u("Reports are slow to open."),
		a("No preloading is fine. Just know the first click on Reports waits for the reports chunk, so on a slow connection there's a spinner."),
		u("ok wait. PM tried the preview from hotel wifi, clicking Reports sits on a spinner for 4 seconds."),
	)
	checkDecisions(t, x, nil, [][]string{{"first click on Reports"}})
}

// TestScratchThatThingPicksNothing checks that "scratch that bucket"
// turns the bucket down and does not pick the earlier option that
// mentions a bucket.
func TestScratchThatThingPicksNothing(t *testing.T) {
	x := extractT(t,
		u("We want to version our training data."),
		a("Options:\n- **DVC**: small .dvc files in git, data in a content-addressed S3 remote.\n- **LakeFS**: git-like branching over the whole bucket, but it's a server you have to run.\n\nI'd go with DVC."),
		u("dvc. remote on acme-ml-shared?"),
		a("Yes: dvc remote add -d storage s3://acme-ml-shared/dvc."),
		u("bad news, that bucket expires objects after 90 days. so scratch that bucket."),
	)
	checkDecisions(t, x, nil, [][]string{{"LakeFS"}})
}

// TestYesToGerundAccepts checks that "Yes to storing only the userId"
// accepts the recommendation it names; "only" does not make it a fact.
func TestYesToGerundAccepts(t *testing.T) {
	x := extractT(t,
		u("Sessions live in memory."),
		a("Keeping the whole user row means roles are a snapshot from login time. I'd store only userId and load the user per request in a small src/middleware/loadUser.js."),
		u("Yes to storing only the userId."),
	)
	checkDecisions(t, x, [][]string{{"Store only userId", "loadUser.js"}}, nil)
}

// TestYesToAQuestionBeforeItsReason checks that "yes, do it" takes what
// the assistant's last question asks, even when it opens with "Also:" and
// a sentence after it says why.
func TestYesToAQuestionBeforeItsReason(t *testing.T) {
	x := extractT(t,
		u("The news app should have fresh stories in the morning."),
		a("Use BGAppRefreshTask to refresh the feed overnight.\n\nAlso: do you want a local notification when the background refresh finds a new top story? That would give the editors their morning moment."),
		u("local notification for new top stories — yes, do it."),
	)
	checkDecisions(t, x, [][]string{{"local notification when the background refresh finds a new top story"}}, nil)
}

// TestAdviceAgainstWithFixIsAProposal checks that "never X; do Y instead"
// is a proposal that "do it" accepts, without its linking "And".
func TestAdviceAgainstWithFixIsAProposal(t *testing.T) {
	x := extractT(t,
		u("We log every request as JSON now."),
		a("formatAsJSON doesn't log request headers. And in your own logs, never put the raw API key in the katip context; log a key id instead."),
		u("good. do it"),
	)
	checkDecisions(t, x, [][]string{{"never put the raw API key", "log a key id instead"}}, [][]string{{"And in"}})
}

// TestRefusalByNameTurnsDownTheItem checks that "skip the dashboard for
// now" turns down the one plan item with a dashboard, while "do it"
// accepts the rest.
func TestRefusalByNameTurnsDownTheItem(t *testing.T) {
	x := extractT(t,
		u("How do we know when the SQS pipeline falls behind?"),
		a("Two layers:\n\n1. **CloudWatch alarms** on the queue: ApproximateAgeOfOldestMessage, and messages visible on the DLQ.\n2. **Broadway telemetry**: Broadway emits telemetry events with durations; you could chart batch time and failures on a dashboard.\n\nThe alarms are the part that pages someone."),
		u("alarms: oldest message age over 5 min, and DLQ not empty. skip the dashboard for now. do it"),
	)
	checkDecisions(t, x, [][]string{{"CloudWatch alarms"}}, [][]string{{"Broadway telemetry"}})
}

// TestForNowGivesWayToALaterPick checks that a choice made "for now"
// gives way to a later pick from options on the same subject, while a
// "for now" choice on another subject stays.
func TestForNowGivesWayToALaterPick(t *testing.T) {
	x := extractT(t,
		u("We are adding OpenTelemetry tracing to the FastAPI service."),
		a("Two settings to decide: the sampling rate, and where traces go. Traffic is low, so keeping everything is affordable."),
		u("keep 100% sampling for now. use the OTLP exporter to the collector for now."),
		a("Do your logs carry trace IDs?"),
		u("no, plain text logs from uvicorn."),
		a("Then add the trace ID to the log format with the logging instrumentation."),
		u("ok"),
		a("Traffic grew 10x after launch. Sampling options:\n- (a) head sampling in the SDK: ParentBased(TraceIdRatioBased(0.1)), keep 10% of new traces\n- (b) keep 100% in the SDK and tail-sample in the collector\n\nWhich one?"),
		u("(a), 10% parent-based."),
	)
	checkDecisions(t, x, [][]string{{"head sampling"}, {"OTLP exporter"}}, [][]string{{"100% sampling"}})
}

// TestScratchThenChoose checks that "scratch X, go with Y" and "Scratch
// v5, stay on v4" decide what is chosen, without the refusal before it;
// the refusal names no option to take.
func TestScratchThenChoose(t *testing.T) {
	x := extractT(t,
		u("Our dbt model scans everything on each run."),
		a("Two strategies:\n- merge on event_id with a 3-day lookback, which still scans the target\n- switch to insert_overwrite with a static partition list of the last 4 days\n\nWhich?"),
		u("merge."),
		a("With merge, the last run processed 4.1 TiB. The cheaper route is to switch to insert_overwrite with a static partition list of the last 4 days."),
		u("Scratch the merge then, go with insert_overwrite and static partitions, 4 days."),
	)
	checkDecisions(t, x, [][]string{{"insert_overwrite"}}, [][]string{{"Scratch the merge"}})

	x = extractT(t,
		u("We are moving the dashboard to the App Router."),
		a("Upgrading to Auth.js v5 changes the session cookie, so everyone is logged out once."),
		u("Scratch v5, stay on v4 for the migration with getServerSession in server components."),
	)
	checkDecisions(t, x, [][]string{{"Stay on v4 for the migration"}}, [][]string{{"Scratch v5"}})
}

// TestScrapTakesBackByWords checks that "scrap silent install" takes back
// what the user accepted earlier as "silent background install": the words
// of what is turned down, not only the phrase.
func TestScrapTakesBackByWords(t *testing.T) {
	x := extractT(t,
		u("Our desktop app needs auto-updates."),
		a("Options for installing:\n- **Install silently in the background** on startup.\n- **Ask first**: show a Restart now / Later prompt.\n\nAlso sign every update with a key kept in CI secrets."),
		u("silent background install sounds good. sign them too."),
		a("One snag: on Windows the installer closes the running app, so an unsaved note is lost."),
		u("ok scrap silent install, ask first with the restart prompt."),
	)
	checkDecisions(t, x, [][]string{{"Ask first"}}, [][]string{{"silently"}})
}

// TestActuallyNoTakesBackTheSentenceBefore checks that "… actually no,"
// takes back the pick of the sentence before it in the same message, and
// only that one; an option named in bold before a comma reads "Name: rest",
// not "Name: , rest".
func TestActuallyNoTakesBackTheSentenceBefore(t *testing.T) {
	x := extractT(t,
		u("Our dashboards overcount events."),
		a("Options for the panels:\n\n- (a) **Add `FINAL` to each panel query.** Exact, but slower than a plain scan.\n- (b) **Serve DAU from the daily rollup**, everything else without `FINAL`.\n- (c) **Set `final = 1` in the Grafana user's settings profile**, so every query gets it implicitly."),
		u("DAU from the rollup. For the rest let's do (c)... actually no, the profile lives in the ops repo. Just add FINAL to the panel queries then."),
	)
	checkDecisions(t, x, [][]string{{"DAU", "rollup"}, {"FINAL", "panel quer"}}, [][]string{{"settings profile"}, {"final=1"}, {"final = 1"}, {": ,"}})
}

// TestTidyKeepsCodeCase checks that a decision opening with a path or a
// name from code keeps its case: "App/views/reports.py" is another file.
func TestTidyKeepsCodeCase(t *testing.T) {
	for in, want := range map[string]string{
		"app/views/reports.py: .delay(id) instead of threads.": "app/views/reports.py: .delay(id) instead of threads",
		"createLoaders runs once per request":                  "createLoaders runs once per request",
		"max_retries stays at 5.":                              "max_retries stays at 5",
		"patched(): branch on a patch ID":                      "patched(): branch on a patch ID",
		"keep the retry loop":                                  "Keep the retry loop",
		"ok. keep the retry loop":                              "Ok. keep the retry loop",
		", so cap it at 20":                                    "So cap it at 20",
	} {
		if got := tidy(in); got != want {
			t.Errorf("tidy(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNumberNoTurnsDown checks that "2 no" turns option 2 down: a label
// named and refused, not a word the label shares with another option.
func TestNumberNoTurnsDown(t *testing.T) {
	x := extractT(t,
		u("Alignment jobs die with exit 137."),
		a("Options:\n1. **Retry with escalating memory**: retry only on 137 and grow memory per attempt.\n2. **Raise the memory of every job to 64 GB.** One line, but every sample pays for it.\n3. **Sparse index** (`--sparse 2`): a smaller index, slower alignment."),
		u("1. 2 no. 3 no, the index is shared."),
	)
	checkDecisions(t, x, [][]string{{"escalating memory"}}, [][]string{{"2 no"}, {"64 GB"}, {"parse index"}})
}

// TestAcceptedDropTakesBack checks that accepting a reply that says to
// drop something the user chose earlier takes that choice back, and that
// a plan step removing something ("Remove X from the Podfile") does not.
func TestAcceptedDropTakesBack(t *testing.T) {
	x := extractT(t,
		u("Jobs ask for more memory than any instance has and hang."),
		a("Cap requests with the resourceLimits directive; it needs Nextflow 24.04."),
		u("upgrade to 24.04 and use resourceLimits, sure."),
		a("Noted."),
		u("IT won't bump Nextflow before Q3, so stay on 23.10. Can we still cap memory?"),
		a("Yes: drop `resourceLimits` and the version bump, and wrap each request in a check_max helper."),
		u("check_max it is. ship it"),
	)
	checkDecisions(t, x, [][]string{{"check_max"}}, [][]string{{"resourceLimits", "24.04"}})

	x = extractT(t,
		u("We want our pods in Swift packages."),
		a("Move Alamofire and Kingfisher to SPM and declare them in Modules/Package.swift."),
		u("yes"),
		a("Then, once that builds: remove Alamofire from the Podfile and run pod install."),
		u("ok"),
	)
	checkDecisions(t, x, [][]string{{"Alamofire", "SPM"}}, nil)
}

// TestLabelInProseStays checks that an option's label inside a sentence
// ("with (a) or (b)") stays in the decision; it is no parenthetical aside
// to drop, which left "with or:".
func TestLabelInProseStays(t *testing.T) {
	x := extractT(t,
		u("Fast bullets pass through walls."),
		a("Options:\n\na) **Fixed timestep.** Move movement into FixedUpdate.\nb) **Sub-step manually** when delta is large.\n\nFor tunnelling with (a) or (b): do a swept test for bullets (a segment cast against the walls)."),
		u("a. swept test yes."),
	)
	checkDecisions(t, x, [][]string{{"with (a) or (b): do a swept test"}}, [][]string{{"with or:"}, {"segment cast"}})
}

// TestLetterPickLeavesTheOthersOut checks that "a, fine. ship it" under
// lettered items takes (a) only: lettered items are alternatives, even
// when the list is not introduced as options. A bold name that runs on
// into its item ("**Keep last values** and add …") reads as one phrase.
func TestLetterPickLeavesTheOthersOut(t *testing.T) {
	x := extractT(t,
		u("The pump controller is powered off every night, so its entities go unavailable. Ideas?"),
		a("Three:\n- (a) **Accept it.** Entities go unavailable overnight and come back at 06:00.\n- (b) **Keep last values** and add a reachability binary sensor.\n- (c) **Schedule-aware polling**: stop polling between 22:00 and 06:00.\n\nI'd take (a)."),
		u("a, fine. also add diagnostics. ship it"),
	)
	checkDecisions(t, x, [][]string{{"Accept it"}}, [][]string{{"Keep last values"}, {"Schedule-aware"}})
	if got := joinName("Keep last values", "and add a reachability sensor"); got != "Keep last values and add a reachability sensor" {
		t.Errorf("joinName = %q", got)
	}
	if got := joinName("Redis", "a 5 minute TTL"); got != "Redis: a 5 minute TTL" {
		t.Errorf("joinName = %q", got)
	}
}

// TestReplyThatDoesNotRestateKeepsUserWords checks that a terse decision
// of the user stays when the reply's first point shares a word with it
// but is about something else: "Done list for …:" and its first file are no
// confirmation of "add diagnostics, redact host".
func TestReplyThatDoesNotRestateKeepsUserWords(t *testing.T) {
	x := extractT(t,
		u("Pool pump integration: want a config flow and one coordinator."),
		a("The controller is off every night. Options:\n\n- (a) accept it: entities go unavailable overnight\n- (b) schedule-aware polling that skips the night\n\nWhich one?"),
		u("a, fine. also add diagnostics, redact host. ship it"),
		a("Done list for `custom_components/poolpump/`:\n\n1. `config_flow.py` — host step validated against `/api/info`, serial as unique ID\n2. `diagnostics.py` — entry data with `async_redact_data` over host and serial"),
	)
	checkDecisions(t, x, [][]string{{"Add diagnostics, redact host"}}, [][]string{{"config_flow.py"}})
}

// TestLabelledAnswerThatStatesFacts checks that an answer under a label
// the assistant asked about is no decision when it says how things are
// ("Invoices: we're a German company", "Identity today: nothing", "…
// right now"), and still is one when it says what to do.
func TestLabelledAnswerThatStatesFacts(t *testing.T) {
	x := extractT(t,
		u("Erasure requests by hand take weeks. Plan?"),
		a("Questions first. What do invoices need? How is identity checked? Where do secrets live? What should crashloops do?"),
		u("Invoices: we're a German company, 10 years retention.\nIdentity today: honestly nothing, support trusts the From: address.\nSecrets: env vars from a k8s Secret right now.\nCrashloops: page only for prod namespaces, rest to slack."),
	)
	checkDecisions(t, x, [][]string{{"page only for prod namespaces"}}, [][]string{{"German company"}, {"honestly nothing"}, {"k8s Secret"}})
}

// TestPickByTopicAndLabel checks that "rounding 1" and "upgrade b" pick
// item 1 of the list under "Rounding" and item (b) of the list under "Who
// upgrades", not the bold name of a list.
func TestPickByTopicAndLabel(t *testing.T) {
	x := extractT(t,
		u("Staking V2: rounding loses rewards and we need an upgrade path."),
		a("**Rounding**, two options:\n1. **Scale the accumulator**: compute rewardPerToken with 1e18 precision.\n2. **Carry the remainder**: add a rewardDust variable.\n\n**Who upgrades**:\n- (a) the deployer EOA calls upgrade directly;\n- (b) transfer ProxyAdmin ownership to the Safe multisig first."),
		u("rounding 1. upgrade b, multisig."),
	)
	checkDecisions(t, x, [][]string{{"Scale the accumulator"}, {"Safe multisig"}}, [][]string{{"Who upgrades"}, {"rewardDust"}, {"deployer EOA"}})
}

// TestTopicThenNo checks that "re the two PRs: no, do both steps in one
// PR" takes back the two-PR split accepted before and decides what
// follows the refusal, without the refusal's words.
func TestTopicThenNo(t *testing.T) {
	x := extractT(t,
		u("Terraform for the Cloud Run service and its database."),
		a("Import the existing connection into `network.tf`.\n\nOn the public-to-private switch, I'd split it in two PRs: PR 1 enables private IP, PR 2 disables public IP a week later."),
		u("fine."),
		a("Direct VPC egress is the better fit for the service."),
		u("direct egress. re the two PRs: no, do both steps in one PR. we have a maintenance window saturday"),
	)
	checkDecisions(t, x, [][]string{{"Do both steps in one PR"}}, [][]string{{"two PRs"}})
}

// TestAmendAfterLetterPick checks that "a. keep FULL on audit_log and
// events_archive" picks (a) and adds its own instruction, without the
// words of (b) ("Keep FULL and add an index") picking or filling it, and
// that "query says …" reports what a query found, deciding nothing.
func TestAmendAfterLetterPick(t *testing.T) {
	x := extractT(t,
		u("Postgres upgrade: lag on legacy_sessions, and the query says three tables have no primary key."),
		a("Options:\na) **Add a primary key to legacy_sessions.** session_id is unique in practice.\nb) **Keep FULL and add an index on 16 only.** PG16 subscribers can use a B-tree index.\n\nI'd do a)."),
		u("a. keep FULL on audit_log and events_archive. query says the dry run copied 1.8 TB."),
	)
	checkDecisions(t, x, [][]string{{"Add a primary key"}, {"Keep FULL on audit_log and events_archive"}}, [][]string{{"add an index"}, {"query says"}})
}
