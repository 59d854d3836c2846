package offline

import (
	"slices"
	"strings"

	"github.com/baton-dev/baton/agent"
)

// Patterns of the added risk rules. Each matches lower-cased plain text.
var (
	// riskSectionRE names a section whose items are risks ("Known
	// trade-offs", "Caveats", "Things to watch").
	riskSectionRE = mustPattern(`\b(?:trade-?offs?|risks?|caveats?|downsides?|gotchas?|pitfalls?|watch out|to watch|concerns?|known issues?)\b`)
	// concernLeadRE is a lead-in that announces a concern before stating
	// it ("The flip side is the real issue:", "One more long-term concern:",
	// "The downside is bluntness —").
	concernLeadRE = mustPattern(`^[^:;—–]{0,60}\b(?:catch|risk|downside|problem|issue|concern|flip side|trade-?off|gotcha|caveat|worry|thing to watch|heads-up|snag|side[- ]effects?|price|careful|cost)\b[^:;—–]{0,50}(?::|\s[—–])\s+`)
	// concernWords gate concernLeadRE, which is slow to fail.
	concernWords = cues(`catch risk downside problem issue concern flip_side trade-off tradeoff gotcha caveat worry thing_to_watch heads-up snag side_effect price careful cost`)
	// mitigationHint gates mitigationRE.
	mitigationHint = cues(`avoids prevents fixes keeps fine problem if stops protects`)
	// mitigationRE marks a sentence that removes a concern rather than
	// raising one.
	mitigationRE = mustPattern(`\b(?:avoids|prevents|also fixes|keeps [a-z ]{0,20}(?:fast|safe)|that's fine|is fine|isn't a problem|not a problem)\b|^(?:if that's too slow|if you later)\b|^if\b.*\b(?:we|you) (?:can|could)\b|\b(?:stops|protects)\b.*\bfrom\b`)
	// flagRE marks an assistant's warning that pasted text addresses AI
	// tools ("contains text addressed to an AI assistant", "an instruction
	// planted for AI tools", "addressed to automated agents", "reads like
	// a prompt-injection attempt"): untrusted input that tries to steer
	// tooling is a risk of its own, whatever it asks for.
	flagRE = mustPattern(`\b(?:addressed to|address(?:es|ing)|aimed at|directed at|(?:planted|meant|written|intended) for|tells?|telling|asks?|asking|instructs?|instructing) (?:an? |the )?(?:(?:ai|llm|language model)s? ?(?:assistants?|tools?|models?|agents?)?|automated (?:assistants?|tools?|agents?|systems?))\b|\bprompt[- ]injection\b|\b(?:asks?|asking|tells?|telling|instructs?|instructing) (?:me|an assistant|the assistant|assistants) to (?:\w+ )?(?:print|paste|cat|commit|delete|remove|dump|upload|send|post|reveal|share|copy|push)\b`)
	// flagHint gates flagRE.
	flagHint = cues(`ai llm* language_model prompt-injection prompt_injection automated assistant asks_me asking_me tells_me telling_me instructs_me`)
	// meansLeadRE opens a sentence that draws the consequence of what was
	// said before ("But it does mean a client can …").
	meansLeadRE = mustPattern(`(?i)^(?:but |and |so )?(?:it|this|that) (?:does |also )?means?(?: that)?\s+`)
	// adviceTailRE is advice after a concern (", so it's worth checking
	// that …"): what to do about it, not the concern.
	adviceTailRE = mustPattern(`(?i),\s+(?:so|which) (?:it's|it is|is) worth\b.*$|,\s+so (?:make sure|you should|you'll want to|check|treat|keep|avoid|don't)\b.*$`)
	// userConcernRE marks a user's own worry, which counts even in their
	// opening description.
	userConcernRE = mustPattern(`\b(?:worr(?:y|ied)|concern|nervous|afraid|scared|risk|what if|(?:don't|do not) want)\b`)
)

// inRiskSection reports whether s is an item listed under a label that
// names risks or trade-offs.
func inRiskSection(s sentence) bool {
	return s.bullet && s.first && s.section != "" &&
		containsAny(s.section, "trade", "risk", "caveat", "downside", "gotcha", "pitfall", "watch", "concern", "issue") &&
		riskSectionRE.MatchString(s.section)
}

