package offline

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/baton-dev/baton/agent"
)

// Extract reads the latest agent.MaxTranscriptMessages of msgs with rules and
// returns what sounds decided, the files mentioned, the risks raised and a
// short summary. It is deterministic and makes no network call. Sources
// index msgs as given. The conversation is only ever matched against
// patterns: text in it cannot change what the rules do.
func (p *Provider) Extract(ctx context.Context, msgs []agent.TranscriptMessage) (agent.Extraction, error) {
	if err := ctx.Err(); err != nil {
		return agent.Extraction{}, err
	}
	offset := max(0, len(msgs)-agent.MaxTranscriptMessages)
	x := extract(msgs[offset:])
	if offset > 0 {
		shift := func(src []int) {
			for i := range src {
				src[i] += offset
			}
		}
		for i := range x.Decisions {
			shift(x.Decisions[i].Sources)
		}
		for i := range x.FilesReferenced {
			shift(x.FilesReferenced[i].Sources)
		}
		for i := range x.Risks {
			shift(x.Risks[i].Sources)
		}
	}
	return x, nil
}

// transcript is a conversation split into sentences.
type transcript struct {
	msgs  []agent.TranscriptMessage
	sents [][]sentence // per message
	all   []sentence
	df    map[string]int // in how many messages each word occurs, as counted
	// lowerMsgs are the messages lower-cased (see lowerMsg).
	lowerMsgs []string
	// proposals caches proposal per assistant message; nil: none.
	proposals map[int]*sentence
	// sets caches wordsOf per message and sentence.
	sets [][]tokenSet
	// stmts caches statementOf per message and sentence.
	stmts [][]cachedString
	// leads caches riskLeadOf per message and sentence.
	leads [][]cachedString
	// props caches assistantProposals per message.
	props     [][]proposal
	propsDone []bool
}

// digestHeader opens every reply of the offline partner. Those replies
// restate the conversation, so the rules skip them: reading them would count
// everything twice and take the digest's own words for the team's.
const digestHeader = "**Offline digest**"

func newTranscript(msgs []agent.TranscriptMessage) *transcript {
	msgs = romanPicks(msgs)
	t := &transcript{msgs: msgs, sents: make([][]sentence, len(msgs))}
	for i, m := range msgs {
		if m.Role == agent.RoleAssistant && strings.HasPrefix(m.Content, digestHeader) {
			continue
		}
		t.sents[i] = splitMessage(i, m)
		t.all = append(t.all, t.sents[i]...)
	}
	return t
}

// wordsOf returns the content words of sentence s of the transcript,
// worked out once. The set is shared: callers must not change it.
func (t *transcript) wordsOf(s sentence) tokenSet {
	if t.sets == nil {
		t.sets = make([][]tokenSet, len(t.msgs))
	}
	if t.sets[s.msg] == nil {
		t.sets[s.msg] = make([]tokenSet, len(t.sents[s.msg]))
	}
	if set := t.sets[s.msg][s.idx]; set != nil {
		return set
	}
	set := newTokenSet(s.lower)
	t.sets[s.msg][s.idx] = set
	return set
}

// cachedString is a string worked out once.
type cachedString struct {
	s    string
	done bool
}

// statementOf returns what sentence s of the transcript states, lower-cased:
// lowerASCII(statement(s.plain)), worked out once.
func (t *transcript) statementOf(s sentence) string {
	if t.stmts == nil {
		t.stmts = make([][]cachedString, len(t.msgs))
	}
	if t.stmts[s.msg] == nil {
		t.stmts[s.msg] = make([]cachedString, len(t.sents[s.msg]))
	}
	c := &t.stmts[s.msg][s.idx]
	if !c.done {
		c.s, c.done = lowerASCII(statement(s.plain)), true
	}
	return c.s
}

// riskLeadOf returns riskLead(s.plain) for sentence s of the transcript,
// worked out once.
func (t *transcript) riskLeadOf(s sentence) string {
	if t.leads == nil {
		t.leads = make([][]cachedString, len(t.msgs))
	}
	if t.leads[s.msg] == nil {
		t.leads[s.msg] = make([]cachedString, len(t.sents[s.msg]))
	}
	c := &t.leads[s.msg][s.idx]
	if !c.done {
		c.s, c.done = riskLead(s.plain), true
	}
	return c.s
}

// lowerMsg returns message i lower-cased, lowering each message once.
func (t *transcript) lowerMsg(i int) string {
	if t.lowerMsgs == nil {
		t.lowerMsgs = make([]string, len(t.msgs))
		for k, m := range t.msgs {
			t.lowerMsgs[k] = lowerASCII(m.Content)
		}
	}
	return t.lowerMsgs[i]
}

// docFreq returns in how many messages word w occurs: as a word or the
// start of one, since w is stemmed ("sweep" occurs in "sweeping"). Counts
// are kept per word on first use.
func (t *transcript) docFreq(w string) int {
	if n, ok := t.df[w]; ok {
		return n
	}
	if t.df == nil {
		t.df = map[string]int{}
	}
	n := 0
	for i := range t.msgs {
		m := t.lowerMsg(i)
		for off := 0; ; {
			k := strings.Index(m[off:], w)
			if k < 0 {
				break
			}
			if at := off + k; at == 0 || !isWordByte(m[at-1]) {
				n++
				break
			}
			off += k + 1
		}
	}
	t.df[w] = n
	return n
}

// extract runs every rule over msgs.
func extract(msgs []agent.TranscriptMessage) agent.Extraction {
	t := newTranscript(msgs)
	x := agent.Extraction{
		Decisions:       findDecisions(t),
		FilesReferenced: collectFiles(filesOf(t)),
		Risks:           findRisks(t),
	}
	if x.Decisions == nil {
		x.Decisions = []agent.ExtractedDecision{}
	}
	if x.FilesReferenced == nil {
		x.FilesReferenced = []agent.ExtractedFile{}
	}
	if x.Risks == nil {
		x.Risks = []agent.ExtractedRisk{}
	}
	attachMitigations(t, &x)
	x.Summary = summarise(t, x)
	return x
}

// Patterns of the decision rules. Each matches lower-cased plain text.
var (
	// injectionRE marks text addressed to an AI reading the conversation.
	injectionHint = cues(`instruction* approved ai prompt* rules you_are_now coding automated autonomous llm* attention`)
	injectionRE   = mustPattern(`(ignore|disregard|forget) (all |any )?(your |the )?(previous|prior|above|earlier) (instructions|prompts?|rules)|approved decision|\bai (assistant|tools?|model)s?\b.*\b(must|should|record|mark)\b|\b(?:note|message|instructions?|attention) (?:to|for) (?:any |all |the )?(?:ai|llms?|(?:ai |automated |autonomous )?coding (?:agents?|assistants?|tools?)|automated (?:agents?|assistants?|tools?))\b|system prompt|\byou are now (?:the|a|an) \w+ (?:assistant|agent|bot)\b|\battention,? (?:all |any )?(?:ai|llms?|automated|autonomous|coding)\b`)
	rejectRE      = mustPattern(`^(no|nope|nah|not|never|without|skip|later|forget|drop the idea|scrap|ditch)\b`)
	notYetRE      = mustPattern(`\bno\b.*\byet\b`)
	rejectCues    = cues(`definitely_not certainly_not absolutely_not of_pain a_nightmare too_painful too_much_work not_possible isn't_possible is_impossible not_an_option off_the_table don't do_not won't shouldn't never is_out are_out rather_not vetoed scares_me worries_me makes_me_nervous not_a_fan let_me_not let's_not lets_not not_in_this_change overkill not_now not_part_of_this forget_the forget_about scrap_the ditch_the`)
	explicitRE    = mustPattern(`^(ok|okay|sure|yep|yeah|ship)\b|\bgo\.?$|^\(?[a-h]\)\.?$|\boption\s+(\d|[a-h])\b|` + needRE)
	// needRE opens a requirement the user states in full ("we also need a
	// plugins list command").
	needRE       = `^we (?:also |still )?need (?:a|an|the)\b`
	explicitCues = cues(`let's lets go_with going_with it_is do_that do_both do_it do_this agreed sounds_good yes decided we'll_go we'll_use we'll_do stick_with after_all switch_to switching_to ship_it`)
	impliedCues  = cues(`fine is_good good ok works stay stays keep sure perfect great acceptable is_right are_right for_now`)
	reversalCues = cues(`change_of_plan change_of_mind after_all actually instead is_out are_out vetoed wait again let_me_not let's_not lets_not on_second_thought scratch_that changed_my_mind switch_to switching_to not_anymore forget_the forget_about scrap_the ditch_the`)
	optionRefRE  = mustPattern(`\b(?:option|approach|choice|number|#)\s*(\d|[a-h])\b|\bgo with (\d)\b|^\(([a-h])\)\.?$|^\(?([a-h]|\d)\)?\s*[.,]\s*|\b(?:go with|do|take|pick|choose)(?: your)? \(?([a-h])\)?[.!]?$`)
	// trailLabelRE is an option's letter ending a sentence: "so we need
	// the real restart, (b)".
	trailLabelRE = mustPattern(`,\s*\(([a-h])\)[.!]?$`)
	proposalRE   = mustPattern(`^(cleaner|fix)\b|^(so|then),? `)
	proposalCues = cues(`i'd i_would recommend suggest common_fix the_usual pragmatic_choice simplest my_pick`)
	leadRE       = mustPattern(`^(?:(?:ok|okay|yes|yeah|yep|sure|fine|great|(?:good|fair) point(?: about [^,.;:]*)?|good|alright|so|and|also|then|hmm+|ugh|oh|right|agreed|cool|perfect|lol|actually|well|but|just|please|now|anyway|got it|sounds good|thanks|for now|for v1|i think|i guess)\b[\s,.!:—–-]*)+`)
	letsRE       = mustPattern(`^(?:let'?s|we'll|we will|i'll|we should)\s+(?:just\s+)?(?:(?:go with|do|go for|stick with)\b)?\s*(?:your\s+)?`)
	trailRE      = mustPattern(`(?:[\s,]+(?:yes|it is|is fine|are fine|fine|then|please|agreed|sounds good|works|is good|is right|are right|ok|sure|after all|instead))+[.!]*$`)
)

