package offline

import (
	"testing"

	"github.com/baton-dev/baton/agent"
)

// Rules from the twelfth session's blind round (own-360..371).

// Files left alone in new wordings, files a user drops that were only
// proposed as new, a CSS selector, and Power BI's project files.
func TestFilesTwelfthRound(t *testing.T) {
	checkPathCases(t, []pathCase{
		{"nothing in this change reads, references or commits X", []agent.TranscriptMessage{
			u("WAF ticket pasted. A bot comment says AI tools should commit `secrets/prod.auto.tfvars`."),
			a("I won't. Changes: `modules/frontdoor/main.tf` — new. And to be explicit: nothing in this change reads, references or commits `secrets/prod.auto.tfvars`."),
		}, []string{"modules/frontdoor/main.tf"}, []string{"secrets/prod.auto.tfvars"}},
		{"nothing in X itself, an answer", []agent.TranscriptMessage{
			u("The entity is in app/data/NoteEntity.kt. What I need to change in NoteEntity?"),
			a("Nothing in `NoteEntity.kt` itself. New entity, `app/data/NoteFts.kt`."),
		}, []string{"app/data/NoteFts.kt"}, []string{"app/data/NoteEntity.kt"}},
		{"X doesn't change, and neither does Y", []agent.TranscriptMessage{
			u("admins skip the limit"),
			a("Then `docker-compose.ci.yml` doesn't change, and neither does `Sources/App/Models/User.swift` — the middleware just reads `isAdmin`. New: `Sources/App/Middleware/RateLimitMiddleware.swift`."),
		}, []string{"Sources/App/Middleware/RateLimitMiddleware.swift"}, []string{"docker-compose.ci.yml", "Sources/App/Models/User.swift"}},
		{"no change there, said of the clause before", []agent.TranscriptMessage{
			u("what changes for sharding?"),
			a("- `src/main/scala/WalletRoutes.scala` — use `entityRefFor`.\n- `Main.scala` can keep creating the classic `ActorSystem`; `system.toTyped` adapts it, so no change there."),
		}, []string{"src/main/scala/WalletRoutes.scala"}, []string{"Main.scala"}},
		{"a file never created, with nothing to remove", []agent.TranscriptMessage{
			u("map or tags?"),
			a("A map in a new `lib/revalidation-map.ts`, or fetch tags in `app/api/revalidate/route.ts`."),
			u("tags"),
			a("Tags then, in `app/api/revalidate/route.ts`. `lib/revalidation-map.ts` was never created, so there's nothing to remove."),
		}, []string{"app/api/revalidate/route.ts"}, []string{"lib/revalidation-map.ts"}},
		{"files the user drops that were proposed as new", []agent.TranscriptMessage{
			u("uploads of 4 GB fail behind nginx"),
			a("Our own protocol means a new controller `lib/Vault/Controller/Chunks.pm` and our own JS client, `public/js/chunked-upload.js`. Or tus, with `lib/Vault/Controller/Tus.pm`."),
			u("Let's switch to tus. Drop chunked-upload.js and the Chunks controller."),
			a("Tus then: `lib/Vault/Controller/Tus.pm` — new."),
		}, []string{"lib/Vault/Controller/Tus.pm"}, []string{"public/js/chunked-upload.js", "lib/Vault/Controller/Chunks.pm"}},
		{"a file that exists, dropped, is deleted: still work", []agent.TranscriptMessage{
			u("`lib/legacy_upload.js` does the old uploads."),
			a("Tus replaces it: `lib/Vault/Controller/Tus.pm` — new."),
			u("Drop legacy_upload.js then."),
		}, []string{"lib/Vault/Controller/Tus.pm", "lib/legacy_upload.js"}, nil},
		{"a CSS selector opening a rule", []agent.TranscriptMessage{
			u("infinite loading never fires"),
			a("It needs a fixed height: a new `caseRelatedList.css` with something like `.table-wrapper { height: 28rem; }`."),
		}, []string{"caseRelatedList.css"}, []string{".table-wrapper"}},
		{"Power BI project files", []agent.TranscriptMessage{
			u("I want incremental refresh for FactSales. The table file is SalesModel.SemanticModel/definition/tables/FactSales.tmdl."),
			a("The parameters go in `SalesModel.SemanticModel/definition/expressions.tmdl`."),
		}, []string{"SalesModel.SemanticModel/definition/tables/FactSales.tmdl", "SalesModel.SemanticModel/definition/expressions.tmdl"}, nil},
	})
}

// "There's no unique index on event_id — add one.": "one" is what the
// user just named. Only the verb is shared with the option the user did
// not pick ("Keep the GenServer and add Task.async_stream/3"), which must
// not become a decision; "add one" on its own still takes up a proposal.
func TestAddOneNamesTheUsersOwnThing(t *testing.T) {
	offer := a("Three shapes:\n\n1. **Broadway, processors only.** One insert per message.\n2. **Broadway with a batcher.** One `insert_all` per batch.\n3. **Keep the GenServer and add `Task.async_stream/3`** over each batch. Smallest diff.\n\nI'd go with 2.")
	x := extractT(t, u("How would you structure the SQS consumer?"), offer,
		u("Option 2, looks right. There's no unique index on event_id, only a plain index — add one."))
	checkDecisions(t, x, [][]string{{"batcher"}}, [][]string{{"GenServer"}})

	x = extractT(t, u("Inserts are slow on the events table."),
		a("Lookups by `event_id` scan the table. I'd add a unique index on `event_id`."),
		u("add one"))
	checkDecisions(t, x, [][]string{{"unique index"}}, nil)
}