// flagsInjection reports whether s is the assistant pointing out that
// pasted text addresses AI tools.
func flagsInjection(s sentence) bool {
	return s.role == agent.RoleAssistant && flagHint.match(s.lower) && flagRE.MatchString(s.lower)
}

// isBackground reports whether s describes the situation the user starts
// from (their opening message) rather than a concern about the change.
func isBackground(s sentence) bool {
	return s.role == agent.RoleUser && s.msg == 0 && !userConcernRE.MatchString(s.lower)
}

// isMitigation reports whether a lower-cased sentence says how a concern is
// avoided, or that there is little to fear ("Not much — …", "That keeps
// working since …").
func isMitigation(lower string) bool {
	return mitigationHint.match(lower) && mitigationRE.MatchString(lower) ||
		hasWordPrefix(lower, "not", "no", "nothing", "that", "it", "this") && reassureRE.MatchString(lower)
}

// reassureRE opens a sentence that answers a worry by playing it down.
var reassureRE = mustPattern(`^(?:not much|not really|not a problem|no problem|nothing breaks|(?:that|it|this) (?:still works|keeps working|is still fine|stays fine))\b`)

// announceLeadRE opens a sentence by announcing that something follows
// which the listener should know, without naming it: "Be aware that",
// "Keep in mind", "One more thing:", "Last note:", "One more gap to be
// aware of:", "Keep an eye on memory:".
var announceLeadRE = mustPattern(`^(?:(?:be aware|keep in mind|bear in mind)(?: that)?[,:]?\s+|(?:one more|one last|last|a last|another|final|keep an eye on|watch)\b[^:.]{0,40}:\s+)`)

// announces reports whether a lower-cased sentence opens with a lead that
// announces what follows ("Keep an eye on memory:"): an imperative in
// form, a warning in use.
func announces(lc string) bool {
	return hasWordPrefix(lc, "be", "keep", "bear", "one", "last", "a", "another", "final", "watch") && announceLeadRE.MatchString(lc)
}

// riskLead strips what announces a concern from the sentence that states
// it: an acknowledgement ("Agreed —"), a known lead ("The catch is") or a
// short lead-in naming the concern ("The flip side is the real issue:").
func riskLead(s string) string {
	s = stripRiskLead(s)
	lc := lowerASCII(s)
	if strings.Contains(lc, "mean") {
		s = meansLeadRE.ReplaceAllString(s, "")
		lc = lowerASCII(s)
	}
	if strings.Contains(lc, ", so ") || strings.Contains(lc, ", which ") {
		s = adviceTailRE.ReplaceAllString(s, "")
		lc = lowerASCII(s)
	}
	if m := ackLead(lc); m != "" && len(m) < len(s) {
		s, lc = s[len(m):], lc[len(m):]
	}
	if announces(lc) {
		if m := announceLeadRE.FindString(lc); m != "" && len(m) < len(s) && words(s[len(m):]) >= 4 {
			s, lc = s[len(m):], lc[len(m):]
		}
	}
	if strings.Contains(lc, ":") {
		if m := labelLead(lc); m != "" && isLabel(s[:len(m)]) && words(s[len(m):]) >= 6 {
			s, lc = s[len(m):], lc[len(m):]
		}
	}
	if !concernWords.match(lc) || !strings.ContainsAny(lc, ":—–") {
		return s
	}
	if m := concernLeadRE.FindString(lc); m != "" && words(s[len(m):]) >= 4 {
		s = s[len(m):]
	}
	return s
}

// stripRiskLead returns s without the lead that announces its concern
// ("Note:", "I'm worried that", "The catch is"). Each of the three
// patterns is tried only when s has the words it needs: they are slow to
// fail, the second most.
func stripRiskLead(s string) string {
	lc := lowerASCII(s)
	if hasAnyPrefix(lc, "also", "and", "but", "though", "worth", "note", "safety", "watch out", "careful", ",", " ") {
		if loc := riskLeadRE.FindStringIndex(s); loc != nil {
			return s[loc[1]:]
		}
	}
	if containsAny(lc, "worried", "nervous", "concerned", "afraid") && containsAny(lc, "i'm", "i am", "we're", "we are") {
		if loc := riskLeadFeelRE.FindStringIndex(s); loc != nil {
			return s[loc[1]:]
		}
	}
	if !hasWordPrefix(lc, "my", "one", "the", "a", "another", "downside", "caveat", "caveats", "catch", "risk", "i'll") {
		return s
	}
	return unlead(riskLeadNameRE, s)
}

