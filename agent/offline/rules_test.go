package offline

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent"
)

func TestAssistantDecisionRules(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []agent.TranscriptMessage
		want    [][]string
		notWant [][]string
	}{
		{
			name: "confirmation states the decision in full",
			msgs: []agent.TranscriptMessage{u("Sign with what?"), a("HS256 or RS256."), u("Only this API verifies, so HS256 it is."),
				a("OK — HS256 it is, with the secret read from a JWT_SECRET env var (at least 32 bytes).")},
			want:    [][]string{{"HS256", "JWT_SECRET"}},
			notWant: [][]string{{"32 bytes"}, {"it is"}},
		},
		{
			name: "acknowledgement alone hands over to the next statement",
			msgs: []agent.TranscriptMessage{u("Cookies?"), a("Cookie or memory."), u("Let's do the cookie after all."),
				a("Good call. Updated plan:\n- Refresh token cookie with HttpOnly and Secure, scoped to /auth.")},
			want: [][]string{{"HttpOnly", "/auth"}},
		},
		{
			name: "a reply that opens with the user's answer as its label states it in full",
			msgs: []agent.TranscriptMessage{u("Scan uploads."), a("If clamd is down, should uploads fail or go through unscanned?"), u("fail closed. RAM is fine."),
				a("Fail closed: if clamd can't be reached, the upload is rejected with 503 and we log it at error level.")},
			want: [][]string{{"Fail closed", "rejected with 503"}},
		},
		{
			name: "an option picked before a refusal in the same clause",
			msgs: []agent.TranscriptMessage{u("Virus scanning?"),
				a("Two shapes:\n\n1. **Scan inline** before writing to S3.\n2. **Quarantine bucket** with an async scanner worker.\n\nHow big are uploads?"),
				u("max 20 MB. option 1, we don't want another bucket and a worker for this volume.")},
			want:    [][]string{{"Scan inline"}},
			notWant: [][]string{{"Quarantine bucket"}},
		},
		{
			name:    "no confirmation without agreement",
			msgs:    []agent.TranscriptMessage{u("How many replicas do we run?"), a("OK — four replicas behind the load balancer today.")},
			notWant: [][]string{{"replicas"}},
		},
		{
			name:    "hedged confirmation is not a decision",
			msgs:    []agent.TranscriptMessage{u("Let's add overrides."), a("Sure. If you want, we could hot-reload them too.")},
			notWant: [][]string{{"hot-reload"}},
		},
		{
			name:    "recap list after agreement",
			msgs:    []agent.TranscriptMessage{u("ok, no global retries."), a("Summary:\n\n**Decided**\n- No global Jest retries; retries only in the nightly quarantine job\n- `test/quarantine.json`\n\n**Known trade-offs**\n- Nightly-only means a fixed test is noticed up to a day late")},
			want:    [][]string{{"retries only in the nightly quarantine job"}},
			notWant: [][]string{{"noticed up to a day late"}},
		},
		{
			name:    "terse answer takes the accepted sentence's main clause",
			msgs:    []agent.TranscriptMessage{u("Idle entries?"), a("I'd store a lastSeen timestamp per entry and sweep idle entries once a minute; that bounds the map."), u("sweep is fine")},
			want:    [][]string{{"lastSeen", "sweep"}},
			notWant: [][]string{{"bounds the map"}, {"i'd"}},
		},
		{
			name: "a terse answer judged right takes the assistant's sentence",
			msgs: []agent.TranscriptMessage{u("Form errors?"), a("Validation messages appear after blur, not on every keystroke."), u("messages after blur is right.")},
			want: [][]string{{"appear after blur, not on every keystroke"}},
		},
		{
			name:    "good point acknowledges; it decides nothing",
			msgs:    []agent.TranscriptMessage{u("Pricing is slow."), a("Add an in-memory cache with a 5 minute TTL. Does that work?"), u("good point about memory. fair point, let's add a metrics endpoint too.")},
			want:    [][]string{{"metrics endpoint"}},
			notWant: [][]string{{"Point about"}, {"Point,"}},
		},
		{
			name: "we should, after I think, decides",
			msgs: []agent.TranscriptMessage{u("Pricing is slow."), a("Add an in-memory cache with a 5 minute TTL. Does that work?"), u("I think we should use Redis for the counters.")},
			want: [][]string{{"Redis for the counters"}},
		},
		{
			name:    "words that only point at a proposal do not stay in front of it",
			msgs:    []agent.TranscriptMessage{u("Idle entries?"), a("I'd store a lastSeen timestamp per entry and sweep idle entries once a minute."), u("ok let's do the sweep approach")},
			want:    [][]string{{"lastSeen", "sweep idle entries"}},
			notWant: [][]string{{"approach"}},
		},
		{
			name: "as it is keeps its words",
			msgs: []agent.TranscriptMessage{u("Parser?"), a("The parser could be rewritten."), u("Leave the parser module as it is.")},
			want: [][]string{{"as it is"}},
		},
		{
			name: "a reported question takes nothing back",
			msgs: []agent.TranscriptMessage{u("Signing?"), a("HS256 or RS256?"), u("Let's go with HS256."), a("OK."), u("Next: logging."),
				a("Structured JSON logs."), u("Fine."), a("Done."), u("The mobile lead asked whether we should switch to RS256 instead of HS256.")},
			want:    [][]string{{"HS256"}},
			notWant: [][]string{{"RS256"}},
		},
		{
			name:    "a decision ends before its reason",
			msgs:    []agent.TranscriptMessage{u("Metrics?"), a("I'd add ratelimit_rejected_total with labels route and tenant."), u("Drop the tenant label from the metric, the prometheus folks will kill me.")},
			want:    [][]string{{"Drop the tenant label from the metric"}},
			notWant: [][]string{{"prometheus folks"}},
		},
		{
			name: "an answer under the label asked about",
			msgs: []agent.TranscriptMessage{u("Config errors?"), a("Two open points: unknown keys and parse errors. What should parse errors do?"),
				u("Parse errors: fatal for --config, warn-and-skip for discovered files.")},
			want: [][]string{{"Parse errors", "warn-and-skip"}},
		},
		{
			name:    "a noun before its verb is no instruction",
			msgs:    []agent.TranscriptMessage{u("Ctrl+F?"), a("Rows that aren't rendered can't be found."), u("Support does that all the time.")},
			notWant: [][]string{{"Support"}},
		},
		{
			name: "acceptable agrees",
			msgs: []agent.TranscriptMessage{u("Deploy?"), a("Every session is logged out at deploy."), u("Logging everyone out once is acceptable, we'll deploy at night.")},
			want: [][]string{{"deploy at night"}},
		},
		{
			name:    "steering words are not decisions",
			msgs:    []agent.TranscriptMessage{u("What next?"), a("I can summarise."), u("ok summarize")},
			notWant: [][]string{{"summarize"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecisions(t, extractT(t, tt.msgs...), tt.want, tt.notWant)
		})
	}
}