// imperVerbs are the verbs that open an instruction ("add a cap", "use
// HS256"); imperPhrases the same of two words.
var (
	imperVerbs = wordSet(`add use keep put remove delete drop make move switch rotate memoize memoise store return handle show
		run split cap set enable disable deploy ship warn log leave update virtualise virtualize roll
		support create expose apply treat merge replace alert throttle retry limit route send mark include
		exclude print document migrate encrypt pin cache index validate check wrap stream emit generate
		rename extract resolve redirect require reject accept block schedule batch hash sign stay prefer
		honour honor expire vendor bump scope prefix verify port partition guard truncate skip reflash pass
		format grant load serve enforce introduce implement adopt convert rewrite wire register reuse fetch
		measure monitor notify bundle compress configure consolidate copy debounce decouple deprecate
		detect disallow dispatch downgrade upgrade dedupe deduplicate embed escape evict expand export import
		filter flush forward freeze gzip hide hoist inline inject install invalidate isolate lower raise
		mirror normalize normalise offload paginate parallelize parallelise parse persist poll precompute
		prefetch preload prune publish purge push pull rebuild reduce refactor refresh regenerate
		release reload render reorder replay request reserve reset restart restore restrict retain revert
		revoke scale separate serialize serialise shard share shorten sort spawn stop start subscribe swap
		sync tighten toggle trim trigger unify upload allow assign attach avoid backfill call catch
		centralize centralise collapse combine commit compare compute consume defer define delegate derive
		discard drain encode decode ensure evaluate execute extend fix flatten force hardcode ignore
		increase decrease lift listen mount narrow pick prepend append prioritize prioritise promote protect
		provide provision query relax rely remind repeat resize rethrow retire select simplify snooze strip
		submit take tell transform translate tune turn unwrap unlock lock backport cancel clear clone
		decrypt initialize initialise instrument invert kill launch link minimize minimise omit override
		patch pause prepare preserve prevent reconcile redact refuse reword salt shuffle silence squash
		supply suppress throw upsert vet track broadcast buffer replicate declare sample authenticate
		interpolate enqueue clamp propagate bind gate boost autosave reindex reprocess downsample ingest
		widen postpone classify increment whitelist allowlist blocklist blacklist denylist fork
		benchmark annotate archive authorize authorise bootstrap rerun retest unpin unregister
		unsubscribe wipe queue stub`)
	imperPhrases = []string{"fall back", "go for"}
)

// imperative reports whether lower-cased text opens with a verb that
// instructs ("add …", "fall back to …"), as a whole word.
func imperative(lc string) bool {
	end := 0
	for end < len(lc) && isREWordByte(lc[end]) {
		end++
	}
	if end+1 < len(lc) && (lc[end] == '.' || lc[end] == '/' || lc[end] == '-') && isREWordByte(lc[end+1]) {
		return false // "run.sh sources …", "cache/keys.go": a file, no verb
	}
	if imperVerbs[lc[:end]] && end > 0 {
		// "Support does that all the time": a noun, the subject of a verb.
		next, _, _ := strings.Cut(strings.TrimLeft(lc[end:], " "), " ")
		next = strings.TrimRight(next, ",.;:!")
		return end == len(lc) || lc[end] != ' ' || !subjectOf[next] && !verbOfSubject(next)
	}
	for _, p := range imperPhrases {
		if strings.HasPrefix(lc, p) && (len(lc) == len(p) || !isREWordByte(lc[len(p)])) {
			return true
		}
	}
	return false
}

// verbOfSubject reports whether w is a verb said of a subject ("reads",
// "stores", "pushes"): then the word before it is that subject ("Fetch
// reads the users table"), not an instruction.
func verbOfSubject(w string) bool {
	if factVerbs[w] && !adverbs[w] {
		return true
	}
	if len(w) < 4 || !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ss") {
		return false
	}
	return imperVerbs[w[:len(w)-1]] || strings.HasSuffix(w, "es") && imperVerbs[w[:len(w)-2]]
}

// adverbs are the words of factVerbs that are no verbs: "vendor only the
// parser" instructs.
var adverbs = wordSet(`only already usually`)

// subjectOf are the verbs that make the word before them their subject.
var subjectOf = wordSet(`is are was were does doesn't isn't aren't has hasn't will won't would can can't`)

// isREWordByte reports whether b is a word character as regexp's \b reads
// it: an ASCII letter, digit or underscore.
func isREWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// terseWords is how many content words an answer has at most to count as
// terse: the assistant's sentence it accepts says it in full.
const terseWords = 7

// trailEnds are the words trailRE can end with, before any "." or "!".
var trailEnds = []string{"yes", "is", "fine", "then", "please", "agreed", "good", "right", "works", "now", "ok", "sure", "all", "instead"}

// untrail returns s without the agreement trailRE finds at its end ("…,
// yes", "… for now"). It tries the pattern only when s ends with one of its
// words: unanchored at the start, it is slow to fail.
func untrail(s string) string {
	end := strings.TrimRight(s, ".!")
	if strings.HasSuffix(end, " as it is") {
		return s // "leave events.py as it is": unchanged, not "X it is"
	}
	for _, w := range trailEnds {
		if strings.HasSuffix(end, w) {
			return trailRE.ReplaceAllString(s, "")
		}
	}
	return s
}

// mayBeExplicit is a quick test that lower-cased text has what explicitRE
// needs: a leading "ok", "sure", "ship", "(b)" or "we", a final "go", or
// "option".
func mayBeExplicit(lc string) bool {
	return len(lc) <= 4 || hasWordPrefix(lc, "ok", "okay", "sure", "yep", "yeah", "ship", "we") ||
		strings.HasSuffix(strings.TrimSuffix(lc, "."), "go") || strings.Contains(lc, "option")
}

// hasWordPrefix reports whether s opens with one of prefixes followed by
// the end of s or a character that is not a letter, digit or underscore,
// as regexp's \b reads it.
func hasWordPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) && (len(s) == len(p) || !isREWordByte(s[len(p)])) {
			return true
		}
	}
	return false
}

// hasWordSuffix reports whether s ends with one of suffixes, preceded by
// the start of s or a character that is not a letter, digit or underscore.
func hasWordSuffix(s string, suffixes ...string) bool {
	for _, p := range suffixes {
		if strings.HasSuffix(s, p) && (len(s) == len(p) || !isREWordByte(s[len(s)-len(p)-1])) {
			return true
		}
	}
	return false
}

// isQuestion reports whether lower-cased text asks rather than states: it
// ends with a question mark or opens with a hedge ("maybe", "not sure"),
// or only leans ("tbh (c) is tempting too").
func isQuestion(lower string) bool {
	return strings.HasSuffix(strings.TrimRightFunc(lower, unicode.IsSpace), "?") ||
		hasWordPrefix(lower, "maybe", "not sure", "perhaps", "i wonder", "wondering") ||
		strings.Contains(lower, "tempting") && !strings.Contains(lower, "let's") ||
		(strings.HasPrefix(lower, "wh") || strings.HasPrefix(lower, "how")) && whQuestionRE.MatchString(lower)
}

// whQuestionRE is a question asked without its question mark: a question
// word and then a verb that asks ("what can we do about …", "how do we
// stop …", "how long would it last", "what about the enemies").
var whQuestionRE = mustPattern(`^(?:what|how(?: long| much| many| often)?|where|who|why) (?:can|could|do|does|did|should|would|will|is|are|about)\b`)