// hasAnyPrefix reports whether s starts with one of prefixes.
func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// proposeLeadRE opens a sentence that proposes a fix rather than raising a
// concern ("I'd keep btree", "Then throttle on lag", "Treat it as …").
var proposeLeadRE = mustPattern(`^(?:i'd|i would|i'll|we'll|let's|then|so|treat|make sure|keep|add|use|set|either|tests?|assert|verify|ensure|since we)\b`)

// weHandleRE is a condition and what we do then: "if the insert fails,
// we return AE …".
var weHandleRE = mustPattern(`^(?:if|when|whenever) [^,]{3,80}, ((?:we|i) (?:then )?[a-z]+.*)$`)

// notConcern reports whether s, though it has a risk word, proposes rather
// than warns: a fix, one of the options on offer, or a user's remark that
// voices no worry.
func notConcern(t *transcript, s sentence) bool {
	lc := lowerASCII(t.riskLeadOf(s))
	if proposeLeadRE.MatchString(lc) && !warnsOtherwise(lc) && !(strings.HasPrefix(lc, "so ") && modalConcern(t, s)) {
		return true
	}
	// "Enable app rollback: …" proposes; "Document it, or users will put
	// the file in the wrong place" warns of what happens without it.
	if (imperative(lc) || !announces(s.lower) && imperative(t.statementOf(s))) && !strings.Contains(lc, ", or ") && !warnsOtherwise(lc) {
		return true
	}
	if s.role == agent.RoleUser {
		return !userConcernRE.MatchString(s.lower)
	}
	if refuseItRE.MatchString(s.lower) {
		return true // "I won't do either — nobody needs your keys": a refusal
	}
	// "If the insert fails, we return AE so the sender retries": what
	// we do when something fails is the handling, not a concern, unless
	// what follows has a risk word of its own.
	if hasWordPrefix(lc, "if", "when", "whenever") {
		if m := weHandleRE.FindStringSubmatch(lc); m != nil && !riskCues.match(m[1]) {
			return true
		}
	}
	if s.bullet && !namesDrawback(s) {
		for _, p := range t.assistantProposals(s.msg) {
			if p.item == s.item && (p.option || p.pathy) {
				return true
			}
		}
	}
	return false
}

// drawbackLeadRE opens a sentence that names a drawback: "The downside is
// that", "The catch:", "The cost is".
var drawbackLeadRE = mustPattern(`^(?:the|one|its|a) (?:main |big |real |only )?(?:downside|catch|cost|drawback|risk|trade-?off|price)s?(?: here)?(?: is(?: that)?|:)\s`)

// namesDrawback reports whether s, a sentence of an option on offer,
// names the option's drawback ("The downside is that a real rebuild then
// needs the flag flipped"): that is a risk of the option, not the option.
func namesDrawback(s sentence) bool {
	if s.first {
		return false
	}
	loc := drawbackLeadRE.FindStringIndex(s.lower)
	return loc != nil && words(s.lower[loc[1]:]) >= 5
}

// concernOnly returns a risk, once its clauses are chosen, without the
// words that announced it as a drawback ("The downside is that") and
// without advice after a semicolon ("…; the callback should log it").
func concernOnly(s string) string {
	s = strings.TrimPrefix(s, "So ") // the conclusion drawn, not the drawing
	if loc := drawbackLeadRE.FindStringIndex(lowerASCII(s)); loc != nil && words(s[loc[1]:]) >= 5 {
		s = s[loc[1]:]
	}
	if r, ok := otherwiseRisk(s); ok {
		return r
	}
	if head, tail, ok := strings.Cut(s, "; "); ok && words(head) >= 5 {
		if lt := lowerASCII(tail); adviceRE.MatchString(lt) || imperative(lt) {
			return head
		}
	}
	return s
}