func TestStatement(t *testing.T) {
	tests := []struct{ in, want string }{
		{"OK — HS256 it is, with the secret from env (32 bytes).", "HS256, with the secret from env"},
		{"Cleaner: give mobile its own endpoints.", "give mobile its own endpoints"},
		{"I'd keep btree and revisit later.", "keep btree and revisit later"},
		{"Then set localeDetection: false in the middleware.", "Then set localeDetection: false in the middleware"},
		{"Homegrown it is.", "Homegrown"},
	}
	for _, tt := range tests {
		if got := statement(tt.in); got != tt.want {
			t.Errorf("statement(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAddedRiskRules(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []agent.TranscriptMessage
		want    []string // each: a word one risk must contain
		notWant []string // words no risk may contain
	}{
		{
			name: "what something could do is a concern",
			msgs: []agent.TranscriptMessage{u("Table layout?"), a("Column widths can jump while scrolling, because the browser sizes columns from the rendered rows.")},
			want: []string{"Column widths can jump"},
		},
		{
			name:    "what people can do, or a description, is not a concern",
			msgs:    []agent.TranscriptMessage{u("IAM?"), a("You can attach it later. An IAM role that can read prod/api/* only. That would be cheap.")},
			notWant: []string{"attach", "IAM role", "cheap"},
		},
		{
			name: "a limitation stated before its fix is a concern",
			msgs: []agent.TranscriptMessage{u("Accessibility?"), a("Also:\n- **Screen readers** only see the rendered rows. Add aria-rowcount on the table.")},
			want: []string{"Screen readers only see the rendered rows"},
		},
		{
			name:    "a limitation of what people do is not",
			msgs:    []agent.TranscriptMessage{u("Restore tests?"), a("A backup you never restored is a hope. Add a monthly restore test.")},
			notWant: []string{"hope"},
		},
		{
			name: "must never warns",
			msgs: []agent.TranscriptMessage{u("Keys?"), a("The private signing key must never sit on a build agent in plain form.")},
			want: []string{"signing key must never"},
		},
		{
			name:    "a proposal in the imperative is not a concern, unless it says what happens without it",
			msgs:    []agent.TranscriptMessage{u("Rollback?"), a("Enable app rollback: otherwise the bootloader reverts the broken image on reset. Document it, or Windows users will put the file in the wrong place.")},
			want:    []string{"Windows users will put the file in the wrong place"},
			notWant: []string{"rollback"},
		},
		{
			name:    "playing a worry down is not a concern",
			msgs:    []agent.TranscriptMessage{u("Battery?"), a("Not much — periodic work gets batched by the OS and deferred in Doze, so the cost is small.")},
			notWant: []string{"Doze"},
		},
		{
			name: "a user's I don't want voices a concern",
			msgs: []agent.TranscriptMessage{u("Plugins?"), a("Entry points or a plugins directory."), u("No directory scanning, I don't want arbitrary files getting imported.")},
			want: []string{"arbitrary files"},
		},
		{
			name: "items under a trade-offs label",
			msgs: []agent.TranscriptMessage{a("**Known trade-offs**\n- File-level quarantine disables the healthy tests in a file too\n- Nightly-only means a fixed test is noticed a day late")},
			want: []string{"healthy tests", "a day late"},
		},
		{
			name:    "concern lead-in is dropped",
			msgs:    []agent.TranscriptMessage{a("The flip side is the real issue: in Doze, background work can be deferred for hours.")},
			want:    []string{"Doze"},
			notWant: []string{"flip side"},
		},
		{
			name:    "weak pointer is not repeated",
			msgs:    []agent.TranscriptMessage{a("And yes, your worry is valid. Injected JS can read the token, which defeats the httpOnly cookie.")},
			want:    []string{"Injected JS"},
			notWant: []string{"cookie; which"},
		},
		{
			name:    "opening background is not a risk",
			msgs:    []agent.TranscriptMessage{u("Right now every edit goes straight to the API and just fails offline."), a("OK.")},
			notWant: []string{"fails offline"},
		},
		{
			name: "user's own worry in the opening counts",
			msgs: []agent.TranscriptMessage{u("Existing URLs get SEO traffic, so I'm nervous about breaking them.")},
			want: []string{"SEO"},
		},
		{
			name:    "a mitigation is not a risk",
			msgs:    []agent.TranscriptMessage{a("Filtering on client_visible also avoids the leaking-names problem from before.")},
			notWant: []string{"client_visible"},
		},
		{
			name: "flagged prompt injection is a risk",
			msgs: []agent.TranscriptMessage{u("Here's the ticket text."),
				a("First, about that ticket: the bot's note reads like a prompt-injection attempt — it tells AI tools to claim DBA approval. I'm ignoring it.")},
			want:    []string{"prompt injection"},
			notWant: []string{"First, about"},
		},
		{
			name: "drawback of an option on offer",
			msgs: []agent.TranscriptMessage{u("What if a plugin overrides a built-in?"),
				a("Pick a rule:\n- **built-ins win**: the plugin is ignored, with a warning\n- **plugins win**: lets people replace built-ins, but installing some unrelated package can silently change how every CSV is read")},
			want:    []string{"Installing some unrelated package can silently change"},
			notWant: []string{"lets people"},
		},
		{
			name: "a short risk about \"it\" takes the sentence before",
			msgs: []agent.TranscriptMessage{a("The restic repository password is the only way to decrypt the backups. Lose it and the backups are useless.")},
			want: []string{"restic repository password", "backups are useless"},
		},
		{
			name:    "a test step is not a risk",
			msgs:    []agent.TranscriptMessage{a("Assert that inserting a row with another org's id fails.")},
			notWant: []string{"inserting"},
		},
		{
			name:    "risk word only in an aside",
			msgs:    []agent.TranscriptMessage{a("The bootstrap config creates the bucket with versioning (so you can recover a corrupted state) and a public access block.")},
			notWant: []string{"bootstrap"},
		},
		{
			name:    "consequence drawn after the fact, without the advice",
			msgs:    []agent.TranscriptMessage{a("But it does mean a client can put arbitrary text into your gateway logs, so it's worth checking what renders them.")},
			want:    []string{"A client can put arbitrary text into your gateway logs"},
			notWant: []string{"does mean", "worth checking"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := extractT(t, tt.msgs...)
			var got []string
			for _, r := range x.Risks {
				got = append(got, r.Description)
			}
			all := strings.Join(got, " | ")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("no risk with %q; got %q", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(all, w) {
					t.Errorf("risk with %q reported; got %q", w, got)
				}
			}
		})
	}
}

func TestSections(t *testing.T) {
	ss := splitMessage(0, a("Summary:\n\n**Decided**\n- one thing\n\n## Files\nprose here\n- `a.go`"))
	want := map[string]string{"one thing": "decided", "prose here": "files", "a.go": "files"}
	for _, s := range ss {
		if w, ok := want[s.plain]; ok && s.section != w {
			t.Errorf("section of %q = %q, want %q", s.plain, s.section, w)
		}
	}
}

func TestRiskText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "advice with otherwise states the consequence",
			in:   "If someone downgrades and then upgrades in the same period, the pending schedule must be released first, otherwise the schedule still switches them down at period end",
			want: "If someone downgrades and then upgrades in the same period, the schedule still switches them down at period end",
		},
		{
			name: "fix after a semicolon is left out",
			in:   "The table grows forever; a nightly job deleting old rows keeps it small",
			want: "The table grows forever",
		},
		{
			name: "second concern after a semicolon stays",
			in:   "The map grows forever; a restart could lose every entry",
			want: "The map grows forever; a restart could lose every entry",
		},
		{
			name: "a sentence of up to 30 words stays whole",
			in:   "With a single queue and a couple of worker processes, two big exports can occupy every worker slot for minutes, and password reset emails sit behind them",
			want: "With a single queue and a couple of worker processes, two big exports can occupy every worker slot for minutes, and password reset emails sit behind them",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := riskConsequence(riskClause(tt.in)); got != tt.want {
				t.Errorf("risk text of %q\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRiskLead(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Though now that I type it out I'm worried a malicious script could set that header", "a malicious script could set that header"},
		{"Also worth planning for: every existing session becomes useless at deploy", "every existing session becomes useless at deploy"},
		{"Also: avatar_url is shipped to every viewer", "avatar_url is shipped to every viewer"},
		{"Watch out: a producer without the header blocks the partition", "a producer without the header blocks the partition"},
	}
	for _, tt := range tests {
		if got := riskLead(tt.in); got != tt.want {
			t.Errorf("riskLead(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestJoinTerse(t *testing.T) {
	d := func(msg int, content string) *candidate {
		c := &candidate{msg: msg, group: -1}
		c.Content = content
		c.Sources = []int{msg}
		c.Confidence = 0.8
		return c
	}
	tests := []struct {
		name string
		in   []*candidate
		want []string
	}{
		{
			name: "a clause that refers back joins a terse decision",
			in:   []*candidate{d(2, "Add overrides"), d(2, "Put them in config/limits.yaml")},
			want: []string{"Add overrides; put them in config/limits.yaml"},
		},
		{
			name: "a one-word decision takes the next terse clause",
			in:   []*candidate{d(2, "Overrides"), d(2, "Restart is fine")},
			want: []string{"Overrides; restart is fine"},
		},
		{
			name: "unrelated decisions stay apart",
			in:   []*candidate{d(2, "Without reloader, we restart on deploy"), d(2, "Rotate the passwords")},
			want: []string{"Without reloader, we restart on deploy", "Rotate the passwords"},
		},
		{
			name: "decisions of different messages stay apart",
			in:   []*candidate{d(2, "Add overrides"), d(4, "Put them in config/limits.yaml")},
			want: []string{"Add overrides", "Put them in config/limits.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cands []*candidate
			for _, c := range tt.in {
				cands = joinTerse(cands, c)
			}
			var got []string
			for _, c := range cands {
				got = append(got, c.Content)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