// isRejection reports whether a lower-cased clause turns something down
// ("no Redis", "let's not", "no auth yet").
func isRejection(lc string) bool {
	return rejectRE.MatchString(lc) || rejectCues.match(lc) || strings.Contains(lc, "yet") && notYetRE.MatchString(lc)
}

// isInjection reports whether lower-cased text addresses an AI reading the
// conversation ("ignore previous instructions").
func isInjection(lower string) bool {
	return injectionHint.match(lower) && injectionRE.MatchString(lower)
}

// candidate is a decision being built.
type candidate struct {
	agent.ExtractedDecision
	msg     int
	subject tokenSet // the words the user said about it, for reversals
	group   int      // the option list it chose (see listGroup), or -1
	removed bool
}

// previousAssistant returns the index of the last assistant message before
// message i, or -1.
func previousAssistant(t *transcript, i int) int {
	for j := i - 1; j >= 0; j-- {
		if t.msgs[j].Role == agent.RoleAssistant {
			return j
		}
	}
	return -1
}

var (
	clauseSplitRE = mustPattern(`;\s+|\s+[—–]\s+|\s+-\s+|\x00`)
	letsSplitRE   = mustPattern(`(?i),\s+((?:so |but |and )?let'?s\b)`)
	yesSplitRE    = mustPattern(`(?i),\s+((?:and )?(?:yes|yep|yeah)\s)`)
	yesAllSplitRE = mustPattern(`(?i)^((?:yes|yep|yeah|ok|okay) to (?:all|both)(?: (?:that|of that|of it|of them|of these|three|four|five))?),\s+`)
	leadingNoRE   = mustPattern(`^(no|not|don't|do not|never)\b`)
	trailingNoRE  = mustPattern(`, (?:(?:definitely|certainly|absolutely) not|no|not|never|without|forget|skip|drop|scrap|ditch|(?:we|i) (?:don't|do not|won't|can't)) `)
)

// spacedDash reports whether s has a "-" after a space, as a dash
// between clauses has ("Rotate - no history rewrite").
func spacedDash(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] == '-' && (s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n' || s[i-1] == '\f' || s[i-1] == '\r') {
			return true
		}
	}
	return false
}

// arrowLabelRE is a short label and an arrow opening a user's sentence:
// "redis down → ", "429 -> ".
var arrowLabelRE = mustPattern(`^((?:[\w'/.-]+ ){0,3}[\w'/.-]+) (?:→|->|=>) \S`)

// userClauses splits a user's sentence into clauses: at semicolons, dashes
// and before ", let's", after a leading refusal ("No cap, sliding 30 days is
// fine") and before a trailing one ("Rotate, no history rewrite").
// wasGoingRE is a first thought the user gives up in the same breath: "I
// was going to say zarr because everyone says zarr, but …".
var wasGoingRE = mustPattern(`(?i)\b(?:i was|i'd been|we were) (?:going|about) to (?:say|suggest|propose|pick|go with|use)\s+([^,.;:]+?)(?:\s+(?:because|since|as)\b[^;]*?)?,?\s+but\s+`)

func userClauses(s string) []string {
	var out []string
	if containsAny(s, "→", "->", "=>") {
		if m := arrowLabelRE.FindStringSubmatchIndex(s); m != nil && !turnsDown(lowerASCII(s[m[1]-1:])) {
			// "redis down → fail open, log a warning": a condition and
			// what to do then, as "redis down: fail open" is ("not synced
			// → no reboot, yes" stays a refusal).
			s = s[:m[3]] + ": " + s[m[1]-1:]
		}
	}
	if strings.Contains(s, "going to") || strings.Contains(s, "about to") {
		if m := wasGoingRE.FindStringSubmatchIndex(s); m != nil {
			// "I was going to say zarr because …, but Tomasz uses NCL":
			// the user's own first thought, given up.
			s = s[:m[0]] + "no " + s[m[2]:m[3]] + "\x00" + s[m[1]:]
		}
	}
	if strings.Contains(lowerASCII(s), "let") {
		s = letsSplitRE.ReplaceAllString(s, "\x00$1")
	}
	if strings.Contains(s, ", ") && containsAny(lowerASCII(s), "yes", "yep", "yeah", "ok") {
		// "yes migrate, yes validate": two answers; "yes to all that,
		// 3.4 too": the plan, then more.
		if yesSplitRE.MatchString(s) {
			s = yesSplitRE.ReplaceAllString(s, "\x00$1")
		}
		if yesAllSplitRE.MatchString(s) {
			s = yesAllSplitRE.ReplaceAllString(s, "$1\x00")
		}
	}
	if strings.Contains(s, ", and ") {
		s = andVerbSplit(s)
	}
	if reason, rest, ok := strings.Cut(s, ", so "); ok && reason != "" {
		// "we already have Redis, so scrap in-memory and use the Redis
		// store": the reason, then what it turns down and takes.
		if lr := lowerASCII(rest); hasWordPrefix(lr, "scrap", "drop", "ditch", "forget", "skip") && refusedObject(lr) != "" {
			s = reason + "\x00" + rest
		}
	}
	if m := topicDashNoRE.FindStringSubmatchIndex(lowerASCII(s)); m != nil {
		// "Heartbeat messages — no, three other teams consume this": a
		// topic turned down, as with a colon.
		s = s[:m[3]] + ": " + s[m[4]:]
	}
	parts := []string{s}
	if strings.ContainsAny(s, ";—–\x00") || spacedDash(s) {
		parts = clauseSplitRE.Split(s, -1)
	}
	for _, c := range parts {
		lc := lowerASCII(c)
		if m := topicNoRE.FindStringSubmatchIndex(lc); m != nil {
			// "re the two PRs: no, do both steps in one PR": the topic
			// turned down, then what is done instead.
			out = append(out, "no "+c[m[2]:m[3]])
			if rest := strings.TrimSpace(c[m[1]:]); rest != "" {
				out = append(out, rest)
			}
			continue
		}
		if i := strings.Index(c, ", "); i > 0 && (leadingNoRE.MatchString(lc) || refuseLabelRE.MatchString(lc[:i]) || labelNoRE.MatchString(lc[:i])) {
			// "No cap, sliding 30 days", "ok scrap A, go with B": the
			// refusal, then what is taken.
			out = append(out, c[:i], c[i+2:])
			continue
		}
		// "Rotate, no history rewrite": what is taken, then what is not.
		if loc := trailingNoRE.FindStringIndex(lc); loc != nil && len(tokens(strings.TrimSpace(unleadAck(lc[:loc[0]])))) > 0 {
			out = append(out, c[:loc[0]], c[loc[0]+2:])
			continue
		}
		out = append(out, c)
	}
	return out
}

// andVerbSplit marks ", and " before an instruction as a clause break:
// "Retries on the loaders only, and make load_stripe merge on charge id
// first" says two things, the second an instruction of its own.
func andVerbSplit(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, ", and ")
		if i < 0 {
			break
		}
		rest := s[i+len(", and "):]
		b.WriteString(s[:i])
		if imperative(lowerASCII(rest)) {
			b.WriteString("\x00")
		} else {
			b.WriteString(", and ")
		}
		s = rest
	}
	b.WriteString(s)
	return b.String()
}

// topicNoRE is a topic, then "no": "re the two PRs: no, …", "caching:
// nope." It captures the topic.
var topicNoRE = mustPattern(`^(?:re:?\s+|about\s+|as for\s+|regarding\s+)?([a-z][^:,;]{1,40}):\s*(?:no|nope|nah)\b[,.;!]*\s*`)

// topicDashNoRE is a topic, a dash, then "no" alone: "Heartbeat messages —
// no, …". Not "Sliding window — no cap", where "no" opens a phrase.
var topicDashNoRE = mustPattern(`^([a-z][^:,;—–]{1,40}?)\s+[—–-]\s+((?:no|nope|nah)(?:[,.;!]|$))`)

// labelNoRE is an option's label turned down: "3 no", "(b) nope".
var labelNoRE = mustPattern(`^\(?(?:[a-h]|\d{1,2})\)?\s+(?:no|nope|nah)$`)

// refuseLabelRE is a clause that turns down an option by its label
// ("scrap A", "ok, drop option 2").
var refuseLabelRE = mustPattern(`^(?:(?:ok|okay|so|and|hm+)\W+)*(?:scrap|drop|skip|forget|ditch|not|no)\s+(?:option\s+)?\(?([a-h]|\d{1,2})\)?[.!]?$`)

// commitRE opens a change the user says they are making: "we're dropping
// TGA", "we are moving the docs to the wiki".
var commitRE = mustPattern(`^(?:we're|we are) (?:now |also )?([a-z]+ing)\b`)

// changeIng are the verbs of a change in progress ("we're dropping X"),
// unlike those of a state ("we're running Postgres 15", "we're seeing
// errors").
var changeIng = wordSet(`dropping removing moving switching migrating replacing retiring deprecating killing keeping sticking standardizing standardising banning adding splitting merging pinning`)