// otherwiseTailRE splits advice from what happens without it: "add
// format=yuv420p after each scale, otherwise libx264 may pick a 10-bit
// profile", "delete the token or you'll keep sending to it forever".
var otherwiseTailRE = mustPattern(`(?i)(?:[,;]|\s[—–])\s+(?:otherwise|or else)\s+|,?\s+or\s+(?:you'll|you will|it'll|it will|they'll|we'll)\b`)

// withoutVerbs are the verbs of advice whose object, left out, is the
// cause of the harm: "add X, otherwise Z" is "without X, Z".
var withoutVerbs = wordSet(`add use set keep include enable pin apply put pass wrap declare register mock`)

// withoutLeadRE opens a sentence that says what happens when something is
// missing: "Without X, …".
var withoutLeadRE = mustPattern(`^without [^,;:]{3,80}, `)

// warnsOtherwise reports whether lower-cased advice says what happens
// without it: then the advice carries a risk.
func warnsOtherwise(lc string) bool {
	if withoutLeadRE.MatchString(lc) {
		// "Without retry_on, every transient error fails the job for
		// good": what goes wrong when something is missing.
		return !imperative(lc[strings.Index(lc, ", ")+2:])
	}
	if !containsAny(lc, "otherwise", " or else", " or you", " or it", " or they", " or we") {
		return false
	}
	loc := otherwiseTailRE.FindStringIndex(lc)
	// "Enable rollback: the image must call X, otherwise it reverts"
	// explains how the option works; "…, otherwise fall through to an
	// error" is more advice.
	if loc == nil || strings.Contains(lc[:loc[0]], ": ") {
		return false
	}
	sep := lc[loc[0]:loc[1]]
	return !strings.Contains(sep, "otherwise") && !strings.Contains(sep, "else") || !imperative(strings.TrimSpace(lc[loc[1]:]))
}

// otherwiseRisk states advice with what happens without it ("add X after
// each scale, otherwise Z") as the risk: "Without X after each scale, Z";
// or Z alone when the advice is not to add something ("delete the token
// or you'll keep sending to it").
func otherwiseRisk(s string) (string, bool) {
	lc := lowerASCII(s)
	if !imperative(lc) || !warnsOtherwise(lc) {
		return "", false
	}
	loc := otherwiseTailRE.FindStringIndex(s)
	advice, harm := s[:loc[0]], strings.TrimSpace(s[loc[1]:])
	if sep := lowerASCII(s[loc[0]:loc[1]]); !strings.Contains(sep, "otherwise") && !strings.Contains(sep, "else") {
		// "or you'll keep sending": the harm's subject is in the match.
		if k := strings.Index(sep, "or"); k >= 0 {
			harm = strings.TrimSpace(s[loc[0]+k+2:])
		}
	}
	if words(harm) < 4 {
		return "", false
	}
	verb, object, _ := strings.Cut(advice, " ")
	if withoutVerbs[lowerASCII(verb)] && words(object) >= 1 && words(object) <= 12 {
		return "Without " + strings.TrimSpace(object) + ", " + harm, true
	}
	return tidy(harm), true
}

// adviceRE opens a clause that says what someone should do: "the
// callback should log it", "you need to pin it".
var adviceRE = mustPattern(`^(?:[a-z0-9_.()'-]+ ){0,5}(?:should|must|needs to|need to|has to|have to)\b`)

// butRE finds where an option's drawback starts: "…, but installing an
// unrelated package can silently change …".
var butRE = mustPattern(`(?i)[,;]\s+but\s+|\.\s+but\s+|\s+[—–]\s+but\s+`)

// semiRE finds the clause after an option's semicolon.
var semiRE = mustPattern(`;\s+`)

// optionDownside returns the drawback an option on offer comes with, when
// it says what could go wrong ("Plugins win: lets people replace
// built-ins, but installing some unrelated package can silently change how
// every CSV is read"). A drawback is a risk of that option whether or not it
// is chosen: the people choosing weighed it.
func optionDownside(t *transcript, s sentence) (string, bool) {
	if !s.bullet || s.role != agent.RoleAssistant || !strings.Contains(s.lower, "but ") && !strings.Contains(s.lower, "; ") {
		return "", false
	}
	option := false
	for _, p := range t.assistantProposals(s.msg) {
		option = option || p.item == s.item && p.option
	}
	if !option {
		return "", false
	}
	loc := butRE.FindStringIndex(s.plain)
	if loc == nil {
		// "(a) guardian — a row per object; with 400k rows the table
		// gets slow": the clause after the semicolon.
		if loc = semiRE.FindStringIndex(s.plain); loc == nil {
			return "", false
		}
	}
	tail := s.plain[loc[1]:]
	if lt := lowerASCII(tail); words(tail) < 5 || !riskCues.match(lt) || isMitigation(lt) {
		return "", false
	}
	return tail, true
}

// attachMitigations gives each risk the decision that answers it, if the
// conversation agreed one: a decision proposed after the concern was raised,
// in a later message or further on in the same one, that shares at least
// two content words with it (or one rare enough to name the same thing,
// like a file or an identifier; or any one, when the fix came with the
// concern). The decision the concern is about came before it, and is never
// its mitigation.
func attachMitigations(t *transcript, x *agent.Extraction) {
	if len(x.Decisions) == 0 {
		return
	}
	sets := make([]tokenSet, len(x.Decisions))
	for i, d := range x.Decisions {
		sets[i] = newTokenSet(lowerASCII(d.Content))
	}
	for i := range x.Risks {
		r := &x.Risks[i]
		if r.Mitigation != "" || len(r.Sources) == 0 {
			continue
		}
		rs := newTokenSet(lowerASCII(r.Description))
		raised := slices.Min(r.Sources)
		best, bestN := -1, 0
		for k, d := range x.Decisions {
			if len(d.Sources) == 0 {
				continue
			}
			later := slices.Min(d.Sources) > raised
			// A fix the assistant offered after the concern, then agreed.
			together := slices.Contains(d.Sources, raised) && slices.Max(d.Sources) > raised &&
				saidAfter(t, raised, r.Description, d.Content)
			if !later && !together {
				continue
			}
			n := 0
			special := false
			for w := range rs {
				if _, ok := sets[k][w]; ok {
					n++
					special = special || strings.ContainsAny(w, "_./0123456789")
				}
			}
			score := n
			if together {
				score += 2 // offered with the concern: the fix for it
			}
			if n >= 1 && (n >= 2 || special || together) && score > bestN {
				best, bestN = k, score
			}
		}
		if best >= 0 {
			r.Mitigation = oneLine(x.Decisions[best].Content)
		}
	}
}

// saidAfter reports whether message i says decision after concern: where
// their opening words occur, lower-cased. When either cannot be found it
// reports false.
func saidAfter(t *transcript, i int, concern, decision string) bool {
	if i < 0 || i >= len(t.msgs) {
		return false
	}
	m := lowerASCII(withoutEmphasis(t.msgs[i].Content))
	at := func(s string) int {
		f := strings.Fields(lowerASCII(s))
		if len(f) > 3 {
			f = f[:3]
		}
		if len(f) == 0 {
			return -1
		}
		return strings.Index(m, strings.Join(f, " "))
	}
	c, d := at(concern), at(decision)
	return c >= 0 && d > c
}

// injectionNoteRE finds, in an assistant's warning about pasted text, the
// words that say the text addresses AI tools and what it asks of them
// ("contains text addressed to an AI assistant, asking it to", "is an
// instruction aimed at AI tools, telling me to", "reads like a
// prompt-injection attempt — it tells AI tools to").
var injectionNoteRE = mustPattern(`(?i)\s*\b(?:(?:contains|has|is|it's|it is|reads like)\s+)?(?:(?:written|phrased|worded) as\s+)?(?:an?\s+|the\s+)?(?:hidden\s+|html\s+|short\s+)*(?:(?:(?:text|instruction|comment|note|line|message)s?\s+)?(?:addressed to|aimed at|directed at|written for|planted for|meant for)\s+(?:an?\s+|the\s+)?` + aiRE + `|(?:text|instruction|comment|note|line|message)s?\s+(?:to\s+(?:an?\s+|the\s+)?` + aiRE + `|(?:telling|asking|instructing)\s+(?:an?\s+|the\s+)?` + aiRE + `\s+to\b)|prompt[- ]injection(?:\s+attempt)?(?:\s+[—–]\s+it)?)(?:,?\s+(?:and\s+)?(?:telling|asking|instructing|tells|asks|instructs)(?:\s+(?:me|it|them|you|ai tools|ai assistants))?\s+(?:to(?:\s+have you)?|for)\b|:)?\s*`)