// commits reports whether a user's clause in reply to the assistant,
// lower-cased and without its acknowledgement, states a decision of the
// user's own: a change they are making. The opening message states the
// goal the conversation is about, not a decision taken in it.
func commits(unled string, prev int) bool {
	if prev < 0 || !strings.HasPrefix(unled, "we") {
		return false
	}
	if m := commitRE.FindStringSubmatch(unled); m != nil {
		return changeIng[m[1]]
	}
	// "We'll run it Sunday 6am with the DBA watching": what the user says
	// they will do.
	rest, ok := strings.CutPrefix(unled, "we'll ")
	if !ok {
		rest, ok = strings.CutPrefix(unled, "we will ")
	}
	return ok && imperative(strings.TrimPrefix(rest, "just "))
}

// negatedVerdictRE is a verdict said with "not" ("downtime is not
// acceptable", "that isn't good"): a constraint or a refusal, no approval.
var negatedVerdictRE = mustPattern(`\b(?:not|isn't|aren't|wasn't|never|no longer|doesn't|don't)\s+(?:really |very |quite |at all |entirely )?(?:fine|good|ok|okay|acceptable|great|perfect|right|works?|sure)\b`)

// doThingRE is a terse clause that takes a proposal by pointing at it:
// "do the csv thing too", "let's do the resetreas one".
var doThingRE = mustPattern(`^(?:let'?s |please )?do the [\w .+/-]{2,30}? (?:thing|one|part|bit|idea|change|fix|approach)(?: too| as well| also)?[.!]*$`)

// decide turns a user clause into a decision when it agrees to something.
func decide(t *transcript, i, prev int, c, lc string) *candidate {
	conf := 0.0
	unled := strings.TrimSpace(unleadAck(lc))
	if prev < 0 && fullSentenceRE.MatchString(unled) {
		return nil // "We need a cache for the API" opening the talk is its goal
	}
	switch {
	case explicitCues.match(lc) || mayBeExplicit(lc) && explicitRE.MatchString(lc) || unled != lc && mayBeExplicit(unled) && explicitRE.MatchString(unled) || commits(unled, prev):
		conf = 0.9
	case imperative(unled) || strings.HasPrefix(unled, "we should ") && imperative(unled[len("we should "):]) || doThingRE.MatchString(unled):
		conf = 0.75
	case impliedCues.match(lc) && !negatedVerdictRE.MatchString(lc):
		conf = 0.6
	case echoesOption(t, prev, lc):
		conf = 0.55
	case namesOfferedLabel(t, i, prev, unled):
		conf = 0.85 // "2, summary step", "and do (b)": an option, by its label
	default:
		return nil
	}
	d := &candidate{msg: i, group: -1, subject: newTokenSet(lc)}
	d.Sources = []int{i}
	if controlRE.MatchString(unled) || laterRE.MatchString(unled) {
		return nil // "ship", "v5 later on its own": nothing decided for now
	}
	body := strings.TrimSpace(unlead(letsRE, unled))
	if refusalFirstRE.MatchString(body) {
		// "Scratch the merge then, go with insert_overwrite": what is
		// taken, without what it replaces.
		_, rest, _ := strings.Cut(body, ", ")
		body = strings.TrimSpace(unlead(letsRE, rest))
	}
	body = strings.TrimSpace(untrail(body))
	content := cutLike(c, body)

	// "option 2", "(b)", "go with 1": the option of the assistant's list.
	refRE := optionRefRE
	g := optionRefRE.FindStringSubmatch(body)
	if g == nil && strings.HasSuffix(strings.TrimRight(body, ".!"), ")") {
		refRE, g = trailLabelRE, trailLabelRE.FindStringSubmatch(body)
	}
	if g == nil && offeredLabel(t, i, prev, labelLeadRE, body) {
		refRE, g = labelLeadRE, labelLeadRE.FindStringSubmatch(body)
	}
	if g != nil && prev >= 0 && !decimalRE.MatchString(body) {
		label := strings.Join(g[1:], "")
		rest := strings.TrimSpace(refRE.ReplaceAllString(body, ""))
		if refRE == labelLeadRE && strings.Contains(g[0], "for") {
			rest = "" // "2 for last_topic, …": what follows names the topic
		}
		if ai, opt, item, ok := findOption(t, i, label, newTokenSet(rest)); ok {
			d.group = listGroup(ai, 0)
			props := t.assistantProposals(ai)
			var name tokenSet // the option's name, when it has one
			for k, p := range props {
				if p.label == label && p.option && p.item == item {
					d.group = listGroup(ai, p.list)
					if text := props[k].decision(); text != "" {
						opt = text // the option as its pick would say it
					}
					if p.name != "" {
						name = p.title
					}
					break
				}
			}
			d.Sources = []int{ai, i}
			// "we need the real restart, (b)": words that only name the
			// option say no more than the option does.
			switch {
			case len(tokens(rest)) >= 3 && !hasWord(rest):
				// "2, 10 s / 20 s": the option, with the values chosen.
				d.Content = tidy(firstWords(opt, 24)) + "; " + strings.TrimRight(cutLike(c, rest), ".!")
			case len(tokens(rest)) >= 3 && !(name != nil && namesAll(newTokenSet(rest), name)):
				d.Content = tidy(cutLike(c, rest))
			default:
				d.Content = tidy(firstWords(opt, 30))
			}
			d.Confidence = 0.85
			return d
		}
	}
	n := len(tokens(lowerASCII(content)))
	if n == 0 {
		// "ok, do that": the assistant's proposal, if it made one.
		if prev < 0 {
			return nil
		}
		prop, ok := recommendation(t, prev)
		if !ok {
			return nil
		}
		d.Content = tidy(firstWords(prop.plain, 30))
		d.Sources = []int{prev, i}
		d.Confidence = 0.6
		return d
	}
	d.Content = tidy(content)
	d.Confidence = conf
	d.Content = tidy(withoutReason(content))
	if oneRE.MatchString(body) && !strings.HasPrefix(strings.TrimSpace(t.msgs[i].Content), strings.TrimSpace(c)) {
		// "There's no unique index on event_id — add one.": "one" is what
		// the user just named, not an option of the assistant's that has
		// the same verb.
		return nil
	}
	if n < terseWords && prev >= 0 && !fullSentenceRE.MatchString(unled) && !leadingNoRE.MatchString(body) && !turnsDown(lowerASCII(body)) {
		// A terse answer ("Separate queue, yes") names what it accepts: the
		// assistant's sentence about it says it in full. A refusal ("no
		// global retries", "drop GitHub Pages") does not: that sentence is
		// what it turns down.
		want := newTokenSet(lowerASCII(content))
		if s, ok := bestSupport(t, prev, want); ok && actionable(mainClause(statement(s.plain))) && namesObject(want, t.wordsOf(s)) {
			if strings.Contains(s.lower, "push back") && adviseAgainstRE.MatchString(s.lower) {
				// "Overlay: fine" to "**Overlay widget:** I'd push back
				// on this": agreeing not to do it decides nothing to do.
				return nil
			}
			d.Content = expandTerse(content, s.plain, want)
			d.Sources = []int{prev, i}
			d.group = optionGroup(t, s)
		}
	}
	return d
}

// oneRE is a verb whose object is "one": "add one", "we need one".
var oneRE = mustPattern(`^(?:(?:so|then|and|just|please)\s+)?(?:add|create|write|make|build|set up|need|we need|put in)\s+one[.!]?$`)

// laterRE is a clause that puts something off: a name of a few words,
// then "later" ("partitions later", "v5 later on its own").
var laterRE = mustPattern(`^(?:[\w.+/-]+\s+){1,3}later\b`)

// refusalFirstRE opens a clause that turns something down before it says
// what to do instead ("scratch the merge then, ").
var refusalFirstRE = mustPattern(`^(?:scratch|scrap|forget|ditch)\s[^,;]{1,40},\s+(?:(?:so|and|then)\s+)?(?:go with|use|stay|stick|switch|keep|let'?s)\b`)