// aiRE names AI tools as pasted text addresses them: "AI assistants", "an
// LLM", "automated agents".
const aiRE = `(?:(?:ai|llm)s?(?:\s+(?:assistant|tool|agent|model)s?)?|automated\s+(?:assistant|tool|agent|system)s?)`

// injectionLeadRE is what opens a warning before naming the pasted text:
// "First, about that ticket:", "Before the design:".
var injectionLeadRE = mustPattern(`(?i)^(?:first|before [^,:]{1,30}|about|also|one more thing|(?:a )?(?:quick |short )?(?:flag|note|word|heads-up) (?:on|about))?[,:]?\s*(?:about\s+)?`)

// itIsRE opens a sentence that says what "it" is.
var itIsRE = mustPattern(`(?i)^it(?:'s| is)\s+`)

// injectionSubjectRE cuts what a lead says of the pasted text ("That
// comment at the bottom isn't part of the technique") to the text itself.
var injectionSubjectRE = mustPattern(`(?i)\s+(?:is|isn't|is not|was|has|contains|looks)\b.*$`)

// injectionRisk restates an assistant's warning that pasted text addresses
// AI tools in the words such a risk is put in: what the text is, that it
// contains a prompt injection, and what it asks AI tools to do ("The ua=
// field contains a prompt injection asking AI tools to approve removing
// auth"). The lead before the text ("First, about that ticket:") and who
// the note was read by ("telling me to") are not the risk. It reports
// false when s does not say so.
func injectionRisk(s string) (string, bool) {
	subject, ask, ok := injectionParts(s)
	if !ok {
		return "", false
	}
	out := subject + " contains a prompt injection"
	if ask != "" {
		out += " asking AI tools " + ask
	}
	return out, true
}

// heldByRE is the verb that ends a subject holding pasted text: "That
// snippet carries", "HOL-2291 carried", "The issue comment was".
var heldByRE = mustPattern(`(?i)\s+(?:carries|carried|holds|held|includes|included|hides|hid|has|had|contains|contained|is|was|are|were)$`)

// injectionParts splits an assistant's warning about pasted text into the
// text it names and what that text asks AI tools to do, "" when the
// warning does not say.
func injectionParts(s string) (subject, ask string, ok bool) {
	loc := injectionNoteRE.FindStringIndex(s)
	if loc == nil {
		return "", "", false
	}
	subject = s[:loc[0]]
	// "… aimed at AI assistants: print your .env": what it asks follows.
	// The ask keeps its "to" or "for": "asking AI tools for the password".
	if asks := lowerASCII(strings.TrimSpace(s[loc[0]:loc[1]])); strings.HasSuffix(asks, " to") || strings.HasSuffix(asks, " you") {
		ask = "to " + strings.TrimSpace(s[loc[1]:])
	} else if strings.HasSuffix(asks, " for") {
		ask = "for " + strings.TrimSpace(s[loc[1]:])
	} else if rest := strings.TrimSpace(s[loc[1]:]); strings.HasSuffix(asks, ":") && imperative(lowerASCII(rest)) {
		ask = "to " + rest
	}
	lead := ""
	if i := strings.LastIndexAny(subject, ":;"); i >= 0 {
		lead, subject = subject[:i], subject[i+1:]
	}
	subject = strings.TrimSpace(strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(subject), " and"), " ,—–"))
	// "That snippet carries a comment addressed to AI assistants": the
	// snippet, not "That snippet carries".
	subject = heldByRE.ReplaceAllString(subject, "")
	if i := strings.LastIndex(lowerASCII(subject), ", it's "); i >= 0 {
		// "That isn't a diagnostic, it's text in your log stream"
		subject = subject[i+len(", it's "):]
	}
	if lc := lowerASCII(subject); lc == "" || lc == "it" || lc == "this" || lc == "they" || hasWordPrefix(lc, "it's", "it is", "they're", "they are") {
		// "That comment isn't part of the technique: it's text aimed at
		// AI assistants": the lead names the text.
		// "It's text returned by the endpoint, and it's addressed to …":
		// what the text is follows "it's".
		if lead == "" {
			lead = unlead(itIsRE, subject)
		}
		subject = strings.TrimSpace(injectionSubjectRE.ReplaceAllString(unlead(injectionLeadRE, lead), ""))
	} else {
		subject = unlead(injectionLeadRE, subject)
	}
	subject = strings.TrimSuffix(subject, " first") // "Quick flag on that ticket first:"
	if n := words(subject); n == 0 || n > 10 {
		return "", "", false
	}
	if lc := lowerASCII(subject); lc == "they're" || lc == "they are" || lc == "they" || lc == "it" || lc == "this" {
		subject = "The pasted text" // "They're an instruction planted for an AI assistant"
	}
	return subject, ask, true
}

// injectionImpactRE opens the sentence that says what a prompt injection
// in pasted text shows about where the text came from ("It does mean
// something can write notes into your tickets").
var injectionImpactRE = mustPattern(`(?i)^(?:but |and |so )?(?:it|this|that) (?:does |also )?(?:means?|shows?)(?: that)?\s+`)

// injectionRiskAt states the risk of sentence k of ss, an assistant's
// warning that pasted text addresses AI tools. When a later sentence of the
// same paragraph draws what the injection shows ("It does mean a client can
// put arbitrary text into your logs"), that is the risk, with the text it
// came in: the weakness, not the instruction. It returns the index of the
// sentence it read the risk from.
func injectionRiskAt(ss []sentence, k int) (string, int, bool) {
	subject, _, ok := injectionParts(ss[k].plain)
	if !ok {
		return "", k, false
	}
	for j := k + 1; j < len(ss) && j <= k+3 && ss[j].item == ss[k].item; j++ {
		loc := injectionImpactRE.FindStringIndex(ss[j].plain)
		if loc == nil {
			continue
		}
		impact := strings.TrimSpace(adviceTailRE.ReplaceAllString(ss[j].plain[loc[1]:], ""))
		if words(impact) < 4 {
			break
		}
		return tidy(impact) + "; " + lowerFirst(subject) + " contains a prompt injection", j, true
	}
	r, _ := injectionRisk(ss[k].plain)
	return tidy(r), k, true
}

// falseAlarm reports whether s, though it has a word of risk, states no
// concern: the bad outcome is what it withstands ("even if a query
// forgets the filter"), a check failing is what the check is for ("a lint
// that fails when a flag has expired"), the word names a state the design
// works with ("return the stale value"), "otherwise" leads to more
// advice, or the word is inside a quoted message or inline code.
func falseAlarm(s sentence) bool {
	return avoidsOnly(s.lower) || checkFails(s.lower) || stateOnly(s.lower) || otherwiseDoes(s.lower) || quotedOnly(s.lower) ||
		codeOnly(s.raw)
}

// inlineCodeRE finds a span of inline code.
var inlineCodeRE = mustPattern("`[^`]+`")

// codeOnly reports whether the only words of risk in a sentence, as
// written, are inside inline code: "`destroySession` and redirect" names
// a function, not a harm.
func codeOnly(raw string) bool {
	return strings.Contains(raw, "`") && riskCues.match(lowerASCII(raw)) && !riskCues.match(lowerASCII(inlineCodeRE.ReplaceAllString(raw, " ")))
}

// quotedRE finds text of five words or more in double quotes: a log
// line, an error message.
var quotedRE = mustPattern(`"[^"]*(?:\s[^"\s]+){4}[^"]*"|“[^”]*(?:\s[^”\s]+){4}[^”]*”`)

// quotedOnly reports whether the only words of risk in a lower-cased
// sentence are inside a quoted message: 'both log "no key passed;
// restarts can cause duplicates"' says what a message reads, not what
// could go wrong. A short quote ('looks like "sync is broken"') is the
// speaker's own words.
func quotedOnly(lower string) bool {
	return strings.ContainsAny(lower, "\"“") && !riskCues.match(quotedRE.ReplaceAllString(lower, ""))
}

// otherwiseWordRE finds "otherwise" and the clause after it.
var otherwiseWordRE = mustPattern(`\botherwise,?\s*([^,;:]*)`)