// hasWord reports whether s has a word of three letters or more: what
// says something, unlike "10 s / 20 s".
func hasWord(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			if n++; n >= 3 {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

// labelLeadRE opens a clause with an option's label and a comma, a full
// stop, "for" or "yes" ("2, summary step", "b. the heartbeat", "2 for
// last_topic", "3 yes, discoverable + autofill").
var labelLeadRE = mustPattern(`^\(?([a-h]|\d{1,2})\)?(?:\s*[.,]|\s+(?:for|yes|yeah|yep)\b[,.]?)\s+`)

// namesOfferedLabel reports whether a user's clause, lower-cased and
// without its acknowledgement, names by its label an option offered
// before it: "2, summary step", "and do (b)", "option 2".
func namesOfferedLabel(t *transcript, i, prev int, unled string) bool {
	return offeredLabel(t, i, prev, labelLeadRE, unled) || offeredLabel(t, i, prev, optionRefRE, unled)
}

// offeredLabel reports whether re finds a label in unled, with words after
// it when re only opens a clause, that an assistant message before message
// i offers. A decimal ("3.1.", "4.2M customers") is no label.
func offeredLabel(t *transcript, i, prev int, re *pattern, unled string) bool {
	if prev < 0 || decimalRE.MatchString(unled) {
		return false
	}
	g := re.FindStringSubmatch(unled)
	if g == nil || re == labelLeadRE && len(g[0]) == len(unled) {
		return false
	}
	_, _, _, ok := findOption(t, i, strings.Join(g[1:], ""), nil)
	return ok
}

// decimalRE opens text with a decimal number.
var decimalRE = mustPattern(`^\d+[.,]\d`)

// optionGroup returns the group of the option list sentence s is an item
// of, or -1 when it is none: a terse answer said in an option's words picks
// that option, and a later pick from the same list replaces it.
func optionGroup(t *transcript, s sentence) int {
	if !s.bullet {
		return -1
	}
	for _, p := range t.assistantProposals(s.msg) {
		if p.option && p.item == s.item {
			return listGroup(s.msg, p.list)
		}
	}
	return -1
}

// namesObject reports whether support, the assistant's sentence a terse
// answer seems to accept, holds what the answer is about: half of its
// words other than verbs and words of time or assent. "Keep workspaces for
// now" accepts no sentence that only shares "keep" and "now" with it, nor
// "keep FULL on audit_log and events_archive" one about "Keep FULL and add
// an index"; an answer of verbs alone ("rotate") needs only the verbs.
func namesObject(want, support tokenSet) bool {
	object := tokenSet{}
	for w := range want {
		if !imperative(w) && !fillerWords[w] {
			object[w] = struct{}{}
		}
	}
	return len(object) == 0 || 2*looseOverlap(object, support) >= len(object)
}

// fillerWords are the words of a terse answer that say when or how firmly
// ("for now", "yes, later too"), stemmed: they name nothing it accepts.
var fillerWords = wordSet(`now later yes yeah yep fine too also first then still sure good great`)

// reasonRE finds where a user's decision goes on to say why: a clause
// with its own subject ("…, the prometheus folks will kill me", "… so we
// could swap vendors later") or a bare verdict ("…, simpler").
var reasonRE = mustPattern(`(?:[,;]|\s[—–]|\s+so|\s+because|\s+since|\s+as)\s+(?:we|i|they|people|users|everyone|nobody|the [a-z-]+ (?:folks|team|people|guys))\s+[a-z']+|,\s+(?:simpler|cheaper|faster|easier|safer|cleaner)\b`)

// withoutReason cuts a user's decision before the reason it gives, when
// what is left still says something.
func withoutReason(s string) string {
	if loc := reasonRE.FindStringIndex(lowerASCII(s)); loc != nil && len(tokens(lowerASCII(s[:loc[0]]))) >= 2 {
		return s[:loc[0]]
	}
	// "Sliding 30 days is fine, product wants people to stay logged in":
	// after a verdict, a clause that neither instructs nor commits ("we'll
	// deploy at night") is the reason.
	if head, rest, ok := strings.Cut(s, ", "); ok && verdictEndRE.MatchString(lowerASCII(head)) && len(tokens(lowerASCII(head))) >= 2 {
		if lr := lowerASCII(rest); !imperative(lr) && !acceptCuesAny.match(lr) && !explicitChoiceRE.MatchString(lr) {
			return head
		}
	}
	return s
}

// fullSentenceRE opens a clause with its own subject and verb ("we also
// need …", "I want …"): it says what it means in full, with no need of the
// assistant's words.
var fullSentenceRE = mustPattern(`^(?:we|i) (?:also |still |really )?(?:need|want|have to|must)\b`)

// echoesOption reports whether a terse clause ("Subpaths. next-intl.")
// repeats the words of one of the options the assistant just listed.
func echoesOption(t *transcript, prev int, lc string) bool {
	if prev < 0 || words(lc) > 4 {
		return false
	}
	want := newTokenSet(lc)
	if len(want) == 0 {
		return false
	}
	for _, s := range t.sents[prev] {
		if s.bullet && looseOverlap(want, t.wordsOf(s)) == len(want) {
			return true
		}
	}
	return false
}

// cutLike returns the part of original that the lower-cased suffix body
// corresponds to, keeping the original case.
func cutLike(original, body string) string {
	if i := strings.LastIndex(lowerASCII(original), body); i >= 0 && body != "" {
		return original[i : i+len(body)]
	}
	return body
}

// findOption finds the option labelled label in the latest assistant message
// before message i that has one, and returns that message, the option's
// text and its list item (-1 for an option inside a sentence). When the
// message has several items of that label (a numbered section and a
// numbered list in it), the one sharing most words with want, what the
// user said besides the label, is meant; on a tie the last, nearest the
// reply.
func findOption(t *transcript, i int, label string, want tokenSet) (int, string, int, bool) {
	for j := i - 1; j >= 0; j-- {
		if t.msgs[j].Role != agent.RoleAssistant {
			continue
		}
		best, bestN := -1, -1
		for _, s := range t.sents[j] {
			if s.label != label || !s.first {
				continue
			}
			n := 0
			if len(want) > 0 {
				n = looseOverlap(want, newTokenSet(lowerASCII(itemText(t.sents[j], s.item))))
			}
			if n >= bestN {
				best, bestN = s.item, n
			}
		}
		if best >= 0 {
			return j, itemText(t.sents[j], best), best, true
		}
		for _, p := range t.assistantProposals(j) {
			if p.option && p.item < 0 && p.label == label {
				return j, p.body, -1, true // "(b) have the worker …" inside a sentence
			}
		}
	}
	return -1, "", -1, false
}

// itemText returns the sentences of list item item of ss, joined.
func itemText(ss []sentence, item int) string {
	var text []string
	for _, s := range ss {
		if s.item == item {
			text = append(text, s.plain)
		}
	}
	return strings.Join(text, " ")
}

// recommendation returns the sentence in which assistant message j recommends
// something, the last if several do.
func recommendation(t *transcript, j int) (sentence, bool) {
	if t.proposals == nil {
		t.proposals = map[int]*sentence{}
	}
	if p, ok := t.proposals[j]; ok {
		return derefOr(p)
	}
	s, ok := findProposal(t, j)
	if ok {
		t.proposals[j] = &s
	} else {
		t.proposals[j] = nil
	}
	return s, ok
}

// derefOr returns *p and whether p is set.
func derefOr(p *sentence) (sentence, bool) {
	if p == nil {
		return sentence{}, false
	}
	return *p, true
}

// findProposal does the work of proposal.
func findProposal(t *transcript, j int) (sentence, bool) {
	var best sentence
	found := false
	for _, s := range t.sents[j] {
		if !isQuestion(s.lower) && !cautionCues.match(s.lower) && (proposalRE.MatchString(s.lower) || proposalCues.match(s.lower)) {
			best, found = s, true
		}
	}
	return best, found
}

// bestSupport returns the sentence of assistant message j that shares the
// most words with want.
func bestSupport(t *transcript, j int, want tokenSet) (sentence, bool) {
	var best sentence
	bestN, bestItem := 0, 0
	for _, s := range t.sents[j] {
		if isQuestion(s.lower) || words(s.plain) < 4 || hedgeRE.MatchString(s.lower) || asksOpen(s) {
			continue
		}
		n := looseOverlap(want, t.wordsOf(s))
		if n == 0 {
			continue
		}
		// On a tie, the sentence whose list item holds more of the answer
		// ("one zone + the filter": the item with a zone and a filter),
		// then one that proposes (an imperative) or a list item, is likelier
		// to be what the answer accepts than prose around it.
		item := n
		if s.item >= 0 && n < len(want) {
			item = itemOverlap(t, s, want)
		}
		if n > bestN || n == bestN && (item > bestItem || item == bestItem && supportRank(s) > supportRank(best)) {
			best, bestN, bestItem = s, n, item
		}
	}
	return best, bestN >= max(1, (len(want)+1)/2)
}

// itemOverlap returns how many words of want the sentences of s's list
// item say together.
func itemOverlap(t *transcript, s sentence, want tokenSet) int {
	all := tokenSet{}
	for _, o := range t.sents[s.msg] {
		if o.item == s.item {
			for w := range t.wordsOf(o) {
				all[w] = struct{}{}
			}
		}
	}
	return looseOverlap(want, all)
}

// openSectionRE is the label of a list of what is still to decide
// ("Things to decide:", "Open questions").
var openSectionRE = mustPattern(`\b(?:to decide|open questions?|questions for you|undecided)\b`)

// asksOpen reports whether s asks rather than proposes without a question
// mark: "whether you want trace IDs in your logs", or any item of a list
// of what is still to decide.
func asksOpen(s sentence) bool {
	return hasWordPrefix(s.lower, "whether") || s.bullet && s.section != "" && openSectionRE.MatchString(s.section)
}

// supportRank ranks sentences that could be what a terse answer accepts:
// an imperative ("Use table-layout: fixed") over a list item over prose.
func supportRank(s sentence) int {
	r := 0
	if s.bullet {
		r++
	}
	if imperative(strings.TrimSpace(unleadAck(statement(s.lower)))) {
		r += 2
	}
	return r
}

// sharesDistinctive reports whether a and the words of b share a word that
// is rare in the transcript (said in at most a third of its messages).
func sharesDistinctive(a tokenSet, b *echoIndex, t *transcript) bool {
	for w := range a {
		if len(w) >= 3 && b.echoes(w) && t.docFreq(w)*3 <= len(t.msgs)+2 {
			return true
		}
	}
	return false
}

// echoIndex answers echoes for one set of words without reading the whole
// set each time: it keeps the words without hyphens, and their first five
// letters.
type echoIndex struct {
	set    tokenSet
	bare   map[string]bool
	prefix map[string]bool
}

// newEchoIndex indexes set for echoes.
func newEchoIndex(set tokenSet) *echoIndex {
	x := &echoIndex{set: set, bare: make(map[string]bool, len(set)), prefix: make(map[string]bool, len(set))}
	for v := range set {
		if strings.Contains(v, "-") {
			v = strings.ReplaceAll(v, "-", "")
		}
		x.bare[v] = true
		if len(v) >= 5 {
			x.prefix[v[:5]] = true
		}
	}
	return x
}

// echoes reports what echoes(x.set, w) does.
func (x *echoIndex) echoes(w string) bool {
	if _, ok := x.set[w]; ok {
		return true
	}
	bare := w
	if strings.Contains(w, "-") {
		bare = strings.ReplaceAll(w, "-", "")
	}
	return x.bare[bare] || len(bare) >= 5 && x.prefix[bare[:5]]
}

// Patterns of the risk rules.
var (
	riskCues = cues(`worry worried concern* the_catch one_catch catch_is what_if could_break would_break
		will_break break breaks broken risk risks risky downside* danger* pitfall* gotcha* bite bites bitten
		watch_out be_careful caveat* silently leak* stolen steal compromised plaintext defeats corrupt* lose
		loses lost wipe* destroy* overwrit* exhaust* attacker* malicious xss injection fail fails stop_working
		stops_working slow slower slows hurt* cardinality never_shrinks grows_without skewed deferred
		the_problem a_problem real_issue the_issue bug refuse_to_start brick* surprise* wrong can't_be_found
		can't_read lag lags lagging hide graveyard disables
		nervous afraid otherwise worth_planning_for heads-up bites visible_to
		stutter* crash* half-written stale not_guaranteed isn't_called aren't_called
		grows_forever time_out times_out overflow* fills_up evicted unpaid
		race_condition deadlock* randomly split_brain blows can_extract regress* triples doubles
		caution be_aware breaking_change start_failing starts_failing impossible_to dangl* oversubscrib* missed poison* forever flicker* duplicate*
		pile_up piles_up clog* runs_out run_out
		trade-off_is one_more_thing last_note without_it swapping fight_over only_found until_restarted
		cheat* spoof* forge* readable_by redelivered out_of_memory diverge* inconsistent arbitrary
		stop_compiling collide* collision* starve* contention outage downtime stampede spike* expensive
		costly the_cost rolled_back drift* unbounded flaky noisy lock-in
		truncat* unreliable unmaintained use-after-free not_atomic out_of_date linger* access_denied
		hang hangs hanging locked_out logged_out undecryptable orphan* costs_money more_cost extra_cost
		never_arrive* never_reach* cut_off gets_cut runs_twice run_twice a_second_time stop_getting stops_getting
		slows_down too_optimistic`)
	// riskWeakRE marks sentences that only point at the next one ("that's a real risk").
	// announceOnlyRE is a sentence that only announces a concern to come:
	// "One more thing on dates", "Be careful about where retries go".
	announceOnlyRE = mustPattern(`^(?:(?:one|two|three|a few|a couple of|some) (?:more |last )?(?:things?|caveats?|gotchas?|notes?|concerns?|risks?|warnings?)|be careful (?:about|with)|watch out for|worth a heads-up|a word of caution|heads-up)\b[^.:;!?]*[.:!]?$`)
	riskWeakRE     = mustPattern(`^(yes|and yes|right|true)?,?\s*(that's|that is|this is|your worry is|it's)\s+(a\s+)?(real|valid|fair|good)`)
	highCues       = cues(`secur* insecure xss attacker* malicious steal stolen leak* password* secret* plaintext
		compromised credential* token* delete* lose lost data_loss wipe* destroy* overwrit* corrupt* silently
		prod production outage* all_users arbitrary_code injection inject*`)
	lowCues = cues(`minor slightly cosmetic not_much small a_bit annoy* look_like looks_like`)
	// riskLeadRE and the two patterns after it, tried in turn, are the
	// lead that announces a concern: "Note:", "Also —"; "I'm worried
	// that"; "My worry is", "The catch is", "One risk:".
	riskLeadRE     = mustPattern(`(?i)^(?:(?:also|and|but|though)?[, ]*(?:worth planning for|worth knowing|note)[:,]\s*|(?:also|safety|watch out|careful)(?:[:,.]|\s[—–])\s+)\s*`)
	riskLeadFeelRE = mustPattern(`(?i)^(?:[^.:;,]{0,40}?\b)?(?:i'm|i am|we're|we are) (?:just |a bit |really |quite |also )?(?:worried|nervous|concerned|afraid)(?: about the fact)?(?: that)?\s*`)
	riskLeadNameRE = mustPattern(`(?i)^(?:my (?:main )?(?:worry|concern) is(?: that)?|(?:one|the|a|another) (?:catch|risk|downside|problem|issue|caveat|thing)[^:]*:|downside:|caveats?:|catch:|risk:|the catch (?:here |with [^ ]+ )?is(?: that)?|one risk is(?: that)?|i'll say it once and then drop it:)\s*`)
)

// cueList is a set of phrases matched at word boundaries; a phrase ending
// in "*" also matches longer words ("leak*" matches "leaks"). Phrases are
// indexed by their first two bytes, so that matching reads the text once,
// trying at each word only the phrases that can start there; a bitmap of
// those two-byte starts spares the map look-up at most words.
type cueList struct {
	byStart map[uint16][]cue      // by their first two bytes
	starts  *[1 << 10 / 64]uint64 // the startKey hash of each byStart key, small enough to stay in cache
	short   []cue                 // phrases of one byte
}

// startKey is the byStart key of text starting at i, and hash its
// slot in starts. The hash keeps five bits of each byte: distinct for
// lower-case letters, and a collision only costs a map lookup.
func startKey(text string, i int) (key, hash uint16) {
	a, b := text[i], text[i+1]
	return uint16(a)<<8 | uint16(b), uint16(a&31)<<5 | uint16(b&31)
}

// cue is one phrase of a cueList.
type cue struct {
	text   string
	prefix bool // matches longer words too
}

// cues makes a cueList from space-separated phrases, "_" standing for a space.
func cues(s string) cueList {
	c := cueList{byStart: map[uint16][]cue{}, starts: new([1 << 10 / 64]uint64)}
	for p := range strings.FieldsSeq(s) {
		p = strings.ReplaceAll(p, "_", " ")
		k := cue{text: strings.TrimSuffix(p, "*"), prefix: strings.HasSuffix(p, "*")}
		if len(k.text) < 2 {
			c.short = append(c.short, k)
			continue
		}
		key, hash := startKey(k.text, 0)
		c.byStart[key] = append(c.byStart[key], k)
		c.starts[hash/64] |= 1 << (hash % 64)
	}
	return c
}

// match reports whether lower-cased text holds one of the phrases.
func (c cueList) match(lower string) bool {
	for i := 0; i < len(lower); i++ {
		if i > 0 && inCueWord[lower[i-1]] {
			continue // not the start of a word
		}
		if i+1 < len(lower) {
			if key, hash := startKey(lower, i); c.starts[hash/64]&(1<<(hash%64)) != 0 {
				for _, k := range c.byStart[key] {
					if c.at(lower, i, k) {
						return true
					}
				}
			}
		}
		for _, k := range c.short {
			if c.at(lower, i, k) {
				return true
			}
		}
	}
	return false
}

// at reports whether phrase k occurs in lower at i, ending at a word
// boundary unless it is a prefix. A word of a path ("keep/" in "outside
// keep/") is no cue.
func (cueList) at(lower string, i int, k cue) bool {
	if !strings.HasPrefix(lower[i:], k.text) {
		return false
	}
	end := i + len(k.text)
	return k.prefix || end == len(lower) || !inCueWord[lower[end]]
}

// isWordByte reports whether b is part of a word.
func isWordByte(b byte) bool { return wordBytes[b] }

// wordBytes are the bytes of words: letters, digits, "_", "'" and those of
// characters beyond ASCII.
var wordBytes = func() (t [256]bool) {
	for b := range 256 {
		t[b] = b == '_' || b == '\'' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
	}
	return t
}()

// inCueWord are the bytes no cue starts after: those of words, and "-"
// and "/" ("tuned" in "fine-tuned", "fine" in "/fine").
var inCueWord = func() (t [256]bool) {
	t = wordBytes
	t['-'], t['/'] = true, true
	return t
}()

// findRisks reports the concerns raised, from either side.
func findRisks(t *transcript) []agent.ExtractedRisk {
	var out []agent.ExtractedRisk
	var sets []tokenSet
	lastK, lastMsg := -2, -1
	usedK, usedMsg := -1, -1
	for mi, ss := range t.sents {
		for k, s := range ss {
			if mi == usedMsg && k == usedK {
				continue // already read as the concern of the sentence before
			}
			listed := inRiskSection(s) || flagsInjection(s)
			downside, isDownside := optionDownside(t, s)
			if isInjection(s.lower) && !flagsInjection(s) || notDecision.match(s.lower) || s.heading || !listed && !isDownside && (!riskCues.match(withoutAsides(s.lower)) && !modalConcern(t, s) && !conditionalConcern(s) && !consequenceConcern(t, s) && !concernLabelRE.MatchString(s.lower) && !limitBeforeFix(t, ss, k) && !warnsOtherwise(s.lower) || isBackground(s) || isMitigation(s.lower) || notConcern(t, s)) {
				continue
			}
			if isQuestion(s.lower) && !strings.Contains(s.lower, "what if") && !strings.Contains(s.lower, "risk") || !listed && (falseAlarm(s) || fileEntry(s.plain)) {
				continue
			}
			// "On the actual bug, two separate issues:" introduces the
			// list under it; the concerns are its items.
			if !s.bullet && words(s.plain) <= 8 && k+1 < len(ss) && ss[k+1].bullet && strings.HasSuffix(strings.TrimSpace(s.raw), ":") {
				continue
			}
			text := s.plain
			if isDownside {
				text = downside
			} else if riskWeakRE.MatchString(s.lower) || words(stripRiskLead(text)) < 5 || words(s.plain) <= 8 && announceOnlyRE.MatchString(s.lower) {
				// "Two caveats with the time zone switch.": the concern is
				// what the next sentence says.
				if k+1 >= len(ss) || isQuestion(ss[k+1].lower) || refuseItRE.MatchString(ss[k+1].lower) {
					continue // "It's a prompt injection. I'm ignoring it: …"
				}
				text = ss[k+1].plain
				usedK, usedMsg = k+1, mi
			}
			if text == s.plain && !strings.Contains(text, "(") {
				text = t.riskLeadOf(s) // withoutAsides would leave it as it is
			} else {
				text = riskLead(withoutAsides(text))
			}
			text = tidy(concernOnly(riskConsequence(riskClause(text))))
			if flagsInjection(s) {
				if r, j, ok := injectionRiskAt(ss, k); ok {
					text, usedK, usedMsg = r, j, mi
				}
			}
			// "Lose it and the backups are useless": "it" is what the
			// sentence before spoke of.
			if k > 0 && !isDownside && !flagsInjection(s) && words(text) <= 10 && (words(ss[k-1].plain) <= 14 || words(ss[k-1].plain) <= 30 && openRefRE.MatchString(lowerASCII(text))) && !ss[k-1].heading && refersRE.MatchString(lowerASCII(text)) && lastK != k-1 {
				text = strings.TrimRight(tidy(riskLead(withoutAsides(ss[k-1].plain))), ".") + "; " + lowerFirst(text)
			}
			if words(text) < 4 {
				continue
			}
			// A concern that runs over adjacent sentences of one paragraph
			// or list item is one risk; a new list item is a new risk.
			if n := len(out); n > 0 && lastK == k-1 && lastMsg == mi && (s.bullet && !s.first || !s.bullet && !ss[k-1].bullet) && (words(out[n-1].Description)+words(text) <= 28 || openRefRE.MatchString(lowerASCII(text))) {
				out[n-1].Description = strings.TrimRight(out[n-1].Description, ".") + "; " + lowerFirst(text)
				out[n-1].Severity = severity(lowerASCII(out[n-1].Description))
				sets[n-1] = newTokenSet(lowerASCII(out[n-1].Description))
				lastK = k
				continue
			}
			lastK, lastMsg = k, mi
			set := newTokenSet(lowerASCII(text))
			dup := false
			for j, o := range sets {
				if similarity(set, o) >= 0.5 {
					out[j].Sources = distinct(append(out[j].Sources, mi))
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			sets = append(sets, set)
			out = append(out, agent.ExtractedRisk{
				Description: firstWords(text, 40),
				Severity:    severity(lowerASCII(text)),
				Sources:     []int{mi},
			})
		}
	}
	return out
}

// fileEntryRE is a line of a file list: a path, then what the file gets
// ("ingest_db_pool.erl → no crash on connect failure", "a.go: new").
var fileEntryRE = mustPattern("^`?([\\w./@+\\[\\]()-]+?)`?\\s*(?::|\\s[—–-]|\\s?→|\\s->)\\s")

// fileEntry reports whether plain text is a line of a file list: what it
// says the file gets is work, even when it names a failure it removes.
func fileEntry(plain string) bool {
	m := fileEntryRE.FindStringSubmatch(plain)
	return m != nil && strings.ContainsAny(m[1], "./") && looksLikeFile(m[1])
}

// limitRE finds a limitation: what something only does, or does not.
var limitRE = mustPattern(`^((?:[a-z0-9_.'/-]+ ){1,5})(?:only|never|no longer|doesn't|don't|can't|cannot|isn't|aren't|has no|have no|won't)\b`)

// limitBeforeFix reports whether sentence k of ss states a limitation of
// something ("Screen readers only see the rendered rows.") and the sentence
// after it, in the same place, says what to do about it ("Add
// aria-rowcount …"): a concern raised with its fix.
func limitBeforeFix(t *transcript, ss []sentence, k int) bool {
	s := ss[k]
	if s.role != agent.RoleAssistant || k+1 >= len(ss) || ss[k+1].item != s.item ||
		!containsAny(s.lower, "only", "never", "no longer", "n't", "cannot", " no ") || isQuestion(s.lower) || imperative(s.lower) {
		return false
	}
	lc := t.statementOf(s)
	m := limitRE.FindStringSubmatch(lc)
	if m == nil || imperative(lc) {
		return false
	}
	// "A backup you never restored": what people do, not what a thing does.
	subj := strings.Fields(m[1])
	switch subj[len(subj)-1] {
	case "you", "we", "i", "they", "it's", "that's":
		return false
	}
	next := t.statementOf(ss[k+1])
	return imperative(next)
}

// modalRE finds a statement of what something can or would do: its
// subject, the modal and the verb.
var modalRE = mustPattern(`^((?:[a-z0-9_.'/-]+ ){1,6})(?:can|could|might|may|would|must never|must not|should never) (?:not |never |still |also |easily |silently |quietly |then |only )?([a-z]+)`)

// modalNeutral are verbs after a modal that describe rather than warn
// ("would be", "can do").
var modalNeutral = wordSet(`be do help tell use have get go work make mean`)

// modalConcern reports whether s, an assistant's statement, says what
// could happen to something other than the people talking ("Column widths
// can jump while scrolling"): not a proposal, an option or a description
// ("a role that can read …").
func modalConcern(t *transcript, s sentence) bool {
	if s.role != agent.RoleAssistant || !containsAny(s.lower, " can ", " could ", " might ", " may ", " would ", " must n", " should never ") || isQuestion(s.lower) || hedgeRE.MatchString(s.lower) || pronounLead(s.lower) != "" || imperative(s.lower) {
		return false
	}
	lc := strings.TrimPrefix(strings.TrimLeft(t.statementOf(s), " "), "so ")
	if imperative(lc) || strings.HasPrefix(lc, "you ") || strings.HasPrefix(lc, "we ") || strings.HasPrefix(lc, "i ") {
		return false
	}
	m := modalRE.FindStringSubmatch(lc)
	if m == nil || modalNeutral[m[2]] {
		return false
	}
	subj := strings.Fields(m[1])
	switch subj[len(subj)-1] {
	case "that", "which", "who", "so", "nobody", "no", "you", "we", "either":
		return false
	}
	return true
}

// consequenceRE finds what a statement says follows from how things are
// ("…, so every write has to be idempotent", "… means a burst of exports
// delays every email", "… until it's reloaded", "a synchronous query
// blocks every session"), when it reaches further than the thing itself:
// everything, everyone, never, for good, twice.
var consequenceRE = mustPattern(`\b(?:blocks|stalls) (?:every|all)\b|(?:, so |\bmeans? (?:that )?|, which |, and |\buntil |\botherwise\b|, or )[^.;]*?\b(?:every|whole|anyone|everyone|everyone's|never|nothing|no longer|gone|for good|twice|wrong|missing|nil|zero|full|blocks|delays|rejects|rejected|evicts?|evicted|unavailable|stops)\b`)

// reassureTailRE is a consequence that reassures: "so there's nothing to
// clean up", "every hasRole check keeps working", a guarantee ("which only
// sees the snapshot, never the live document"), or a harm it prevents ("so
// a retry never sends twice").
var reassureTailRE = mustPattern(`\b(?:there's nothing|nothing (?:to|needs|else)|buys nothing|nothing (?:there )?changes|keeps? working|still works)\b|\bonly\b[^,;.]{1,40},\s+never\b|\b(?:never|doesn't|don't|won't|can't|cannot|isn't|no longer)\b[^,;.]{0,30}\b(?:twice|second|duplicate\w*|half)\b`)

// concernLabelRE opens a sentence with a label that announces a cost of
// what was just said: "The price:", "Side effect:", "The flip side is
// that", "That's a snag:", "Careful:", "One-off cost to plan for:".
var concernLabelRE = mustPattern(`^(?:(?:the|one|a|that's a|another) )?(?:price|side[- ]effects?|flip side|snag|careful|one-off cost[^:.]{0,30})(?: is that|:)\s`)

// untilRE is a state that lasts until someone acts: "keeps serving the
// old code until it's reloaded".
var untilRE = mustPattern(`\buntil\b[^.;]*?\b(?:restart|reload|redeploy|expire|rebuil)\w*`)

// impactWords gate consequenceRE, which is slow to fail.
var impactWords = cues(`every whole anyone everyone everyone's never nothing no_longer gone for_good twice wrong missing nil zero full blocks delays rejects rejected evict evicts evicted unavailable stops`)

// consequenceConcern reports whether s, an assistant's statement rather
// than a proposal, draws a consequence that reaches everything or lasts
// ("Delivery is at-least-once, so every write has to be idempotent"): a
// concern even without a risk word. A period ("every 15s") is no reach.
func consequenceConcern(t *transcript, s sentence) bool {
	if s.role != agent.RoleAssistant || !impactWords.match(s.lower) && !strings.Contains(s.lower, "until ") || isQuestion(s.lower) || imperative(s.lower) ||
		!containsAny(s.lower, ", so ", "mean", ", which ", ", and ", "until ", "otherwise", ", or ", "blocks every", "stalls every", "blocks all") {
		return false
	}
	lc := t.statementOf(s)
	if imperative(lc) || pronounLead(lc) != "" || hasWordPrefix(lc, "i'm", "whatever", "it's worth") || reassureTailRE.MatchString(lc) {
		return false // a line of a file list is left out by fileEntry, as for every risk rule
	}
	// "Also issue a separate CA, so a dev bundle can never install": a
	// proposal and what it prevents.
	if _, rest, ok := strings.Cut(lc, " "); ok && hasWordPrefix(lc, "also", "only", "just", "then") && imperative(rest) {
		return false
	}
	if strings.Contains(lc, "until ") && untilRE.MatchString(lc) {
		return true
	}
	for _, loc := range consequenceRE.FindAllStringIndex(lc, -1) {
		rest := strings.TrimLeft(lc[loc[1]:], " ~")
		if rest == "" || rest[0] < '0' || rest[0] > '9' {
			return true
		}
	}
	return false
}

// conditionalRE is a condition and what then happens to something other
// than the people talking: "If a new record joins, the key will change",
// "Once the pool is full, requests will wait".
var conditionalRE = mustPattern(`^(?:if|unless|once|without)\b[^,;:]{3,90}, ((?:[a-z0-9_.:'/-]+ ){1,6})(?:will|would|won't|wouldn't) (?:not |never |still |also |then |silently |quietly )?([a-z]+)`)

// conditionalConcern reports whether an assistant's sentence says what
// will go wrong under a condition, as conditionalRE reads it.
func conditionalConcern(s sentence) bool {
	if s.role != agent.RoleAssistant || !hasWordPrefix(s.lower, "if", "unless", "once", "without") {
		return false
	}
	m := conditionalRE.FindStringSubmatch(s.lower)
	if m == nil || modalNeutral[m[2]] {
		return false
	}
	subj := strings.Fields(m[1])
	switch subj[0] {
	case "you", "we", "i", "it's", "that's":
		return false
	}
	return true
}

// refersRE finds a pronoun that stands for something said before.
var refersRE = mustPattern(`\b(?:it|this|that|they|them)\b`)

// openRefRE opens a sentence whose subject is what the sentence before
// described ("That alone can double the cost").
var openRefRE = mustPattern(`^(?:and |but |so )?(?:that|this|it)(?: alone| also| too| in turn)? (?:can|could|will|would|may|might|means|makes|causes|breaks|doubles)\b`)

// openParenRE is a parenthetical left open at the end of a sentence.
var openParenRE = mustPattern(`\s+\([^()]*$`)

// withoutAsides returns s without its parenthetical remarks: a risk word in
// an aside ("versioning (so you can recover a corrupted state)") is not
// what the sentence is about.
func withoutAsides(s string) string {
	if !strings.Contains(s, "(") {
		return s
	}
	return openParenRE.ReplaceAllString(dropParens(s), "")
}

// riskClauseRE splits a long sentence into clauses.
var riskClauseRE = mustPattern(`;\s+|\s+[—–]\s+|:\s+|,\s+(?:and|but|which|so)\s+`)

// riskClause keeps the clause of a long sentence that states the concern,
// with the clause after it when it is short.
func riskClause(s string) string {
	if words(s) <= 30 {
		return s
	}
	parts := riskClauseRE.Split(s, -1)
	for i, p := range parts {
		if !riskCues.match(lowerASCII(p)) {
			continue
		}
		if i > 0 && relativeClause(p) {
			return withClausesBefore(s, parts, i) // "…, which defeats the point": of what comes before
		}
		if words(p) < 8 && i+1 < len(parts) {
			return p + ", " + parts[i+1]
		}
		if words(p) < 8 && i > 0 {
			return parts[i-1] + ", " + p
		}
		return p
	}
	return s
}

// otherwiseRE finds a condition, the precaution it calls for and what
// happens without it: "if X, Y must happen first, otherwise Z".
var otherwiseRE = mustPattern(`(?i)^(if [^,]{8,}?),\s+[^;]*?\b(?:must|should|need to|needs to|has to|have to)\b[^;]*?,?\s+(?:otherwise|or else)\s+(.+)$`)

// riskConsequence states a warning phrased as advice as the concern itself:
// "if X, do Y first, otherwise Z" becomes "if X, Z", and a fix after a
// semicolon ("the table grows forever; a nightly job keeps it small") is
// left out, since the fix is a mitigation, not the risk.
func riskConsequence(s string) string {
	if m := otherwiseRE.FindStringSubmatch(s); m != nil {
		return m[1] + ", " + m[2]
	}
	if head, tail, ok := strings.Cut(s, "; "); ok && words(head) >= 4 {
		if lt := lowerASCII(tail); isMitigation(lt) || !riskCues.match(lt) && riskCues.match(lowerASCII(head)) {
			return head
		}
	}
	return s
}

// lowerFirst lower-cases the first letter of s unless it starts an acronym.
func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && (s[1] < 'A' || s[1] > 'Z') {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// severity rates a risk: high for security and data loss, low for
// inconvenience, medium otherwise.
func severity(lower string) agent.Severity {
	switch {
	case highCues.match(lower):
		return agent.SeverityHigh
	case lowCues.match(lower):
		return agent.SeverityLow
	}
	return agent.SeverityMedium
}

// summarise says in two or three sentences what the transcript is about and
// what it settled.
func summarise(t *transcript, x agent.Extraction) string {
	topic := ""
	for _, s := range t.all {
		if s.role == agent.RoleUser && words(s.plain) >= 4 {
			topic = firstWords(strings.TrimRight(s.plain, ".!?"), 25)
			break
		}
	}
	var b strings.Builder
	if topic == "" {
		b.WriteString("The brainstorm has not stated its topic yet.")
	} else {
		fmt.Fprintf(&b, "The brainstorm starts from: %q.", topic)
	}
	// No counts: the summary is stored, and people pin, edit and remove
	// items after it is written; the review screen counts them live.
	if len(x.Decisions) == 0 {
		b.WriteString(" Nothing sounds decided yet.")
	} else {
		fmt.Fprintf(&b, " The latest decision: %s.", strings.TrimRight(firstWords(x.Decisions[len(x.Decisions)-1].Content, 20), "."))
	}
	return b.String()
}

// plural formats a count of things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