// otherwiseDoes reports whether the only word of risk in a lower-cased
// sentence is an "otherwise" that says what to do in the other case ("if
// it has a deadline, keep it; otherwise wrap it with the default"), not
// what goes wrong.
func otherwiseDoes(lower string) bool {
	if !strings.Contains(lower, "otherwise") {
		return false
	}
	for _, m := range otherwiseWordRE.FindAllStringSubmatch(lower, -1) {
		if !imperative(m[1]) {
			return false
		}
	}
	return !riskCues.match(otherwiseWordRE.ReplaceAllString(lower, ""))
}

// stateWordRE finds words of risk that describe a state a design works
// with as often as a harm it suffers: a cache serves "the stale value" on
// purpose.
var stateWordRE = mustPattern(`\b(?:stale|bugs?)\b`)

// stateOnly reports whether the only words of risk in a lower-cased
// sentence describe a state ("return the stale value now").
func stateOnly(lower string) bool {
	return stateWordRE.MatchString(lower) && !riskCues.match(stateWordRE.ReplaceAllString(lower, ""))
}

// contrastRE finds where a sentence turns to what it avoids or withstands:
// "rather than", "even if", or a purpose that rules a harm out for
// everyone ("so nobody forgets it").
var contrastRE = mustPattern(`\b(?:rather than|even if|even when|so (?:that )?(?:nobody|no one))\b`)

// avoidsOnly reports whether a lower-cased sentence names a bad outcome
// only after "rather than", "even if" or "so nobody": "The database
// refuses those rows even if a query forgets the filter" says what is
// safe, not what could go wrong. A purpose that rules out one harm ("so
// a crash can't leave a half-written file") still names the risk the
// change answers.
func avoidsOnly(lower string) bool {
	if !containsAny(lower, "rather than", "even if", "even when", "so nobody", "so no one", "so that no") {
		return false
	}
	loc := contrastRE.FindStringIndex(lower)
	if loc == nil {
		return false
	}
	// The contrast runs to the end of its clause: "keep the cache even if
	// it is cold: a restart will otherwise stampede the database" warns
	// after it.
	end := len(lower)
	if i := strings.IndexAny(lower[loc[1]:], ",;:—–("); i >= 0 {
		end = loc[1] + i
	}
	return !riskCues.match(lower[:loc[0]]+" "+lower[end:]) && riskCues.match(lower[loc[1]:end])
}

// checkFailsRE finds a check whose failing is the point (a test, lint,
// assertion or CI step that fails), or failing that is wanted or ruled
// out ("should fail loudly", "won't fail the run").
var checkFailsRE = mustPattern(`\b(?:tests?|lint|linter|check|assert\w*|ci step|spec|job)\b[^;]*\bfail(?:s|ing)?\b|\b(?:should|won't|will not|doesn't|does not|wouldn't) fail\b`)

// failWordRE finds a form of "fail".
var failWordRE = mustPattern(`\bfail(?:s|ed|ing)?\b`)

// checkFails reports whether the only word of risk in a lower-cased
// sentence is a check failing, which is how a check works ("A Playwright
// test that fails on any hydration warning" is a plan, not a risk), or a
// failure wanted or ruled out. A test that "fails 1 in 10 times" because
// of a race has a risk word of its own.
func checkFails(lower string) bool {
	return strings.Contains(lower, "fail") && checkFailsRE.MatchString(lower) &&
		!riskCues.match(failWordRE.ReplaceAllString(lower, ""))
}

// relativeClause reports whether a clause of a sentence opens with
// "which": it speaks of the clause before it, and makes no risk without
// it.
func relativeClause(p string) bool {
	return hasWordPrefix(lowerASCII(strings.TrimSpace(p)), "which")
}

// withClausesBefore returns clause i of s, split by riskClauseRE into
// parts, with the clause before it as written, and the one before that
// too when that clause is short or follows a colon ("can set
// X-Client-Type: mobile and read the token out").
func withClausesBefore(s string, parts []string, i int) string {
	seps := riskClauseRE.FindAllStringIndex(s, -1)
	from := i - 1
	if from > 0 && (words(parts[from]) < 6 || s[seps[from-1][0]] == ':') {
		from--
	}
	start, end := 0, len(s)
	if from > 0 {
		start = seps[from-1][1]
	}
	if i < len(seps) {
		end = seps[i][0]
	}
	return s[start:end]
}
